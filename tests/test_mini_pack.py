"""Every mini task: its oracle scores 1.0 and the null policy 0.0, through `decathlon run --json`."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import LAUNCH, MINI, REPO

TASKS = sorted(p.parent.name for p in (MINI / "tasks" / "finalpool").glob("*/task_config.json"))


def run(task: str, policy: str, tmp_path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "decathlon", "run", task, "--source", str(MINI), "--backend", "local",
                           "--policy", policy, "--json", "--launch-time", LAUNCH, "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and len(lines) == 1, (proc.stdout, proc.stderr)
    return json.loads(lines[0])


def test_pack_has_at_least_five_tasks_covering_the_contract():
    assert len(TASKS) >= 5
    configs = {t: json.loads((MINI / "tasks" / "finalpool" / t / "task_config.json").read_text()) for t in TASKS}
    assert any((MINI / "tasks" / "finalpool" / t / "preprocess" / "main.py").is_file() for t in TASKS)
    assert any((MINI / "tasks" / "finalpool" / t / "groundtruth_workspace").is_dir() for t in TASKS)
    assert any(len(c["needed_mcp_servers"]) >= 3 for c in configs.values())
    assert any("python_execute" in c["needed_local_tools"] for c in configs.values())
    assert any("time" in (MINI / "tasks" / "finalpool" / t / "docs" / "agent_system_prompt.md").read_text() for t in TASKS)
    assert any("DECATHLON_METRICS" in (MINI / "tasks" / "finalpool" / t / "evaluation" / "main.py").read_text() for t in TASKS)
    assert all((MINI / "oracles" / f"{t}.json").is_file() for t in TASKS)


@pytest.mark.parametrize("task", TASKS)
def test_oracle_scores_one(task, tmp_path):
    r = run(task, "oracle", tmp_path)
    assert r["infra_error"] is None, r["infra_error"]
    assert r["reward"] == 1.0 and r["pass"] is True and r["status"] == "passed" and r["agent_status"] == "success"
    assert {"acquire", "setup", "agent", "evaluate", "release"} <= set(r["timings"])
    setup_steps = {"services", "preprocess", "servers", "preflight"}
    assert set(r["timings"]) - {"acquire", "setup", "agent", "evaluate", "release"} <= setup_steps
    art = tmp_path / "out" / task
    traj = json.loads((art / "traj_log.json").read_text())
    assert traj["status"] == "success" and traj["messages"][0]["role"] == "system"
    assert json.loads((art / "result.json").read_text())["reward"] == 1.0


@pytest.mark.parametrize("task", TASKS)
def test_null_policy_scores_zero(task, tmp_path):
    r = run(task, "null", tmp_path)
    assert r["infra_error"] is None, r["infra_error"]
    assert r["reward"] == 0.0 and r["pass"] is False


def test_partial_credit_reaches_the_metrics(tmp_path):
    r = run("excel-grade-report", "oracle", tmp_path / "oracle")
    assert r["metrics"] == {"checks_passed": 6.0, "checks_total": 6.0, "fraction": 1.0}
    r = run("excel-grade-report", "null", tmp_path / "null")
    assert r["metrics"]["checks_total"] == 6.0 and r["metrics"]["fraction"] < 1.0


def test_answer_depends_on_launch_time(tmp_path):
    """The deadlines oracle computes from the clock it was given; the evaluator checks with the same clock."""
    proc = subprocess.run([sys.executable, "-m", "decathlon", "run", "project-deadlines", "--source", str(MINI),
                           "--policy", "oracle", "--json", "--launch-time", "2027-12-30 18:00:00"],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert json.loads(proc.stdout)["reward"] == 1.0
