"""Shared fixtures: the task-api command, and throwaway Toolathlon-layout sources for bad-input cases."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance import modules, require

# A test run started in the background of a non-interactive shell (`ci/test &`, nohup) inherits SIGINT
# ignored, and so would every command a test starts: the tests of Ctrl-C handling would see it ignored.
# Each worker takes Python's own handler back, so the commands it starts get the default disposition.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# As root, the local backend runs each episode as unprivileged users of its own (decathlon/backends/
# local_users.py), which must read the throwaway task sources tests write under pytest's temporary
# folders; pytest makes every one of those 0700. Each is opened to reading (and its parents to passing).
if os.geteuid() == 0:
    _mktemp = pytest.TempPathFactory.mktemp

    def _readable_mktemp(self, basename: str, numbered: bool = True) -> Path:
        path = _mktemp(self, basename, numbered)
        os.chmod(path, 0o755)
        for parent in path.parents:
            if parent == Path(tempfile.gettempdir()) or parent == parent.parent:
                break
            if parent.stat().st_uid == 0:
                os.chmod(parent, parent.stat().st_mode & 0o777 | 0o011)
        return path

    pytest.TempPathFactory.mktemp = _readable_mktemp

REPO = Path(__file__).resolve().parents[1]
MINI = REPO / "fixtures" / "toolathlon-mini"
LAUNCH = "2026-03-02 09:00:00"
TEST_SERVERS = Path(__file__).resolve().parent / "servers"


def need_emails_mcp() -> Path:
    """The installed emails-mcp (Python >= 3.12). Absent, the test skips saying how to install it; where CI
    builds the portable Python 3.13 and the servers on it (DECATHLON_REQUIRE_PY313=1), it fails instead."""
    from decathlon.sandbox.servers_config import default_servers_dir
    path = default_servers_dir() / "emails" / "bin" / "emails-mcp"
    if not path.is_file():
        how = f"emails-mcp is not installed at {path}: run ci/install_servers.py (needs a Python >= 3.12)"
        pytest.fail(how) if os.environ.get("DECATHLON_REQUIRE_PY313") == "1" else pytest.skip(how)
    return path


@dataclass
class TaskApi:
    home: Path

    def run(self, *args: str, timeout: float = 120) -> tuple[int, dict]:
        env = {**os.environ, "TASK_API_HOME": str(self.home)}
        proc = subprocess.run([sys.executable, "-m", "decathlon.sandbox", *args], env=env, capture_output=True, text=True,
                              timeout=timeout)
        lines = [line for line in proc.stdout.split("\n") if line.strip()]
        assert len(lines) == 1, f"task-api must print exactly one JSON object, got: {proc.stdout!r} {proc.stderr!r}"
        return proc.returncode, json.loads(lines[0])

    def ok(self, *args: str, timeout: float = 120) -> dict:
        code, out = self.run(*args, timeout=timeout)
        assert code == 0, out
        return out

    def error(self, *args: str, timeout: float = 120) -> dict:
        code, out = self.run(*args, timeout=timeout)
        assert code != 0, out
        assert set(out) == {"error"} and set(out["error"]) == {"kind", "message"}, out
        return out["error"]


@pytest.fixture(scope="session")
def imported(tmp_path_factory) -> Path:
    """The recorded Toolathlon runs imported as a task source (see recorded_runs.py)."""
    from recorded_runs import import_runs
    return import_runs(tmp_path_factory)


@pytest.fixture
def task_api(tmp_path: Path):
    api = TaskApi(tmp_path / "home")
    yield api
    api.run("teardown")


def write_task(source: Path, name: str, *, servers: list[str] | None = None, local_tools: list[str] | None = None,
               preprocess: str | None = None, evaluator: str | None = None, prompt: str = "Do the thing.",
               system: str = "Work in !!<<<<||||workspace_dir||||>>>>!!.", files: dict[str, str] | None = None) -> Path:
    task = source / "tasks" / "finalpool" / name
    (task / "docs").mkdir(parents=True)
    (task / "task_config.json").write_text(json.dumps({"needed_mcp_servers": servers or [],
                                                      "needed_local_tools": local_tools or ["claim_done"]}))
    (task / "docs" / "task.md").write_text(prompt)
    (task / "docs" / "agent_system_prompt.md").write_text(system)
    if preprocess is not None:
        (task / "preprocess").mkdir()
        (task / "preprocess" / "main.py").write_text(textwrap.dedent(preprocess))
    if evaluator is not None:
        (task / "evaluation").mkdir()
        (task / "evaluation" / "main.py").write_text(textwrap.dedent(evaluator))
    for rel, text in (files or {}).items():
        path = task / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return task


def write_server(source: Path, name: str, command: str, args: list[str], env: dict | None = None,
                 timeout: float = 60) -> None:
    folder = source / "configs" / "mcp_servers"
    folder.mkdir(parents=True, exist_ok=True)
    import yaml
    (folder / f"{name}.yaml").write_text(yaml.safe_dump({
        "type": "stdio", "name": name, "params": {"command": command, "args": args, "env": env or {}},
        "client_session_timeout_seconds": timeout}))


PASSING_EVALUATOR = """
import argparse, sys
p = argparse.ArgumentParser()
for a in ("--res_log_file", "--agent_workspace", "--groundtruth_workspace", "--launch_time"):
    p.add_argument(a)
