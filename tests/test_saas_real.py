"""`--saas real` (issue 24, item 7; issue 23, item 7): with the user's own accounts, what is missing is said
once, before any sandbox, naming the fix; the sandbox side installs no front and leaves the user's files."""
from __future__ import annotations

import os
import subprocess
import sys
import time

from conftest import LAUNCH, REPO
from decathlon.sandbox import saas
from decathlon.sandbox.taskdef import load_task

PACK = REPO / "fixtures" / "toolathlon-saas"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k != "DECATHLON_TOKEN_KEY_SESSION"}
    return subprocess.run([sys.executable, "-m", "decathlon", "run", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**clean, **(env or {})})


def test_real_saas_without_the_users_token_session_is_refused_before_any_sandbox():
    began = time.monotonic()
    p = run("bq-region-totals", "sf-overdue-flags", "--source", str(PACK), "--policy", "null", "--saas", "real",
            "--launch-time", LAUNCH)
    assert p.returncode != 0
    assert "DECATHLON_TOKEN_KEY_SESSION is not set" in p.stderr
    assert "bq-region-totals, sf-overdue-flags" in p.stderr
    assert "decathlon: run " not in p.stderr  # refused before a run (and its sandboxes) began
    assert time.monotonic() - began < 30


def test_real_saas_names_the_missing_key_files(tmp_path):
    tks = tmp_path / "token_key_session.py"
    tks.write_text("all_token_key_session = {}\n")
    p = run("sf-overdue-flags", "--source", str(PACK), "--policy", "null", "--saas", "real", "--launch-time", LAUNCH,
            env={"DECATHLON_TOKEN_KEY_SESSION": str(tks)})
    assert p.returncode != 0
    assert "configs/snowflake_rsa_key.p8 is not there" in p.stderr


def test_only_tasks_that_reach_an_emulated_vendor_get_the_front():
    assert saas.emulators_for(load_task(PACK, "bq-region-totals")) == ["gcp", "gcplogging"]
    assert saas.emulators_for(load_task(PACK, "sf-overdue-flags")) == ["snowflake"]
    assert saas.emulators_for(load_task(PACK, "sf-overdue-flags"), "real") is None
    mini = load_task(REPO / "fixtures" / "toolathlon-mini", "csv-sales-summary")
    assert saas.emulators_for(mini) is None


def test_a_task_whose_scripts_use_a_vendor_without_naming_its_server_gets_the_front(tmp_path):
    from conftest import write_task
    write_task(tmp_path, "forms-no-server", servers=["filesystem"],
               preprocess="from googleapiclient.discovery import build\n")
    assert saas.emulators_for(load_task(tmp_path, "forms-no-server")) == []  # the front, its emulators on first use
