"""task-api execute: Toolathlon's exact strings, and every bad input as a result or an infra error."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import LAUNCH, MINI, PASSING_EVALUATOR, TEST_SERVERS, write_server, write_task


@pytest.fixture
def mini(task_api):
    task_api.ok("setup", "csv-sales-summary", "--source", str(MINI), "--launch-time", LAUNCH)
    return task_api


def test_read_file_in_toolathlon_format(mini):
    ws = mini.home / "workspace"
    out = mini.ok("execute", "filesystem-read_file", json.dumps({"path": str(ws / "sales.csv")}))
    assert set(out) == {"content", "is_error", "elapsed_ms"} and out["is_error"] is False
    expected = json.dumps({"type": "text", "text": (ws / "sales.csv").read_text(), "annotations": None},
                          ensure_ascii=False, separators=(",", ":"))
    assert out["content"] == expected


def test_unknown_tool_is_a_result_naming_the_available_tools(mini):
    out = mini.ok("execute", "filesystem-delete_everything", "{}")
    assert out["is_error"] is True
    assert out["content"].startswith("Tool filesystem-delete_everything not found in agent Assistant")
    assert "filesystem-read_file" in out["content"] and "local-claim_done" in out["content"]


def test_args_not_json(mini):
    out = mini.ok("execute", "filesystem-read_file", '{"path": "x"')
    assert out["is_error"] is True
    assert out["content"] == 'Error running tool filesystem-read_file: Invalid JSON input for tool read_file: {"path": "x"'


def test_args_not_an_object(mini):
    out = mini.ok("execute", "filesystem-read_file", '["a", "b"]')
    assert out["is_error"] is True and "expected a JSON object" in out["content"] and "list" in out["content"]


def test_empty_args_mean_no_arguments(mini):
    out = mini.ok("execute", "local-claim_done", "")
    assert out == {**out, "content": "you have claimed the task is done!", "is_error": False}


def test_path_outside_workspace_is_refused(mini, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    out = mini.ok("execute", "filesystem-read_file", json.dumps({"path": str(secret)}))
    assert out["is_error"] is True and "top secret" not in out["content"] and "Access denied" in out["content"]
    target = tmp_path / "planted.txt"
    out = mini.ok("execute", "filesystem-write_file", json.dumps({"path": str(target), "content": "x"}))
    assert out["is_error"] is True and not target.exists()


def test_python_execute_format(mini):
    out = mini.ok("execute", "local-python-execute",
                  json.dumps({"code": "import sys\nprint('hi')\nprint('warn', file=sys.stderr)"}))
    text = out["content"]
    assert text.startswith("=== STDOUT ===\nhi\n=== STDERR ===\nwarn\n=== EXECUTION INFO ===\nReturn code: 0\n")
    assert text.endswith("Timeout limit: 30 seconds")
    # it runs in the workspace
    out = mini.ok("execute", "local-python-execute", json.dumps({"code": "import os; print(sorted(os.listdir('.')))"}))
    assert "sales.csv" in out["content"]


def test_python_execute_timeout(mini):
    out = mini.ok("execute", "local-python-execute", json.dumps({"code": "import time; time.sleep(30)", "timeout": 1}))
    assert out["is_error"] is True
    assert out["content"].startswith("=== EXECUTION TIMEOUT ===\nExecution timed out after 1 seconds\nExecution time: ")


def test_local_tool_bad_arguments(mini):
    out = mini.ok("execute", "local-python-execute", json.dumps({"cod": "print(1)"}))
    assert out["is_error"] is True and "missing required argument 'code'" in out["content"]


def test_history_tools_see_earlier_calls(task_api):
    task_api.ok("setup", "contacts-dedupe", "--source", str(MINI), "--launch-time", LAUNCH)
    task_api.ok("execute", "terminal-run_command", json.dumps({"command": "wc -l contacts.csv"}))
    stats = json.loads(task_api.ok("execute", "local-history_stats", "{}")["content"])
    assert stats["total_turns"] == 1 and stats["tool_counts"] == {"terminal-run_command": 1}
    found = task_api.ok("execute", "local-search_history", json.dumps({"keywords": ["contacts.csv"]}))["content"]
    assert found.startswith("Found 1 turns") and "terminal-run_command" in found
    turn = task_api.ok("execute", "local-view_history_turn", json.dumps({"turn": 1}))["content"]
    assert "9 contacts.csv" in turn
    ctx = task_api.ok("execute", "local-manage_context", json.dumps({"keep_last_turns": 2}))
    assert ctx["context"] == {"keep_last_turns": 2}


def test_execute_before_setup_and_after_teardown(task_api):
    err = task_api.error("execute", "filesystem-read_file", "{}")
    assert err["kind"] == "no_session"
    task_api.ok("setup", "csv-sales-summary", "--source", str(MINI), "--launch-time", LAUNCH)
    task_api.ok("teardown")
    err = task_api.error("execute", "filesystem-read_file", "{}")
    assert err["kind"] == "no_session"


@pytest.fixture
def toy(task_api, source):
    write_server(source, "toy", sys.executable, [str(TEST_SERVERS / "toy_server.py")], timeout=2)
    write_task(source, "toy-task", servers=["toy"], local_tools=["claim_done", "handle_overlong_tool_outputs"],
               evaluator=PASSING_EVALUATOR)
    task_api.ok("setup", "toy-task", "--source", str(source))
    return task_api


def test_hanging_tool_times_out_and_session_stays_usable(toy):
    out = toy.ok("execute", "toy-hang", "{}", timeout=60)
    assert out["is_error"] is True
    assert out["content"] == ("Error running tool toy-hang: Error invoking MCP tool hang: Timed out while waiting "
                              "for response to ClientRequest. Waited 2.0 seconds.")
    again = toy.ok("execute", "toy-echo", json.dumps({"text": "still here"}))
    assert json.loads(again["content"])["text"] == "still here"


def test_overlong_output_is_cut_saved_and_pageable(toy):
    out = toy.ok("execute", "toy-big", json.dumps({"chars": 150000}))
    content = out["content"]
    assert content.startswith('{"type":"text","text":"line 000000')
    assert "is too long! Only the first 100000 characters are shown here." in content
    assert len(content) < 100600
    uid = content.split("(shortuuid identifier: ")[1].split(")")[0]
    saved = toy.home / "workspace" / ".overlong_tool_outputs" / f"{uid}.json"
    # saved verbatim, as upstream saves it: the MCP content item's JSON, whole
    assert json.loads(saved.read_text())["text"].startswith("line 000000")
    assert content.startswith(saved.read_text()[:100000])
    view = toy.ok("execute", "local-view_overlong_tooloutput", json.dumps({"shortuuid": uid, "page_size": 50000}))
    assert view["content"].startswith(f"Viewing {uid} (Page 1/")
    found = toy.ok("execute", "local-search_overlong_tooloutput", json.dumps({"shortuuid": uid, "pattern": "line 006000"}))
    assert "Total matches: 1" in found["content"]
    missing = toy.ok("execute", "local-view_overlong_tooloutput", json.dumps({"shortuuid": "nope"}))
    assert missing["content"] == "Error: No overlong tool output found for shortuuid: nope"


def test_binary_tool_output_does_not_crash(mini):
    ws = mini.home / "workspace"
    (ws / "blob.bin").write_bytes(bytes(range(256)) * 40)
    out = mini.ok("execute", "filesystem-read_file", json.dumps({"path": str(ws / "blob.bin")}))
    json.loads(out["content"])  # still one well-formed text item


def test_unicode_line_separators_in_output_stay_inside_the_one_json_line():
    """U+0085 and U+2028 are line breaks to str.splitlines(); the exec path must not split on them."""
    import asyncio
    from decathlon.backends.local import LocalBackend
    from decathlon.backends.base import SandboxSpec
    from decathlon.core.task_session import TaskSession
    async def go() -> str:
        box = await LocalBackend(direct=False).acquire(SandboxSpec("t", "e", "csv-sales-summary", MINI))
        try:
            s = TaskSession(box)
            setup = await s.setup("csv-sales-summary", LAUNCH)
            (Path(setup.workspace) / "odd.txt").write_text("a\u0085b\u2028c\x1cd", encoding="utf-8")
            res = await s.execute("filesystem-read_file", json.dumps({"path": f"{setup.workspace}/odd.txt"}))
            return json.loads(res.content)["text"]
        finally:
            await box.release()
    assert asyncio.run(go()) == "a\u0085b\u2028c\x1cd"
