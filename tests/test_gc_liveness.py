"""`decathlon gc` never takes a live run's sandboxes, whatever lease folder it looks in: a run's sandboxes
say where its lease is and which process holds it (decathlon.backends.leases), and gc says per run what it
removed or left alone, and why."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from lines import readline
from conftest import MINI, REPO
from decathlon.backends import leases
from decathlon.backends.local import LocalBackend

# A run in a process of its own, its lease in the folder its environment names: two episodes' sandboxes,
# then it waits on stdin (so it lives exactly as long as the test wants).
HOLDER = """
import asyncio, sys
sys.path.insert(0, {repo!r})
from pathlib import Path
from decathlon.backends.base import SandboxSpec
from decathlon.backends.local import LocalBackend
from decathlon.core.lifecycle import acquire
async def main():
    for ep in ("a", "b"):
        await acquire(LocalBackend(), SandboxSpec({run!r}, f"ep-{{ep}}-" + {run!r}, "project-deadlines", Path({mini!r})))
asyncio.run(main())
print("acquired", flush=True)
sys.stdin.read()
"""


def _start_run(tmp_path: Path, lease_dir: Path) -> tuple[subprocess.Popen, str]:
    run = "live-" + uuid.uuid4().hex[:8]
    env = {**os.environ, "DECATHLON_LOCAL_DIR": str(tmp_path / "boxes"), "DECATHLON_LEASE_DIR": str(lease_dir)}
    proc = subprocess.Popen([sys.executable, "-c", HOLDER.format(repo=str(REPO), run=run, mini=str(MINI))],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    line = readline(proc, what="the holder's `acquired`").strip()
    if line != "acquired":
        proc.kill()
        proc.wait()
        pytest.fail(f"the run did not start: {line!r}")
    return proc, run


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)  # as a crashed run dies: no handler releases anything
    proc.wait()


def _boxes(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "boxes").glob("decathlon-ep-*"))


def _gc_elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """gc on the local backend, with a lease folder (B) that is not the run's (A)."""
    monkeypatch.setenv("DECATHLON_LOCAL_DIR", str(tmp_path / "boxes"))
    monkeypatch.setenv("DECATHLON_LEASE_DIR", str(tmp_path / "B"))
    return asyncio.run(LocalBackend().collect({})).to_json()


def test_gc_with_another_lease_folder_leaves_a_live_run_alone_and_says_why(tmp_path, monkeypatch):
    proc, run = _start_run(tmp_path, tmp_path / "A")
    try:
        lease = (tmp_path / "A" / f"{run}.lease").absolute()
        gc = _gc_elsewhere(tmp_path, monkeypatch)
        assert (gc["removed"], gc["skipped_live"], gc["skipped_foreign"]) == (0, 2, 0)
        assert gc["runs"] == [{"run": run, "action": "skipped", "why": f"lease {lease} held by a running process",
                               "sandboxes": 2}]
        assert len(_boxes(tmp_path)) == 2
        labels = json.loads((_boxes(tmp_path)[0] / "labels.json").read_text())
        assert labels[leases.LEASE_LABEL] == str(lease)
        assert labels[leases.PROCESS_LABEL].split(":")[-3] == str(proc.pid)

        # The lease file gone (a cache cleaner, say): the run's process still says it is live.
        lease.unlink()
        gc = _gc_elsewhere(tmp_path, monkeypatch)
        assert gc["skipped_live"] == 2 and gc["runs"][0]["why"] == f"process {proc.pid} still running"
        assert proc.poll() is None and len(_boxes(tmp_path)) == 2
    finally:
        _stop(proc)


def test_a_dead_run_is_removed_and_listed_with_its_reason(tmp_path, monkeypatch):
    proc, run = _start_run(tmp_path, tmp_path / "A")
    _stop(proc)
    lease = (tmp_path / "A" / f"{run}.lease").absolute()
    gc = _gc_elsewhere(tmp_path, monkeypatch)
    assert (gc["removed"], gc["skipped_live"]) == (2, 0)
    [entry] = gc["runs"]
    assert entry["run"] == run and entry["action"] == "removed" and entry["sandboxes"] == 2
    assert f"lease {lease} not held by any process" in entry["why"]
    assert f"process {proc.pid} gone" in entry["why"]
    assert _boxes(tmp_path) == []


def test_gc_command_prints_each_run_and_why(tmp_path):
    live, live_run = _start_run(tmp_path, tmp_path / "A")
    dead, dead_run = _start_run(tmp_path, tmp_path / "A")
    _stop(dead)
    try:
        env = {**os.environ, "DECATHLON_LOCAL_DIR": str(tmp_path / "boxes"), "DECATHLON_LEASE_DIR": str(tmp_path / "B")}
        proc = subprocess.run([sys.executable, "-m", "decathlon", "gc", "--backend", "local"], cwd=REPO,
                              capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert (out["removed"], out["skipped_live"], out["skipped_foreign"]) == (2, 2, 0)
        assert [(r["run"], r["action"]) for r in out["runs"]] == sorted([(live_run, "skipped"), (dead_run, "removed")])
        assert f"skipped 2 sandbox(es) of run {live_run}: lease " in proc.stderr
        assert f"removed 2 sandbox(es) of run {dead_run}: lease " in proc.stderr
        assert live.poll() is None
    finally:
        _stop(live)


def _mine(run: str, process: str) -> dict[str, str]:
    return {leases.OWNER_LABEL: leases.owner(), leases.RUN_LABEL: run, leases.PROCESS_LABEL: process}


def _my_identity(tmp_path, monkeypatch, prefix: str) -> tuple[str, list[str]]:
    """A fresh run id, with the lease folder in tmp_path, and this process's identity as its four parts."""
    monkeypatch.setenv("DECATHLON_LEASE_DIR", str(tmp_path))
    me = leases.process_identity(os.getpid())
    assert me is not None
    return prefix + uuid.uuid4().hex[:8], me.rsplit(":", 3)


def test_a_recycled_pid_is_not_the_run(tmp_path, monkeypatch):
    run, (host, pid, start, boot) = _my_identity(tmp_path, monkeypatch, "recycled-")
    me = f"{host}:{pid}:{start}:{boot}"
    assert leases.judge(_mine(run, me), False) == leases.Verdict("live", f"process {pid} still running")
    recycled = f"{host}:{pid}:{int(start) + 1}:{boot}"  # same pid, another process's start time
    verdict = leases.judge(_mine(run, recycled), False)
    assert verdict.keep is None and f"process {pid} gone (the pid is now another process's)" in verdict.why


def test_another_hosts_process_and_unlabelled_sandboxes_are_judged_by_the_lease_folder(tmp_path, monkeypatch):
    run, (_, pid, start, boot) = _my_identity(tmp_path, monkeypatch, "old-")
    elsewhere = leases.judge(_mine(run, f"some-other-host:{pid}:{start}:{boot}"), False)
    assert elsewhere == leases.Verdict(None, f"no lease at {tmp_path.absolute() / (run + '.lease')}")
    old = {leases.OWNER_LABEL: leases.owner(), leases.RUN_LABEL: run}
    assert leases.collectable(old, False) is None
    assert leases.sandbox_labels(run) == {}, "a process that never took the run's lease does not label for it"