p.parse_args()
print("ok")
sys.exit(0)
"""


@pytest.fixture
def source(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    (root / "configs" / "mcp_servers").mkdir(parents=True)
    (root / "tasks" / "finalpool").mkdir(parents=True)
    return root


# Outcome digests: every test's outcome (and the per-case digest a test records with
# record_property("digest", …)), sorted by node id, so runs with different worker counts compare.
_OUTCOMES: dict[str, dict] = {}


def pytest_addoption(parser):
    parser.addoption("--outcome-digest", default=None, metavar="FILE",
                     help="write each test's outcome and recorded digest, and a digest of them all, to FILE")
    parser.addoption("--outcome-digest-scope", default=None, metavar="PATH",
                     help="only the tests of PATH (a node id prefix, e.g. tests/test_toolathlon_suite.py) go into "
                          "the digest: a run of the whole suite then gives the same digest as a run of PATH alone")


_DIGEST_SCOPE: list[str] = []


def pytest_configure(config):
    scope = config.getoption("--outcome-digest-scope")
    if scope:
        _DIGEST_SCOPE.append(scope)


def pytest_runtest_logreport(report):
    if _DIGEST_SCOPE and not report.nodeid.startswith(_DIGEST_SCOPE[0]):
        return
    if report.when == "call" or report.outcome != "passed":
        entry = _OUTCOMES.setdefault(report.nodeid, {})
        entry[report.when] = report.outcome
        digest = dict(report.user_properties).get("digest")
        if digest:
            entry["digest"] = digest


def pytest_sessionfinish(session):
    path = session.config.getoption("--outcome-digest")
    if not path or hasattr(session.config, "workerinput"):  # the xdist controller writes it, once
        return
    import hashlib
    body = json.dumps(dict(sorted(_OUTCOMES.items())), sort_keys=True)
    Path(path).write_text(json.dumps({"sha256": hashlib.sha256(body.encode()).hexdigest(), "tests": len(_OUTCOMES),
                                      "outcomes": json.loads(body)}, indent=1, sort_keys=True))


# A skip for want of a tool that ci/test installs is a hole in CI's coverage, not a reason: under CI (CI=true, as
# .ci/run runs) such a skip is a failure. (The tests that skip this way cannot all be edited here: the SaaS
# front's curl tests are another team's, hence this hook rather than a change to their markers.)
CI_MUST_HAVE = {"curl is not installed": "ci/test installs curl (apt-get install curl)"}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or os.environ.get("CI") != "true" or not isinstance(report.longrepr, tuple):
        return
    reason = str(report.longrepr[2])
    for missing, how in CI_MUST_HAVE.items():
        if missing in reason:
            report.outcome = "failed"
            report.longrepr = f"skipped under CI ({reason}): {how}"


# The backends that run a real sandbox here (local; compose where Docker is).
SANDBOXES = [pytest.param(m, id=m.NAME, marks=m.MARKS) for m in modules() if m.NAME in ("local", "compose")]


@pytest.fixture(params=SANDBOXES)
def backend(request, tmp_path):
    """A test of an attack runs once per such backend (a module may define its own `backend`)."""
    require(request.param)
    with request.param.backend(tmp_path) as b:
        yield b
