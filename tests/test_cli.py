"""The `decathlon` CLI contract that later issues and their checks rely on."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

from conftest import LAUNCH, MINI, PASSING_EVALUATOR, REPO, write_task
from lines import readline


def decathlon(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "decathlon", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def test_tasks_json_lists_ids_and_servers():
    proc = decathlon("tasks", "--source", str(MINI), "--json")
    assert proc.returncode == 0, proc.stderr
    tasks = json.loads(proc.stdout)
    ids = [t["id"] for t in tasks]
    assert ids == sorted(ids) and "excel-grade-report" in ids
    grade = next(t for t in tasks if t["id"] == "excel-grade-report")
    assert sorted(grade["servers"]) == ["excel", "filesystem", "word"]


def test_tasks_table():
    proc = decathlon("tasks", "--source", str(MINI))
    assert proc.returncode == 0 and "csv-sales-summary" in proc.stdout


def test_unknown_task_lists_close_matches():
    proc = decathlon("run", "exel-grade-report", "--source", str(MINI), "--policy", "oracle")
    assert proc.returncode == 2 and "excel-grade-report" in proc.stderr and "Traceback" not in proc.stderr


def test_bad_source_and_policy_are_clear_errors(tmp_path):
    proc = decathlon("tasks", "--source", str(tmp_path))
    assert proc.returncode == 2 and "not a Toolathlon root" in proc.stderr
    proc = decathlon("run", "csv-sales-summary", "--source", str(MINI), "--policy", "gpt")
    assert proc.returncode == 2 and "unknown policy" in proc.stderr


def test_infra_error_gives_nonzero_exit_and_is_reported(source):
    write_task(source, "no-eval", evaluator=None)
    (source / "oracles").mkdir()
    (source / "oracles" / "no-eval.json").write_text(json.dumps({"task": "no-eval", "steps": [
        {"tool": "local-claim_done", "arguments": {}}]}))
    proc = decathlon("run", "no-eval", "--source", str(source), "--policy", "oracle", "--json", "--launch-time", LAUNCH)
    assert proc.returncode == 1, proc.stderr
    r = json.loads(proc.stdout)
    assert r["infra_error"]["kind"] == "evaluator_missing" and r["pass"] is None and r["reward"] == 0.0


def test_max_turns_is_not_a_pass_and_not_an_infra_error(source):
    write_task(source, "looper", evaluator=PASSING_EVALUATOR, local_tools=["claim_done", "sleep"])
    (source / "oracles").mkdir()
    (source / "oracles" / "looper.json").write_text(json.dumps({"task": "looper", "steps": [
        {"tool": "local-sleep", "arguments": {"seconds": 0}}] * 5}))
    proc = decathlon("run", "looper", "--source", str(source), "--policy", "oracle", "--json", "--max-turns", "3")
    r = json.loads(proc.stdout)
    assert proc.returncode == 0 and r["status"] == "max_turns_reached" and r["pass"] is None and r["reward"] == 0.0
    assert r["turns"] == 3


def test_table_output_and_gc():
    proc = decathlon("run", "csv-sales-summary", "--source", str(MINI), "--policy", "null", "--launch-time", LAUNCH)
    assert proc.returncode == 0 and "csv-sales-summary" in proc.stdout and "reward" in proc.stdout
    proc = decathlon("gc", "--backend", "local", "--run", "no-such-run")
    assert proc.returncode == 0 and json.loads(proc.stdout) == {"removed": 0, "skipped_live": 0, "skipped_foreign": 0,
                                                        "runs": []}


def test_manage_context_shortens_what_the_policy_sees_but_not_the_log(source):
    write_task(source, "ctx", local_tools=["claim_done", "manage_context", "python_execute"], evaluator="""
import argparse, json, pathlib, sys
p = argparse.ArgumentParser()
for a in ("--res_log_file", "--agent_workspace", "--groundtruth_workspace", "--launch_time"):
    p.add_argument(a)
