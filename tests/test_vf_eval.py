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
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lines import readline
from conftest import PASSING_EVALUATOR
from decathlon.checkout.tasks import MINI, catalogue

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
        line = readline(proc, what="serve-policy's URL")
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
    vf = _vf_eval(url, out, tmp_path, "--env.taskset.source", str(source), "--env.taskset.task.launch-time", LAUNCH,
                  "--env.taskset.runs", "all")  # no-such-server is not graded here: loaded only when asked for
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


# The model endpoint's 400 for a conversation longer than its context, as vLLM words it.
VLLM_OVERFLOW = {"object": "error", "type": "BadRequestError", "param": None, "code": 400,
                 "message": "This model's maximum context length is 32768 tokens. However, you requested 48213 "
                            "tokens (48213 in the messages, 0 in the completion). Please reduce the length of the "
                            "messages or completion."}
BAD_SCHEMA = {"error": {"message": "invalid tool schema: tools[0].function.parameters is not a valid JSON Schema",
                        "type": "invalid_request_error", "param": "tools", "code": "invalid_tool_schema"}}


class _FloodingModel(BaseHTTPRequestHandler):
    """A chat-completions endpoint whose first turn floods the context (a tool output of 95k characters);
    every later request is refused with HTTP 400: as too long in task `overflows`, else for its tools."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        messages = body["messages"]
        if not any(m.get("role") == "assistant" for m in messages):
            call = {"id": "call_1", "type": "function", "function": {
                "name": "local-python-execute", "arguments": json.dumps({"code": "print('x' * 95_000)"})}}
            self._send(200, {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
                             "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": None,
                                          "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
                             "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})
        else:
            task = next(m["content"] for m in messages if m["role"] == "user")
            self._send(400, VLLM_OVERFLOW if "overflows" in task else BAD_SCHEMA)

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def flooding_model() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FloodingModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_context_the_policy_overflowed_scores_zero_other_refusals_stay_infra_errors(flooding_model,
                                                                                       tmp_path: Path) -> None:
    root = tmp_path / "source"
    (root / "configs" / "mcp_servers").mkdir(parents=True)
    for name in ("overflows", "refused-tools"):
        task = root / "tasks" / "finalpool" / name
        (task / "docs").mkdir(parents=True)
        (task / "evaluation").mkdir()
        (task / "task_config.json").write_text(json.dumps({"needed_mcp_servers": [],
                                                           "needed_local_tools": ["claim_done", "python_execute"]}))
        (task / "docs" / "task.md").write_text(f"Task {name}: read everything.\n")
        (task / "docs" / "agent_system_prompt.md").write_text("Your workspace: !!<<<<||||workspace_dir||||>>>>!!.\n")
        # Passes whatever the agent did: a run it were credited for would score 1.
        (task / "evaluation" / "main.py").write_text(PASSING_EVALUATOR)
    out = tmp_path / "vf"
    vf = _vf_eval(flooding_model, out, tmp_path, "--env.taskset.source", str(root),
                  "--env.taskset.task.out", str(tmp_path / "artifacts"))
    _wait(vf, tmp_path, out)
    traces = _traces(out)

    # The policy filled its own context: scored 0 through the normal scoring path, the kind on the trace.
    overflow = traces["overflows"]
    assert overflow["ok"] is True, overflow["errors"]
    assert overflow["rewards"]["passed"] == {"score": 0.0, "weight": 1.0}
    assert overflow["info"]["failure"]["kind"] == "context_overflow" and "infra_error" not in overflow["info"]
    assert overflow["info"]["failure"]["phase"] == "agent"
    assert overflow["info"]["decathlon"]["status"] == "failed" and overflow["info"]["decathlon"]["turns"] == 1
    result = json.loads(next((tmp_path / "artifacts" / "overflows").glob("*/result.json")).read_text())
    assert result["failure"]["kind"] == "context_overflow" and result["reward"] == 0.0 and result["pass"] is False

    # Any other refusal is the endpoint's: the rollout fails, masked, its kind on the trace.
    refused = traces["refused-tools"]
    assert refused["ok"] is False and "failure" not in refused["info"]
    assert refused["info"]["infra_error"]["kind"] == "model_error", refused["info"]
    assert all(r is None for r in refused["rewards"].values()), refused["rewards"]
    assert not any((tmp_path / "sandboxes").iterdir()), "a sandbox outlived its rollout"
