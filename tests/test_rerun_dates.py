"""Reruns of any model's runs, made on another day (issue 31, item 6), through our own task whose evaluator is dated:
`bq-daily-leaderboard` (fixtures/toolathlon-saas) grades the leaderboard of the launch day, so a recorded run's
literal date (`WHERE DATE(played_at) = DATE '2026-03-05'`) only passes at the day it was made. Its two recorded runs
(fixtures/recorded-runs/<day>/, made by fixtures/recorded-runs/make.py on 2026-03-02 and 2026-03-05) show the project
masked as a published run does (`t********n`), in their SQL too, and print `datetime.now()` from python-execute.

Each is imported (its day read from its outputs) and re-executed against the real google-cloud-mcp and the emulators,
graded by the task's real evaluator: the same verdict as recorded, each under its own date; the agent's code sees
the recorded day; the masked project reaches the emulator as the episode's own."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from conftest import LAUNCH, REPO
from decathlon.recordings.importer import import_dir
from saas_venv import SERVERS, require, saas_python

PACK = REPO / "fixtures" / "toolathlon-saas"
RUNS = REPO / "fixtures" / "recorded-runs"
TASK = "bq-daily-leaderboard"
DAYS = {"2026-03-02": "2026-03-02 09:00:10 Monday", "2026-03-05": "2026-03-05 14:30:13 Thursday"}

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the local backend gives an episode its own network "
                                "namespace, which needs root (CI runs as root)")


@pytest.fixture(autouse=True)
def task_python(monkeypatch):
    """The pack's scripts import the vendors' clients: the SaaS virtualenv has them."""
    monkeypatch.setenv("DECATHLON_TASK_PYTHON", str(saas_python()))
    require(SERVERS / "google-cloud" / "bin" / "python", "`python ci/install_servers.py` builds it")


def decathlon(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "decathlon", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)


def episode(proc: subprocess.CompletedProcess, out: Path) -> tuple[dict, list[dict], str]:
    """The one episode's result row, its conversation, and the launch time it ran at."""
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    (row,) = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    folder = out / TASK
    messages = json.loads((folder / "messages.json").read_text())
    launch = json.loads((folder / "traj_log.json").read_text())["config"]["launch_time"]
    return row, messages, launch


def rerun(cassettes: Path, out: Path, *extra: str) -> tuple[dict, list[dict], str]:
    proc = decathlon("run", TASK, "--source", str(PACK), "--mode", "rerun", "--policy", "replay", "--cassettes",
                     str(cassettes), "--backend", "local", "--json", "--out", str(out), *extra)
    return episode(proc, out)


def shown(messages: list[dict], tool: str) -> list[str]:
    ids = {c["id"] for m in messages for c in m.get("tool_calls") or [] if c["function"]["name"] == tool}
    return [m["content"] for m in messages if m.get("role") == "tool" and m.get("tool_call_id") in ids]


def sent(messages: list[dict], tool: str) -> list[str]:
    return [c["function"]["arguments"] for m in messages for c in m.get("tool_calls") or []
            if c["function"]["name"] == tool]


def test_the_dated_task_passes_its_oracle_and_fails_the_null_policy(tmp_path):
    for policy, want in (("oracle", True), ("null", False)):
        proc = decathlon("run", TASK, "--source", str(PACK), "--policy", policy, "--json", "--launch-time", LAUNCH,
                         "--out", str(tmp_path / policy))
        row, _, launch = episode(proc, tmp_path / policy)
        assert row["infra_error"] is None and row["pass"] is want, (policy, row, proc.stderr[-3000:])
        assert launch.startswith(LAUNCH)


@pytest.mark.parametrize("day", sorted(DAYS))
def test_a_run_made_on_either_day_reruns_to_its_recorded_verdict_at_its_own_date(day, tmp_path):
    recorded = json.loads((RUNS / day / f"{TASK}.json").read_text())
    assert recorded["pass"] is True
    report = import_dir(RUNS / day, tmp_path / "imported")
    assert report["tasks"][TASK]["launch"]["launch_time"] == DAYS[day]

    row, messages, launch = rerun(tmp_path / "imported" / "cassettes", tmp_path / "out")
    assert row["infra_error"] is None and row["recorded_pass"] is True and row["pass"] is True, row
    assert launch == DAYS[day]  # preprocess and evaluator ran at the recorded day
    # the agent's own `datetime.now().date()` printed the recording's day, not the machine's
    (python,) = shown(messages, "local-python-execute")
    assert f"Today: {day}" in python, python
    # the masked project of the recorded SQL reached the emulator as the episode's own project
    recorded_sql = [q for q in sent(recorded["messages"], "google-cloud-bigquery_run_query") if "CREATE" in q]
    live_sql = [q for q in sent(messages, "google-cloud-bigquery_run_query") if "CREATE" in q]
    assert "t********n.fixture_games" in recorded_sql[0] and "decathlon-emulated.fixture_games" in live_sql[0]


def test_a_run_rerun_at_another_day_than_its_own_fails(tmp_path):
    """The control: the day matters to this task, so the passes above are the dates' doing."""
    import_dir(RUNS / "2026-03-05", tmp_path / "imported", {TASK: "2026-03-02 09:00:00"})
    row, _, launch = rerun(tmp_path / "imported" / "cassettes", tmp_path / "out")
    assert launch == "2026-03-02 09:00:00 Monday"
    assert row["infra_error"] is None and row["recorded_pass"] is True and row["pass"] is False, row


def test_without_the_frozen_clock_the_agents_code_reads_the_machines(tmp_path):
    import_dir(RUNS / "2026-03-02", tmp_path / "imported")
    row, messages, launch = rerun(tmp_path / "imported" / "cassettes", tmp_path / "out", "--no-frozen-clock")
    assert row["infra_error"] is None, row
    assert launch == DAYS["2026-03-02"]  # the scripts are still told the recorded launch time
    (python,) = shown(messages, "local-python-execute")
    assert f"Today: {datetime.now().date()}" in python, python
