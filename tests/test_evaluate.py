"""task-api evaluate: Toolathlon's evaluator contract, and every way an evaluator can fail us."""
from __future__ import annotations

import json

import pytest

from conftest import LAUNCH, PASSING_EVALUATOR, write_task

ARGS = """
import argparse, json, sys, pathlib
p = argparse.ArgumentParser()
for a in ("--res_log_file", "--agent_workspace", "--groundtruth_workspace", "--launch_time"):
    p.add_argument(a, required=True)
a = p.parse_args()
"""


def _messages(tmp_path, messages=None):
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(messages if messages is not None else [
        {"role": "user", "content": "Do the thing."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                                "function": {"name": "local-claim_done", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "you have claimed the task is done!"},
    ]))
    return str(path)


def _setup(task_api, source, name, evaluator, **kw):
    write_task(source, name, evaluator=evaluator, **kw)
    task_api.ok("setup", name, "--source", str(source), "--launch-time", LAUNCH)


def test_contract_arguments_and_traj_log(task_api, source, tmp_path):
    evaluator = ARGS + """
log = json.loads(pathlib.Path(a.res_log_file).read_text())
assert log["status"] == "success" and log["messages"][1]["tool_calls"][0]["function"]["name"] == "local-claim_done"
assert log["config"]["id"] == "finalpool-contract" and log["key_stats"]["tool_calls"] == 1
assert [t["function"]["name"] for t in log["tool_calls"]["tools"]] == ["local-claim_done"]
assert a.launch_time == "2026-03-02 09:00:00 Monday", a.launch_time
assert pathlib.Path(a.agent_workspace).is_dir()
assert a.groundtruth_workspace.endswith("contract/groundtruth_workspace"), a.groundtruth_workspace
import os
pathlib.Path(os.environ["DECATHLON_METRICS_FILE"]).write_text(json.dumps({"found": 3, "total": 7, "label": "ignored"}))
"""
    _setup(task_api, source, "contract", evaluator, files={"groundtruth_workspace/x.txt": "x"})
    out = task_api.ok("evaluate", "--messages", _messages(tmp_path))
    assert out["pass"] is True and out["exit_code"] == 0, out
    assert out["metrics"] == {"found": 3.0, "total": 7.0}
    assert json.loads((task_api.home / "eval_res.json").read_text())["pass"] is True


def test_groundtruth_none_and_fail_exit(task_api, source, tmp_path):
    evaluator = ARGS + "print('gt', a.groundtruth_workspace)\nsys.exit(1)\n"
    _setup(task_api, source, "nogt", evaluator)
    out = task_api.ok("evaluate", "--messages", _messages(tmp_path))
    assert out["pass"] is False and out["exit_code"] == 1 and "gt None" in out["output_tail"]


def test_failure_by_raising_is_a_fail_not_a_crash(task_api, source, tmp_path):
    _setup(task_api, source, "raises", ARGS + "raise ValueError('price mismatch for oil')\n")
    out = task_api.ok("evaluate", "--messages", _messages(tmp_path))
    assert out["pass"] is False and "price mismatch" in out["output_tail"]


def test_status_gate_gives_null_without_running_the_evaluator(task_api, source, tmp_path):
    _setup(task_api, source, "gated", ARGS + "pathlib.Path(a.agent_workspace, 'ran').write_text('1')\n")
    out = task_api.ok("evaluate", "--messages", _messages(tmp_path), "--status", "max_turns_reached")
    assert out["pass"] is None and not (task_api.home / "workspace" / "ran").exists()


def test_missing_evaluator_is_an_infra_error(task_api, source, tmp_path):
    _setup(task_api, source, "no-eval", None)
    err = task_api.error("evaluate", "--messages", _messages(tmp_path))
    assert err["kind"] == "evaluator_missing"


@pytest.mark.parametrize("body", [
    "import os, signal\nif __name__ == '__main__':\n    os.kill(os.getpid(), signal.SIGKILL)\n",
    "import sys\nif __name__ == '__main__':\n    sys.exit(3)\n",
])
def test_crashing_evaluator_is_named(task_api, source, tmp_path, body):
    _setup(task_api, source, "crash", body)
    err = task_api.error("evaluate", "--messages", _messages(tmp_path))
    assert err["kind"] == "evaluator_crash"


@pytest.mark.parametrize("body", ["import toolathlon_utils_that_do_not_exist\n", "def broken(:\n"])
def test_an_evaluator_that_cannot_be_imported_fails_setup_before_the_agent_acts(task_api, source, body):
    write_task(source, "unimportable", evaluator=body)
    err = task_api.error("setup", "unimportable", "--source", str(source), "--launch-time", LAUNCH)
    assert err["kind"] == "grader_preflight", err
    assert "toolathlon_utils_that_do_not_exist" in err["message"] or "SyntaxError" in err["message"], err


def test_import_error_printed_at_evaluate_time_is_a_plain_fail(task_api, source, tmp_path):
    """The output an agent can steer (a workspace value echoed by the evaluator) cannot forge a crash."""
    _setup(task_api, source, "forged", ARGS + "print('ok\\nImportError: x\\nModuleNotFoundError: y')\nsys.exit(1)\n")
    out = task_api.ok("evaluate", "--messages", _messages(tmp_path))
    assert out["pass"] is False and out["exit_code"] == 1, out


def test_evaluator_timeout_is_an_infra_error(task_api, source, tmp_path, monkeypatch):
    monkeypatch.setenv("DECATHLON_EVAL_TIMEOUT", "1")
    _setup(task_api, source, "slow", "import time\nif __name__ == \"__main__\":\n    time.sleep(60)\n")
    err = task_api.error("evaluate", "--messages", _messages(tmp_path))
    assert err["kind"] == "evaluator_timeout"


def test_bad_metrics_file_is_named(task_api, source, tmp_path):
    _setup(task_api, source, "badmetrics", "import os\nopen(os.environ['DECATHLON_METRICS_FILE'], 'w').write('{not json')\n")
    err = task_api.error("evaluate", "--messages", _messages(tmp_path))
    assert err["kind"] == "bad_metrics"


def test_metrics_printed_on_stdout_are_not_read(task_api, source, tmp_path):
    """The evaluator's output may echo what the agent wrote: metrics come only from the metrics file."""
    _setup(task_api, source, "stdoutmetrics", "print('DECATHLON_METRICS {\"score\": 1}')\nprint('DECATHLON_METRICS {')\n")
    out = task_api.ok("evaluate", "--messages", _messages(tmp_path))
    assert out["pass"] is True and out["metrics"] == {}, out


def test_bad_messages_file(task_api, source, tmp_path):
    _setup(task_api, source, "msgs", PASSING_EVALUATOR)
    bad = tmp_path / "bad.json"
    bad.write_text('{"messages": "nope"}')
    assert task_api.error("evaluate", "--messages", str(bad))["kind"] == "bad_messages"
    assert task_api.error("evaluate", "--messages", str(tmp_path / "absent.json"))["kind"] == "bad_messages"


def test_evaluate_before_setup(task_api, tmp_path):
    assert task_api.error("evaluate", "--messages", _messages(tmp_path))["kind"] == "no_session"
