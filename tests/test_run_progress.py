"""What `decathlon run` shows while it runs and when it ends: each episode's phase (setup's own steps among
them) as lines when piped, setup's steps in the timings, a truthful status, no reward on an infra error's line,
and a result table that stays readable in narrow output (COLUMNS honoured when piped)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from conftest import LAUNCH, MINI, REPO


def run(*args: str, columns: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run([sys.executable, "-m", "decathlon", "run", *args, "--launch-time", LAUNCH], capture_output=True,
                          text=True, timeout=300, cwd=REPO, env=env)


def test_piped_runs_say_each_phase_and_the_setup_steps_are_timed():
    proc = run("csv-sales-summary", "--source", str(MINI), "--policy", "oracle", "--backend", "local", "--json")
    assert proc.returncode == 0, proc.stderr
    phases = re.findall(r"^csv-sales-summary: ([a-z][a-z :]*) \(\d+\.\d s\)$", proc.stderr, re.M)
    assert phases[0] == "acquire" and phases[-1] == "release", proc.stderr
    assert [p for p in phases if not p.startswith("setup: ")] == ["acquire", "setup", "agent", "evaluate", "release"]
    (row,) = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert row["status"] == "passed" and row["agent_status"] == "success"
    assert {"preprocess", "servers"} <= set(row["timings"]) and row["timings"]["setup"] >= row["timings"]["servers"]


def test_an_infra_errors_line_shows_no_reward_and_its_status_says_so(tmp_path):
    broken = tmp_path / "src"
    subprocess.run(["cp", "-r", str(MINI), str(broken)], check=True)
    (broken / "tasks" / "finalpool" / "project-deadlines" / "preprocess" / "main.py").write_text("raise SystemExit(3)\n")
    proc = run("project-deadlines", "--source", str(broken), "--policy", "oracle", "--backend", "local", "--json")
    assert proc.returncode == 1
    assert "project-deadlines: infra error preprocess_failed (no reward)" in proc.stderr, proc.stderr
    assert "reward 0.00" not in proc.stderr
    (row,) = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert row["status"] == "infra_error"


def test_a_narrow_pipe_gets_the_compact_table_with_whole_task_names():
    proc = run("csv-sales-summary", "excel-grade-report", "--source", str(MINI), "--policy", "null", "--backend", "local",
               columns="80")
    assert proc.returncode == 0, proc.stderr
    table = [line for line in proc.stdout.splitlines() if line.startswith(("┃", "│"))]
    assert table and all(len(line) <= 80 for line in table), proc.stdout
    assert "acquire" not in proc.stdout and "error" in table[0]
    assert "csv-sales-summary" in proc.stdout and "excel-grade-report" in proc.stdout and "…" not in proc.stdout
    wide = run("csv-sales-summary", "--source", str(MINI), "--policy", "null", "--backend", "local", columns="200")
    assert "acquire" in wide.stdout