a = p.parse_args()
log = json.loads(pathlib.Path(a.res_log_file).read_text())
sys.exit(0 if pathlib.Path(a.agent_workspace, "done.txt").is_file() and len(log["messages"]) == 10 else 1)
""")
    (source / "oracles").mkdir()
    (source / "oracles" / "ctx.json").write_text(json.dumps({"task": "ctx", "steps": [
        {"tool": "local-python-execute", "arguments": {"code": "print(1)"}},
        {"tool": "local-manage_context", "arguments": {"keep_last_turns": 0}},
        {"tool": "local-python-execute", "arguments": {"code": "open('done.txt', 'w').write('x')"}},
        {"tool": "local-claim_done", "arguments": {}}]}))
    proc = decathlon("run", "ctx", "--source", str(source), "--policy", "oracle", "--json")
    r = json.loads(proc.stdout)
    assert r["infra_error"] is None and r["pass"] is True and r["tool_calls"] == 4


def test_openai_policy_drives_an_episode_through_a_chat_completions_endpoint():
    """Any OpenAI-compatible endpoint: here `decathlon serve-policy`, which answers as the oracle would."""
    import re
    server = subprocess.Popen([sys.executable, "-m", "decathlon", "serve-policy", "--source", str(MINI), "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+/v1", readline(server, what="serve-policy's URL"))
        assert url, server.stderr.read() if server.poll() is not None else "no URL printed"
        env = {**os.environ, "OPENAI_BASE_URL": url.group(0), "OPENAI_API_KEY": "unused"}
        proc = subprocess.run([sys.executable, "-m", "decathlon", "run", "csv-sales-summary", "--source", str(MINI),
                               "--policy", "openai:oracle", "--json", "--launch-time", LAUNCH],
                              capture_output=True, text=True, timeout=300, cwd=REPO, env=env)
        r = json.loads(proc.stdout)
        assert proc.returncode == 0 and r["infra_error"] is None and r["reward"] == 1.0 and r["turns"] == 4, proc.stderr
    finally:
        server.terminate()
        server.wait(timeout=15)


def test_run_level_mistakes_are_said_once_before_any_sandbox(tmp_path):
    """An unreachable model endpoint, a launch time that is none, the oracle policy on a source without oracles:
    each is wrong for the whole run, so it is said once before the first sandbox (exit 2, nothing under
    --out), never as one infra error per episode after its setup."""
    env = {**os.environ, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "unused"}
    no_oracles = tmp_path / "src"
    shutil.copytree(MINI, no_oracles, ignore=shutil.ignore_patterns("oracles"))
    cases = [
        (["csv-sales-summary", "--source", str(MINI), "--policy", "openai:m"], "does not answer"),
        (["csv-sales-summary", "--source", str(MINI), "--launch-time", "2026-13-01 09:00:00"], "is not a launch time"),
        (["--all", "--source", str(no_oracles), "--policy", "oracle"], "needs an oracle per task"),
        # into --out, a task named twice would overwrite its first episode's artifacts with the second's
        (["csv-sales-summary", "csv-sales-summary", "--source", str(MINI)], "--repeats K"),
    ]
    for i, (args, said) in enumerate(cases):
        out = tmp_path / f"out{i}"
        proc = subprocess.run([sys.executable, "-m", "decathlon", "run", *args, "--json", "--out", str(out)],
                              capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
        assert proc.returncode == 2 and said in proc.stderr and proc.stdout == "", (args, proc.stderr)
        assert not list(out.rglob("result.json")), args  # no episode ran


def test_the_table_shows_every_error_whole(source):
    """The run's table names the kind; the whole message, cause and fix, follows it (it used to be cut at
    80 characters, dropping both)."""
    write_task(source, "no-eval", evaluator=None)
    (source / "oracles").mkdir()
    (source / "oracles" / "no-eval.json").write_text(json.dumps({"task": "no-eval", "steps": [
        {"tool": "local-claim_done", "arguments": {}}]}))
    as_json = decathlon("run", "no-eval", "--source", str(source), "--policy", "oracle", "--json", "--launch-time", LAUNCH)
    message = json.loads(as_json.stdout)["infra_error"]["message"]
    assert len(message) > 100, message
    proc = decathlon("run", "no-eval", "--source", str(source), "--policy", "oracle", "--launch-time", LAUNCH)
    assert proc.returncode == 1, proc.stderr
    # rich wraps long lines at the terminal's width, inside a long path too: compared without whitespace, the
    # episode's own folder masked
    def words(text: str) -> str:
        return re.sub(r"decathlon-ep-[\w-]+", "EPISODE", "".join(text.split()))
    assert words(message) in words(proc.stdout), proc.stdout


def test_a_rerun_table_shows_the_recorded_verdict_beside_the_real_one():
    proc = subprocess.run([sys.executable, "-m", "decathlon", "run", "csv-sales-summary", "--source", str(MINI),
                           "--mode", "rerun", "--policy", "replay", "--backend", "local", "--trust-recorded-code",
                           "--launch-time", LAUNCH], capture_output=True, text=True, timeout=300, cwd=REPO,
                          env={**os.environ, "COLUMNS": "250"})
    assert proc.returncode == 0, proc.stderr
    header = next(line for line in proc.stdout.splitlines() if "task" in line and "reward" in line)
    row = next(line for line in proc.stdout.splitlines() if "csv-sales-summary" in line)
    cells = [c.strip() for c in row.split("│")[1:-1]]
    names = [c.strip() for c in header.split("┃")[1:-1]]
    assert "recorded pass" in names and cells[names.index("recorded pass")] == "True", proc.stdout
