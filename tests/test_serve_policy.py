"""`decathlon serve-policy`: oracle replies over the OpenAI chat-completions wire, stateless per request."""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from lines import readline
from decathlon.core.oracles import call_id, load_oracle
from decathlon.training.serve_policy import make_app, match_system_prompt
from decathlon.checkout.tasks import MINI
from decathlon.sandbox.prompts import PLACEHOLDER, fill_system_prompt

REPO = Path(__file__).resolve().parents[1]
WORKSPACE = Path("/tmp/some where/workspace")  # a space, to prove the path is not cut at one
LAUNCH = "2026-03-02 09:00:00 Monday"


def _docs(source: Path, task: str) -> tuple[str, str]:
    docs = source / "tasks" / "finalpool" / task / "docs"
    return (docs / "task.md").read_text(encoding="utf-8"), (docs / "agent_system_prompt.md").read_text(encoding="utf-8")


def _conversation(source: Path, task: str, workspace: Path = WORKSPACE) -> list[dict]:
    prompt, template = _docs(source, task)
    return [{"role": "system", "content": fill_system_prompt(template, workspace, LAUNCH)},
            {"role": "user", "content": prompt}]


def _ask(client: TestClient, messages: list[dict], **extra: object) -> dict:
    resp = client.post("/v1/chat/completions", json={"model": "oracle", "messages": messages, **extra})
    assert resp.status_code == 200, resp.text
    return resp.json()


def _tiny_source(root: Path, *, oracle: bool, template: str = "Work in !!<<<<||||workspace_dir||||>>>>!!.") -> Path:
    """A throwaway Toolathlon root with one task, `solo`."""
    task = root / "tasks" / "finalpool" / "solo"
    (task / "docs").mkdir(parents=True)
    (root / "configs" / "mcp_servers").mkdir(parents=True)
    (task / "task_config.json").write_text(json.dumps({"needed_mcp_servers": [], "needed_local_tools": ["claim_done"]}))
    (task / "docs" / "task.md").write_text("Finish at once.\n")
    (task / "docs" / "agent_system_prompt.md").write_text(template)
    if oracle:
        (root / "oracles").mkdir()
        (root / "oracles" / "solo.json").write_text(json.dumps(
            {"task": "solo", "steps": [{"tool": "local-claim_done", "arguments": {"where": "${workspace}"}}],
             "final": "Done."}))
    return root


@pytest.fixture(scope="module")
def mini() -> TestClient:
    return TestClient(make_app(MINI))


def test_match_system_prompt_recovers_every_placeholder() -> None:
    template = ("Files: " + PLACEHOLDER.format("workspace_dir") + "; again " + PLACEHOLDER.format("workspace_dir")
                + ". Now: " + PLACEHOLDER.format("time") + ". cwd " + PLACEHOLDER.format("current_working_dir")
                + ", rel " + PLACEHOLDER.format("workspace_dir_rela") + ". Symbols (.*+?) stay literal.")
    filled = fill_system_prompt(template, WORKSPACE, LAUNCH)
    assert match_system_prompt(template, filled) == {"workspace_dir": str(WORKSPACE), "time": LAUNCH,
                                                     "current_working_dir": str(WORKSPACE), "workspace_dir_rela": "."}
    # A note a client appends after a blank line does not hide the template.
    assert match_system_prompt(template, filled + "\n\nExternal network access is disabled.")["time"] == LAUNCH
    assert match_system_prompt(template, "Some other prompt.") is None


def test_identifies_the_task_and_fills_the_workspace(mini: TestClient) -> None:
    reply = _ask(mini, _conversation(MINI, "csv-sales-summary"))
    choice = reply["choices"][0]
    assert reply["object"] == "chat.completion" and choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]
    assert call["function"]["name"] == "filesystem-read_file"
    assert json.loads(call["function"]["arguments"]) == {"path": f"{WORKSPACE}/sales.csv"}
    assert call["id"] == call_id("csv-sales-summary", 0, 0)


def test_walks_the_oracle_turn_by_turn_and_ends_with_its_final_text(mini: TestClient) -> None:
    oracle = load_oracle(MINI, "project-deadlines")
    messages = _conversation(MINI, "project-deadlines")
    seen = []
    for _ in range(len(oracle.steps) + 1):
        message = _ask(mini, messages)["choices"][0]["message"]
        messages.append(message)
        seen.append(message)
        for call in message.get("tool_calls") or []:
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": "ok"})
    assert [c["function"]["name"] for m in seen[:-1] for c in m["tool_calls"]] == \
        [c.tool for step in oracle.steps for c in step]
    # ${launch_date} came from the time placeholder of the system prompt.
    assert "date.fromisoformat('2026-03-02')" in seen[1]["tool_calls"][0]["function"]["arguments"]
    assert seen[-1] == {"role": "assistant", "content": oracle.final}


def test_turn_comes_from_call_ids_when_context_was_trimmed(mini: TestClient) -> None:
    """manage_context drops old turns; the reply must still be the next step, not a repeat."""
    messages = _conversation(MINI, "csv-sales-summary")
    for _ in range(2):
        message = _ask(mini, messages)["choices"][0]["message"]
        messages += [message, {"role": "tool", "tool_call_id": message["tool_calls"][0]["id"], "content": "ok"}]
    trimmed = messages[:2] + messages[4:]  # only turn 1 is left in view
    assert _ask(mini, trimmed)["choices"][0]["message"]["tool_calls"][0]["id"] == call_id("csv-sales-summary", 2, 0)


