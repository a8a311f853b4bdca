"""task-api setup / status / teardown on the mini pack and on broken sources."""
from __future__ import annotations

import json
import sys

from conftest import LAUNCH, MINI, PASSING_EVALUATOR, TEST_SERVERS, write_server, write_task


def test_setup_returns_tools_prompts_and_timings(task_api):
    out = task_api.ok("setup", "excel-grade-report", "--source", str(MINI), "--launch-time", LAUNCH)
    names = [t["function"]["name"] for t in out["tools"]]
    assert "excel-read_data_from_excel" in names and "word-add_table" in names and "filesystem-read_file" in names
    assert "local-claim_done" in names and "local-view_overlong_tooloutput" in names
    assert all(t["type"] == "function" and "parameters" in t["function"] for t in out["tools"])
    ws = str(task_api.home / "workspace")
    assert out["workspace"] == ws and ws in out["system_prompt"] and "!!<<<<" not in out["system_prompt"]
    assert out["prompt"].startswith("The workbook `grades.xlsx`")
    assert out["launch_time"] == "2026-03-02 09:00:00 Monday"
    assert set(out["timings"]) >= {"workspace", "preprocess", "servers", "total"}
    assert sorted(out["servers"]) == ["excel", "filesystem", "word"]
    # preprocess ran before the servers and wrote into the workspace
    assert (task_api.home / "workspace" / "grades.xlsx").is_file()
    status = task_api.ok("status")
    assert status["set_up"] and status["daemon"]["alive"] and status["task"] == "excel-grade-report"


def test_time_placeholder_and_initial_workspace(task_api):
    out = task_api.ok("setup", "project-deadlines", "--source", str(MINI), "--launch-time", "2026-03-02 09:00:00 Monday")
    assert "2026-03-02 09:00:00 Monday" in out["system_prompt"]
    out = task_api.ok("teardown")
    assert out["torn_down"] is True
    task_api.ok("setup", "csv-sales-summary", "--source", str(MINI), "--launch-time", LAUNCH)
    assert (task_api.home / "workspace" / "sales.csv").is_file()
    # ground truth and evaluator stay in the source, never in the workspace
    assert not list((task_api.home / "workspace").rglob("summary.json"))
    assert not list((task_api.home / "workspace").rglob("main.py"))


def test_unknown_task_lists_close_matches(task_api):
    err = task_api.error("setup", "csv-sales-sumary", "--source", str(MINI))
    assert err["kind"] == "unknown_task" and "csv-sales-summary" in err["message"]


def test_bad_launch_time(task_api):
    err = task_api.error("setup", "csv-sales-summary", "--source", str(MINI), "--launch-time", "2026-03-02 09:00:00 Friday")
    assert err["kind"] == "bad_launch_time" and "Monday" in err["message"]


def test_setup_twice_is_refused(task_api):
    task_api.ok("setup", "csv-sales-summary", "--source", str(MINI), "--launch-time", LAUNCH)
    err = task_api.error("setup", "csv-sales-summary", "--source", str(MINI))
    assert err["kind"] == "already_set_up"


def test_preprocess_failure_is_an_infra_error_with_its_output(task_api, source):
    write_task(source, "broken-pre", preprocess="import sys\nprint('seeding the mailbox failed: 503')\nsys.exit(4)\n",
               evaluator=PASSING_EVALUATOR)
    err = task_api.error("setup", "broken-pre", "--source", str(source))
    assert err["kind"] == "preprocess_failed" and "exited 4" in err["message"] and "503" in err["message"]


def test_preprocess_gets_workspace_and_launch_time(task_api, source):
    write_task(source, "args-pre", evaluator=PASSING_EVALUATOR, preprocess="""
        import argparse, pathlib
        p = argparse.ArgumentParser(); p.add_argument("--agent_workspace"); p.add_argument("--launch_time")
        a = p.parse_args()
        pathlib.Path(a.agent_workspace, "when.txt").write_text(a.launch_time)
        """)
    task_api.ok("setup", "args-pre", "--source", str(source), "--launch-time", LAUNCH)
    assert (task_api.home / "workspace" / "when.txt").read_text() == "2026-03-02 09:00:00 Monday"


def test_server_that_fails_to_start_is_named_with_its_stderr(task_api, source):
    write_server(source, "flaky", sys.executable,
                 ["-c", "import sys; sys.stderr.write('no API token configured\\n'); sys.exit(3)"])
    write_task(source, "needs-flaky", servers=["flaky"], evaluator=PASSING_EVALUATOR)
    err = task_api.error("setup", "needs-flaky", "--source", str(source))
    assert err["kind"] == "server_start" and "'flaky'" in err["message"] and "no API token configured" in err["message"]
    assert task_api.ok("status")["set_up"] is False


def test_undefined_server_is_named(task_api, source):
    write_task(source, "needs-ghost", servers=["ghost"], evaluator=PASSING_EVALUATOR)
    err = task_api.error("setup", "needs-ghost", "--source", str(source))
    assert err["kind"] == "unknown_server" and "ghost" in err["message"]


def test_hyphenated_server_names_route(task_api, source):
    # `pdf` and `pdf-tools` both exist: `pdf-tools-echo` must reach pdf-tools, not pdf.
    toy = str(TEST_SERVERS / "toy_server.py")
    write_server(source, "pdf", sys.executable, [toy])
    write_server(source, "pdf-tools", sys.executable, [toy])
    write_task(source, "two-pdfs", servers=["pdf", "pdf-tools"], evaluator=PASSING_EVALUATOR)
    out = task_api.ok("setup", "two-pdfs", "--source", str(source))
    names = {t["function"]["name"] for t in out["tools"]}
    assert {"pdf-echo", "pdf-tools-echo", "pdf-tools-hang"} <= names
    res = task_api.ok("execute", "pdf-tools-echo", json.dumps({"text": "routed"}))
    assert json.loads(res["content"])["text"] == "routed" and res["is_error"] is False


def test_missing_source_names_the_fix(task_api, monkeypatch):
    monkeypatch.delenv("TOOLATHLON_ROOT", raising=False)
    err = task_api.error("setup", "csv-sales-summary")
    assert err["kind"] == "bad_source" and "TOOLATHLON_ROOT" in err["message"]
