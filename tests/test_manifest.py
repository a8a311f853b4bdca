"""The 108-task manifest: generated from the facts table, listed by the catalogue, drift reported."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO, write_task
from decathlon.checkout import manifest

TABLE = manifest.data_dir() / "tasks.csv"
REQUIRED = os.environ.get("DECATHLON_REQUIRE_TRAJECTORIES") == "1"


@pytest.fixture(scope="module")
def facts():
    if not TABLE.is_file():
        msg = f"no Toolathlon facts table at {TABLE}: set DECATHLON_TOOLATHLON_DATA to the folder holding tasks.csv"
        pytest.fail(msg) if REQUIRED else pytest.skip(msg)
    return manifest.generate(TABLE)


def test_manifest_has_the_108_tasks_and_the_conflict_groups(facts):
    ids = [t["id"] for t in facts["tasks"]]
    assert len(ids) == 108 and ids == sorted(ids)
    by_id = {t["id"]: t for t in facts["tasks"]}
    assert by_id["student-interview"]["conflict_group"] == ["set-conf-cr-ddl", "student-interview"]
    assert by_id["huggingface-upload"]["conflict_group"] == ["dataset-license-issue", "huggingface-upload"]
    assert by_id["woocommerce-product-recall"]["conflict_group"] == ["woocommerce-customer-survey",
                                                                      "woocommerce-product-recall"]
    assert by_id["ab-testing"]["servers"] == ["google-cloud", "filesystem"]
    assert by_id["ab-testing"]["credentials"] and by_id["arrange-workspace"]["credentials"] == []
    classes = {t["offline_class"] for t in facts["tasks"]}
    assert classes == {"A1_offline_pure_local", "A2_offline_with_local_services", "B_public_internet_no_creds",
                       "C_external_credentials"}


def test_catalogue_lists_the_manifest(facts):
    proc = subprocess.run([sys.executable, "-m", "decathlon", "tasks", "--source", "toolathlon-manifest", "--json"],
                          capture_output=True, text=True, cwd=REPO, timeout=60)
    tasks = json.loads(proc.stdout)
    assert proc.returncode == 0 and len(tasks) == 108 and all({"id", "servers"} <= set(t) for t in tasks)


def test_drift_of_a_checkout(facts, source):
    write_task(source, "ab-testing", servers=["google-cloud", "filesystem"],
               local_tools=["claim_done", "python_execute", "handle_overlong_tool_outputs", "manage_context", "history"],
               preprocess="pass\n")
    write_task(source, "arrange-workspace", servers=["filesystem"], local_tools=["claim_done"])
    write_task(source, "not-a-toolathlon-task", servers=[], local_tools=["claim_done"])
    found = manifest.drift(facts, {t: {"servers": json.loads((source / "tasks" / "finalpool" / t / "task_config.json")
                                                            .read_text())["needed_mcp_servers"],
                                      "local_tools": json.loads((source / "tasks" / "finalpool" / t / "task_config.json")
                                                                .read_text())["needed_local_tools"],
                                      "has_preprocess": (source / "tasks" / "finalpool" / t / "preprocess").is_dir()}
                                   for t in ("ab-testing", "arrange-workspace", "not-a-toolathlon-task")})
    assert "not in the manifest: not-a-toolathlon-task" in found
    assert any(f.startswith("arrange-workspace: servers differ") and "lacks ['excel', 'pdf-tools', 'terminal']" in f
               for f in found)
    assert not any(f.startswith("ab-testing:") for f in found)
    assert sum(f.startswith("missing from the checkout:") for f in found) == 106
    proc = subprocess.run([sys.executable, "-m", "decathlon", "tasks", "--source", str(source), "--check-manifest"],
                          capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 1 and "not in the manifest: not-a-toolathlon-task" in proc.stdout
