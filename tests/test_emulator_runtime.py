"""Every emulator process and the SaaS front run on one runtime (decathlon.emulators.kit.runtime): the same command
line, ready line, signals and exit codes, whatever they serve with."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from conftest import REPO
from decathlon.emulators import registry
from decathlon.emulators.kit import runtime, spawn
from lines import readline
from tests.saas_venv import saas_python

NAMES = [*(v.name for v in registry.vendors()), "front"]


def _python(name: str) -> str:
    front = name == "front" or registry.get(name).reach == "front"
    return str(saas_python()) if front and name != "front" else sys.executable


def _run(name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([_python(name), "-m", f"decathlon.emulators.{name}", *args], capture_output=True, text=True,
                          timeout=60, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.mark.parametrize("name", NAMES)
def test_every_emulator_takes_the_same_command_line(name, tmp_path):
    helped = _run(name, "--help")
    assert helped.returncode == 0
    for option in ("--root", "--host", "--port", "--control"):
        assert option in helped.stdout, (name, option)
    bad = _run(name, "--root", str(tmp_path), "--port", "nowhere=1", *(
        ["--home", str(tmp_path), "--logs", str(tmp_path)] if name == "front" else []))
    assert bad.returncode == runtime.USAGE and "--port takes NAME=N" in bad.stderr and bad.stdout == "", (name, bad.stderr)


@pytest.mark.parametrize("name", [v.name for v in registry.service_vendors()])
def test_a_seed_root_it_cannot_use_is_a_usage_error_said_in_one_line(name, tmp_path):
    got = _run(name, "--root", str(tmp_path / "nowhere"))
    assert got.returncode == runtime.USAGE and got.stdout == ""
    assert got.stderr.startswith(f"{name}: ") and "users_data.json" in got.stderr and "Traceback" not in got.stderr


def test_the_front_has_no_state_for_a_control_socket(tmp_path):
    got = _run("front", "--root", str(tmp_path), "--home", str(tmp_path), "--logs", str(tmp_path),
               "--control", str(tmp_path / "c.sock"))
    assert got.returncode == runtime.USAGE and "no state" in got.stderr


def test_a_single_port_emulator_takes_a_bare_port_and_says_it_on_its_ready_line(tmp_path):
    proc = subprocess.Popen([str(saas_python()), "-m", "decathlon.emulators.gcplogging", "--root", str(tmp_path),
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        ports = spawn.parse_ready(readline(proc).decode(), "gcplogging")
        assert list(ports) == ["grpc"] and ports["grpc"] > 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == runtime.OK
    finally:
        proc.kill()


@pytest.mark.parametrize("line,why", [
    ("ready mail", "instead of"), ("ready canvas {}", "instead of"), ("ready mail {}", "no usable port"),
    ("ready mail [1]", "not a JSON object"), ('ready mail {"imap": 0}', "no usable port"),
    ('ready mail {"imap": "x"}', "not a JSON object"), ("Traceback (most recent call last):", "instead of")])
def test_a_line_that_is_not_a_ready_line_is_named(line, why):
    with pytest.raises(spawn.NotReady, match=why):
        spawn.parse_ready(line, "mail")