def test_parallel_episodes_are_independent(mini: TestClient) -> None:
    a = _ask(mini, _conversation(MINI, "csv-sales-summary", Path("/ws/a")))
    b = _ask(mini, _conversation(MINI, "csv-sales-summary", Path("/ws/b")))
    assert "/ws/a/" in a["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    assert "/ws/b/" in b["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]


def test_unknown_task_is_a_400_naming_the_cause(mini: TestClient) -> None:
    resp = mini.post("/chat/completions", json={"messages": [{"role": "system", "content": "x"},
                                                             {"role": "user", "content": "Write me a poem."}]})
    assert resp.status_code == 400
    assert resp.json()["error"]["code"] == "unknown_task"


def test_wrong_system_prompt_is_a_400(mini: TestClient) -> None:
    messages = _conversation(MINI, "csv-sales-summary")
    messages[0]["content"] = "You are a pirate."
    resp = mini.post("/v1/chat/completions", json={"messages": messages})
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "system_prompt_mismatch"


def test_task_without_oracle_is_a_400(tmp_path: Path) -> None:
    source = _tiny_source(tmp_path, oracle=False)
    resp = TestClient(make_app(source)).post("/v1/chat/completions", json={"messages": _conversation(source, "solo")})
    assert resp.status_code == 400
    body = resp.json()["error"]
    assert body["code"] == "no_oracle" and "solo" in body["message"]


def test_oracle_needing_an_unrecoverable_workspace_is_a_400(tmp_path: Path) -> None:
    source = _tiny_source(tmp_path, oracle=True, template="No placeholders here.")
    resp = TestClient(make_app(source)).post("/v1/chat/completions", json={"messages": _conversation(source, "solo")})
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "no_workspace"


def test_tasks_added_while_serving_are_found(tmp_path: Path) -> None:
    client = TestClient(make_app(_tiny_source(tmp_path / "a", oracle=True)))
    assert client.post("/v1/chat/completions", json={"messages": _conversation(tmp_path / "a", "solo")}).status_code == 200
    task = tmp_path / "a" / "tasks" / "finalpool" / "late"
    (task / "docs").mkdir(parents=True)
    (task / "task_config.json").write_text(json.dumps({"needed_mcp_servers": [], "needed_local_tools": []}))
    (task / "docs" / "task.md").write_text("A late task.")
    (task / "docs" / "agent_system_prompt.md").write_text("Plain.")
    (tmp_path / "a" / "oracles" / "late.json").write_text(json.dumps({"task": "late", "steps": [], "final": "Late."}))
    reply = _ask(client, [{"role": "system", "content": "Plain."}, {"role": "user", "content": "A late task."}])
    assert reply["choices"][0]["message"]["content"] == "Late."


def test_streaming_reassembles_to_the_same_message(mini: TestClient) -> None:
    messages = _conversation(MINI, "csv-sales-summary")
    whole = _ask(mini, messages)["choices"][0]["message"]
    with mini.stream("POST", "/v1/chat/completions", json={"messages": messages, "stream": True,
                                                             "stream_options": {"include_usage": True}}) as resp:
        assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
        events = [line[len("data: "):] for line in resp.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[-1]["usage"]["total_tokens"] == 0  # include_usage: a last chunk with usage and no choices
    deltas = [c["choices"][0] for c in chunks if c["choices"]]
    calls = [tc for d in deltas for tc in d["delta"].get("tool_calls", [])]
    assert [{k: v for k, v in tc.items() if k != "index"} for tc in calls] == whole["tool_calls"]
    assert deltas[-1]["finish_reason"] == "tool_calls"


def test_models_endpoint(mini: TestClient) -> None:
    resp = mini.get("/v1/models")
    assert resp.status_code == 200 and resp.json()["data"][0]["id"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_command_prints_its_url_and_stops_on_a_signal(sig: signal.Signals) -> None:
    decathlon = Path(sys.executable).parent / "decathlon"
    proc = subprocess.Popen([str(decathlon), "serve-policy", "--source", str(MINI), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        line = readline(proc, what="serve-policy's URL")
        url = re.search(r"http://127\.0\.0\.1:\d+/v1", line)
        assert url, line + proc.stderr.read()
        assert httpx.get(f"{url.group(0)}/models", timeout=10).status_code == 200
        proc.send_signal(sig)
        proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # uvicorn finishes, then lets the signal take its usual course: "interrupted" (130), or death by SIGTERM.
    assert proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGTERM)


def test_serves_recorded_trajectories_turn_by_turn():
    tapes = REPO / "fixtures" / "cassettes"
    client = TestClient(make_app(MINI, trajectories=tapes))
    recorded = json.loads((tapes / "contacts-dedupe.trajectory.json").read_text())["messages"]
    turns = [m for m in recorded if m["role"] == "assistant"]
    messages = _conversation(MINI, "contacts-dedupe")
    for want in turns:
        got = _ask(client, messages)["choices"][0]["message"]
        expected = json.loads(json.dumps(want).replace("${agent_workspace}", str(WORKSPACE)))
        assert got.get("tool_calls") == expected.get("tool_calls") and got.get("content") == expected.get("content")
        messages.append(got)
        for call in got.get("tool_calls") or []:
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": "ok"})
    assert _ask(client, messages)["choices"][0]["message"]["content"] == ""  # the recording has ended
