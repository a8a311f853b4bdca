"""End to end through the real `vf-eval` CLI: the decathlon taskset, served oracles, the local backend.

No model and no network besides loopback: `decathlon serve-policy` plays the model, `--no-push`
(and PRIME_RUNS_MODE=disabled) keeps the run off the platform.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from decathlon.tasks import MINI, catalogue

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# vf-eval imports a taskset by top-level module name: the package itself exports the taskset.
TASKSET_ID = "decathlon"
LAUNCH = "2026-03-02 09:00:00"
TIMEOUT = 900

pytestmark = pytest.mark.slow


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ,
            "DECATHLON_TEST_KEY": "dummy",  # the model client wants a key; the oracle server ignores it
            "PRIME_RUNS_MODE": "disabled",  # belt and braces with --no-push: no platform run at all
            "DECATHLON_LOCAL_DIR": str(tmp / "sandboxes")}  # so the test can see every sandbox went away


@pytest.fixture
def serve() -> Iterator[Callable[[Path], str]]:
    """Start `decathlon serve-policy` on a free port for a source; yields its base URL."""
    procs: list[subprocess.Popen] = []

    def start(source: Path) -> str:
        proc = subprocess.Popen([str(BIN / "decathlon"), "serve-policy", "--source", str(source), "--port", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
        procs.append(proc)
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/v1", line)
        assert url, f"serve-policy did not start: {line}{proc.stderr.read() if proc.poll() is not None else ''}"
        return url.group(0)

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _vf_eval(url: str, out: Path, tmp: Path, *extra: str) -> subprocess.Popen:
    argv = [str(BIN / "vf-eval"), TASKSET_ID, "--no-push", "--no-rich",
            "--env.agent.runtime.type", "subprocess",
            "--client.base-url", url, "--client.api-key-var", "DECATHLON_TEST_KEY",
            "-m", "oracle", "-o", str(out), *extra]
    log = open(tmp / f"vf-eval-{out.name}.log", "w")
    return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=tmp, env=_env(tmp))


def _wait(proc: subprocess.Popen, tmp: Path, out: Path) -> None:
    try:
        code = proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log = (tmp / f"vf-eval-{out.name}.log").read_text(errors="replace")
    assert code == 0, f"vf-eval exited {code}:\n{log[-4000:]}"


def _traces(out: Path) -> dict[str, dict]:
    files = list(out.glob("*/traces.jsonl"))
    assert len(files) == 1, files
    traces = {}
    for line in files[0].read_text().splitlines():
        for trace in json.loads(line)["traces"]:
            traces[trace["task"]["data"]["task"]] = trace
    return traces


def _reward(trace: dict) -> float:
    return sum(r["score"] * r["weight"] for r in trace["rewards"].values() if r is not None)


def test_oracles_score_one_through_vf_eval_as_with_decathlon_run(serve, tmp_path: Path) -> None:
    url = serve(MINI)
    out = tmp_path / "vf"
    vf = _vf_eval(url, out, tmp_path, "--env.taskset.task.launch-time", LAUNCH,
                  "--env.taskset.task.out", str(tmp_path / "artifacts"))
    # The reference episode loop, run at the same time on the same tasks and clock.
    ref = subprocess.run([str(BIN / "decathlon"), "run", "--all", "--source", str(MINI), "--policy", "oracle",
                          "--launch-time", LAUNCH, "--json", "--concurrency", "4"],
                         capture_output=True, text=True, cwd=REPO, env=_env(tmp_path), timeout=TIMEOUT)
    _wait(vf, tmp_path, out)
    assert ref.returncode == 0, ref.stderr[-3000:]
    expected = {r["task"]: r for r in map(json.loads, ref.stdout.splitlines())}

    traces = _traces(out)
    assert set(traces) == {t.id for t in catalogue(MINI)} == set(expected)
    for name, trace in traces.items():
        assert trace["ok"], (name, trace["errors"])
        assert trace["rewards"]["passed"] == {"score": 1.0, "weight": 1.0}, name
        assert _reward(trace) == 1.0 == expected[name]["reward"], name
        # Dense metrics ride on the trace exactly as the evaluator reported them.
        assert {k: v for k, v in trace["metrics"].items() if v is not None} == expected[name]["metrics"], name
        assert trace["info"]["decathlon"]["status"] == "success"
        assert trace["info"]["decathlon"]["launch_time"].startswith(LAUNCH)
        assert trace["info"]["decathlon"]["tool_calls"] == expected[name]["tool_calls"], name
        result = json.loads(next((tmp_path / "artifacts" / name).glob("*/result.json")).read_text())
        assert result["pass"] is True and result["status"] == "success"
    assert not any((tmp_path / "sandboxes").iterdir()), "a sandbox outlived its rollout"


def _broken_source(root: Path) -> Path:
    """A throwaway Toolathlon root: one task without an evaluator, one needing a server nobody defines."""
    (root / "configs" / "mcp_servers").mkdir(parents=True)
    (root / "oracles").mkdir()
    for name, servers in (("no-evaluator", []), ("no-such-server", ["nowhere"]), ("kills-its-daemon", [])):
        task = root / "tasks" / "finalpool" / name
        (task / "docs").mkdir(parents=True)
        (task / "task_config.json").write_text(json.dumps({"needed_mcp_servers": servers,
                                                           "needed_local_tools": ["claim_done", "python_execute"]}))
        (task / "docs" / "task.md").write_text(f"Claim the task {name} done.\n")
        (task / "docs" / "agent_system_prompt.md").write_text("Your workspace: !!<<<<||||workspace_dir||||>>>>!!.\n")
        steps = [{"tool": "local-claim_done", "arguments": {}}]
        if name == "kills-its-daemon":  # an agent that takes its own sandbox down, then calls a tool
            steps.insert(0, {"tool": "local-python-execute", "arguments": {"code": KILL_DAEMON}})
        (root / "oracles" / f"{name}.json").write_text(json.dumps({"task": name, "steps": steps, "final": "Done."}))
    return root


KILL_DAEMON = ("import os, signal\n"
               "os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)\n")  # python-execute's parent: the daemon


def test_infra_errors_fail_the_rollout_instead_of_scoring_zero(serve, tmp_path: Path) -> None:
    source = _broken_source(tmp_path / "source")
    url = serve(source)
    out = tmp_path / "vf"
    vf = _vf_eval(url, out, tmp_path, "--env.taskset.source", str(source), "--env.taskset.task.launch-time", LAUNCH)
    _wait(vf, tmp_path, out)
    traces = _traces(out)
    assert set(traces) == {"no-evaluator", "no-such-server", "kills-its-daemon"}

    for name, kind, phase in (("no-evaluator", "evaluator_missing", "evaluate"),
                              ("no-such-server", "unknown_server", "setup")):
        trace = traces[name]
        assert trace["ok"] is False, name
        assert trace["errors"][-1]["type"] == "InfraError", name
        assert trace["errors"][-1]["message"].startswith(f"{kind}: "), name
        assert trace["info"]["infra_error"]["kind"] == kind and trace["info"]["infra_error"]["phase"] == phase
        # Masked, not scored: no reward holds a number (a 0.0 would read as a task failure).
        assert all(r is None for r in trace["rewards"].values()), (name, trace["rewards"])
    # The agent did run and claim done before the evaluator was found missing.
    assert traces["no-evaluator"]["info"]["decathlon"]["status"] == "success"
    assert traces["no-such-server"]["stop_condition"] == "infra_error"
    assert not any((tmp_path / "sandboxes").iterdir()), "a sandbox outlived its rollout"

    # After the agent acted, its sandbox failing is its own doing: scored 0 (ok), not masked.
    killed = traces["kills-its-daemon"]
    assert killed["ok"] is True, killed["errors"]
    assert killed["rewards"]["passed"] == {"score": 0.0, "weight": 1.0}
    assert killed["info"]["failure"]["kind"] in ("daemon_died", "no_session") and "infra_error" not in killed["info"]
    assert killed["info"]["decathlon"]["status"] == "failed"
