"""Issue 21, findings M2, L2 and L3: what a sandbox or a recording gives the host is read within one bound
on nesting (decathlon/tape/nesting.py), every field `decathlon report` reads from a run file is checked,
and a task name taken from a file is one safe path component (decathlon.checkout.tasks.task_name_problem)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, write_task
from decathlon.recordings.cassettes import cassette_path
from decathlon.errors import InfraError
from decathlon.recordings.id_translation import IdTranslator, unwrap
from decathlon.recordings.importer import import_dir
from decathlon.reports.report import build_report
from decathlon.checkout.tasks import catalogue, select, task_name_problem
from recorded_runs import TASKS

DEEP = "[" * 30_000 + "]" * 30_000  # a valid JSON text far past any parser's recursion


def decathlon(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "decathlon", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))


def _item(text: str) -> str:
    """A tool result as the recorded runs store it: the MCP content item as JSON text."""
    return json.dumps({"type": "text", "text": text, "annotations": None})


def _call(cid: str, name: str, args: dict) -> dict:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}


def _run(task: str, passed: bool = True) -> dict:
    return {"pass": passed, "messages": [{"role": "user", "content": f"Do {task}."},
                                         _call("c1", "local-claim_done", {}),
                                         {"role": "tool", "tool_call_id": "c1", "content": "done"}]}


# --- M2: a tool output nested 30k deep replays as recorded -------------------------------------------

def test_m2_a_tool_output_of_30k_nested_brackets_replays_to_the_recorded_outcome(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    messages = [{"role": "user", "content": "Read the two files."},
                _call("c1", "filesystem-read_file", {"path": "/workspace/dumps/workspace/a.json"}),
                {"role": "tool", "tool_call_id": "c1", "content": _item(DEEP)},
                _call("c2", "filesystem-read_file", {"path": "/workspace/dumps/workspace/b.json"}),
                {"role": "tool", "tool_call_id": "c2", "content": DEEP},
                _call("c3", "local-claim_done", {}),
                {"role": "tool", "tool_call_id": "c3", "content": "done"}]
    (runs / "deep-output.json").write_text(json.dumps({"pass": True, "messages": messages}))
    out = tmp_path / "imported"
    imported = decathlon("cassettes", "import-trajectories", str(runs), "--out", str(out))
    assert imported.returncode == 0, imported.stderr
    proc = decathlon("run", "deep-output", "--source", str(out), "--policy", "replay", "--json")
    assert "Traceback" not in proc.stderr, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    # the host learnt ids from both answers (opaque text) and went on: the recorded verdict, not internal_error
    assert result["infra_error"] is None and result["failure"] is None, result
    assert (result["pass"], result["reward"], result["tool_calls"]) == (True, 1.0, 3), result
    assert proc.returncode == 0


def test_m2_id_translation_reads_a_too_deep_answer_as_text_and_leaves_a_too_deep_call_alone() -> None:
    t = IdTranslator()
    t.learn(json.dumps({"course_id": 70}), json.dumps({"course_id": 1}))
    t.learn(_item(DEEP), DEEP)
    t.learn(DEEP + "\nID: 12", DEEP + "\nID: 3")  # not JSON it can walk: aligned as text, by label
    assert t.translate_arguments('{"course_id": 70, "email_id": 12}') == '{"course_id": 1, "email_id": 3}'
    deep_call = '{"course_id": 70, "filter": ' + DEEP + "}"
    assert t.translate_arguments(deep_call) is deep_call
    wrapped = '[{"type": "text", "text": "x", "more": ' + DEEP + "}]"
    assert unwrap(wrapped) == wrapped


# --- L2: a run file of the wrong shape is named (and skipped with --skip-broken), never a traceback ----

BAD_RECORDED = {
    "failure-123": (json.dumps({"pass": False, "failure": 123, "messages": []}), "`failure` is a number"),
    "deep": ('{"pass": true, "messages": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
}


@pytest.mark.parametrize("case", sorted(BAD_RECORDED))
def test_l2_report_names_a_broken_recorded_run_and_skip_broken_lists_it(tmp_path: Path, case: str) -> None:
    raw, words = BAD_RECORDED[case]
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "good.json").write_text(json.dumps(_run("good")))
    (folder / "bad.json").write_text(raw)
    proc = decathlon("report", str(folder), "--summary")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert str(folder / "bad.json") in proc.stderr and words in proc.stderr, proc.stderr
    assert "--skip-broken" in proc.stderr
    proc = decathlon("report", str(folder), "--json", "--skip-broken")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    run = json.loads(proc.stdout)["runs"][0]
    assert [t["task"] for t in run["tasks"]] == ["good"] and run["passed"] == 1
    assert len(run["skipped"]) == 1 and run["skipped"][0].startswith(f"{folder / 'bad.json'}: ")
    assert words in run["skipped"][0]
    text = decathlon("report", str(folder), "--skip-broken")
    assert text.returncode == 0 and "skipped" in text.stdout, text.stderr


def _result(**fields: object) -> dict:
    return {"task": "t", "repeat": 1, "reward": 1.0, "pass": True, "metrics": {"m": 0.5}, "infra_error": None,
            "failure": None, "timings": {"setup": 1.0}, "turns": 2, "tool_calls": 1, "status": "success",
            "run": {"source": "/x/pack", "source_name": "pack", "policy": "oracle", "backend": "local",
                    "mode": "live"}, **fields}


# Every field report reads from a result file, each of the wrong type once.
BAD_RESULTS = {
    "pass": ("yes", "`pass` is a string"), "failure": (123, "`failure` is a number"),
    "infra_error": ({"kind": 7, "message": "x"}, "`infra_error.kind`"), "status": (5, "`status` is a number"),
    "turns": ("many", "`turns` is a string"), "tool_calls": (-1, "`tool_calls` is negative"),
    "repeat": (True, "`repeat` is a boolean"), "reward": ("1", "`reward` is a string"),
    "timings": ({"setup": "1.0"}, "`timings.setup`"), "metrics": (["m"], "`metrics` is an array"),
    "conflict_group": (3, "`conflict_group`"), "conflict_wait": (float("inf"), "`conflict_wait`"),
    "run": ({"policy": ["oracle"]}, "`policy` is an array"),
}


@pytest.mark.parametrize("field", sorted(BAD_RESULTS))
def test_l2_every_field_of_a_result_file_is_checked(tmp_path: Path, field: str) -> None:
    value, words = BAD_RESULTS[field]
    folder = tmp_path / "run"
    for task, r in (("good", _result(task="good")), ("bad", _result(task="bad", **{field: value}))):
        (folder / task).mkdir(parents=True)
        (folder / task / "result.json").write_text(json.dumps(r))
    with pytest.raises(InfraError) as err:
        build_report([folder])
    assert err.value.kind == "bad_results" and str(folder / "bad" / "result.json") in err.value.message
    assert words in err.value.message, err.value.message
    run = build_report([folder], skip_broken=True)["runs"][0]
    assert [t["task"] for t in run["tasks"]] == ["good"] and words in run["skipped"][0]


@pytest.mark.parametrize("tasks,words", [({"../escape": {"pass": True}}, "not a usable task name"),
                                         ({"t": [True]}, "`t` is an array")])
def test_l2_l3_an_import_report_of_the_wrong_shape_is_named(tmp_path: Path, tasks: dict, words: str) -> None:
    (tmp_path / "import-report.json").write_text(json.dumps({"source": "x", "tasks": {"ok": {"pass": True}, **tasks}}))
    with pytest.raises(InfraError) as err:
        build_report([tmp_path])
    assert err.value.kind == "bad_results" and words in err.value.message, err.value.message
    run = build_report([tmp_path], skip_broken=True)["runs"][0]
    assert [t["task"] for t in run["tasks"]] == ["ok"] and len(run["skipped"]) == 1


# --- L3: a task name is one safe path component ---------------------------------------------------------

@pytest.mark.parametrize("stem", ["..", ".", ".hidden", "-rf", "a b", "x\\y"])
def test_l3_an_import_refuses_a_run_whose_file_name_is_no_task_name(tmp_path: Path, stem: str) -> None:
    src = tmp_path / "runs"
    src.mkdir()
    (src / "good.json").write_text(json.dumps(_run("good")))
    (src / f"{stem}.json").write_text(json.dumps(_run(stem)))
    out = tmp_path / "out"
    with pytest.raises(InfraError) as err:
        import_dir(src, out)
    assert err.value.kind == "bad_run" and str(src / f"{stem}.json") in err.value.message, err.value.message
    assert sorted(tmp_path.iterdir()) == [src], "nothing written: not OUT, nor a staging folder beside it"
    if stem == "..":  # `...json`, the finding's case, through the command too
        proc = decathlon("cassettes", "import-trajectories", str(src), "--out", str(out))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert f"{src / '...json'}: " in proc.stderr and "not a usable task name" in proc.stderr
        assert sorted(tmp_path.iterdir()) == [src]


def test_l3_task_names_are_toolathlons_and_nothing_that_leaves_a_folder(source: Path) -> None:
    good = ["git-release-notes", "k8s-mysql", "nhl-b2b-analysis", "a_b.c", "X1", *TASKS]
    assert [n for n in good if task_name_problem(n) is not None] == []
    bad = ["", ".", "..", "...", ".x", "-x", "a/b", "a\\b", "a\0b", "../x", "a b", "é", "a\n", "x" * 201, 7]
    assert [n for n in bad if task_name_problem(n) is None] == []
    with pytest.raises(InfraError) as err:
        cassette_path(source, "../../etc/x")
    assert err.value.kind == "bad_task"
    # a source's folder that cannot be a task name is listed with why, never run
    write_task(source, "fine")
    write_task(source, "-rf")
    assert {t.id: bool(t.error) for t in catalogue(source)} == {"-rf": True, "fine": False}
    assert select(source, [], True) == ["fine"]
    with pytest.raises(InfraError) as err:
        select(source, ["-rf"], False)
    assert err.value.kind == "bad_task" and "not a usable task name" in err.value.message
