"""Seed packs at setup (decathlon/sandbox/seeds.py): state no preprocess makes, loaded through the emulators' control
sockets before the preprocess, which then sees it as it would see the vendor's; bad packs end setup as seed_failed,
named, before the agent acts."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import LAUNCH, REPO, write_task
from decathlon.emulators.gcp.credentials import PROJECT_ID
from decathlon.emulators.kit import control_client, spawn
from decathlon.errors import InfraError, Kind
from decathlon.sandbox import seeds
from lines import readline
from saas_venv import saas_python

PACK = REPO / "fixtures" / "toolathlon-saas"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the local backend gives an episode its own network "
                                "namespace, which needs root (CI runs as root)")

# Reads a table only a seed holds; says what it saw in the workspace (the agent's, as a preprocess leaves files).
SEEDED_PREPROCESS = """
import json, os
from google.cloud import bigquery
from utils.app_specific.gcp import clients
from utils.general.helper import parse_args

args = parse_args()
project, bq, _gcs, _logging, _config = clients()
rows = [dict(r) for r in bq.query(f"SELECT name, tier FROM `{project}.crm.customers` ORDER BY name").result()]
with open(os.path.join(args.agent_workspace, "seen.json"), "w") as f:
    json.dump(rows, f)
print(f"saw {len(rows)} seeded customers")
"""


def test_a_seed_folder_is_named_for_emulators(tmp_path):
    assert seeds.emulators(None) == []
    with pytest.raises(InfraError) as bad:
        seeds.emulators(tmp_path / "nowhere")
    assert bad.value.kind == Kind.SEED_FAILED
    with pytest.raises(InfraError, match="no emulator's folder"):
        seeds.emulators(tmp_path)
    (tmp_path / "gcp").mkdir()
    (tmp_path / "drive").mkdir()
    with pytest.raises(InfraError, match="drive is no emulator's name"):
        seeds.emulators(tmp_path)
    shutil.rmtree(tmp_path / "drive")
    assert seeds.emulators(tmp_path) == ["gcp"]
    with pytest.raises(InfraError, match="does not run"):
        seeds.check_running(["gcp"], [], None)
    with pytest.raises(InfraError, match="does not run"):
        seeds.check_running(["mail"], ["canvas"], [])
    seeds.check_running(["gcp", "mail"], ["mail"], [])


def _make_gcp_seed(tmp_path: Path) -> Path:
    """A gcp snapshot holding `<episode project>.crm.customers`, made through the emulator's own API and socket."""
    control = tmp_path / "control"
    tmp_path.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(spawn.command(str(saas_python()), "gcp", tmp_path, control=control),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        port = spawn.parse_ready(readline(proc).decode(), "gcp")["http"]
        code = f"""
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery
bq = bigquery.Client(project={PROJECT_ID!r}, credentials=AnonymousCredentials())
bq.create_dataset("{PROJECT_ID}.crm")
bq.query("CREATE TABLE `{PROJECT_ID}.crm.customers` AS SELECT 'Ada' AS name, 'gold' AS tier "
         "UNION ALL SELECT 'Bo', 'silver'").result()
"""
        out = subprocess.run([str(saas_python()), "-c", code], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "BIGQUERY_EMULATOR_HOST": f"http://127.0.0.1:{port}"})
        assert out.returncode == 0, out.stderr[-2000:]
        control_client.snapshot(control / "gcp.sock", "snap")
        pack = tmp_path / "seeds"
        shutil.copytree(control / "snap", pack / "gcp")
        return pack
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)


@needs_root
def test_a_seed_is_in_before_the_preprocess_and_the_agent_cannot_reach_its_socket(tmp_path, task_api, monkeypatch):
    monkeypatch.setenv("DECATHLON_TASK_PYTHON", str(saas_python()))
    pack = _make_gcp_seed(tmp_path / "made")
    source = tmp_path / "src"
    shutil.copytree(PACK, source)
    write_task(source, "bq-seeded", preprocess=SEEDED_PREPROCESS)
    err = task_api.error("setup", "bq-seeded", "--source", str(source), "--launch-time", LAUNCH, timeout=300)
    assert err["kind"] == "preprocess_failed" and "crm" in err["message"], err  # without the seed, nothing there
    task_api.run("teardown")
    out = task_api.ok("setup", "bq-seeded", "--source", str(source), "--launch-time", LAUNCH, "--seeds", str(pack),
                      timeout=300)
    workspace = Path(out["workspace"]) if "workspace" in out else task_api.home / "workspace"
    assert json.loads((workspace / "seen.json").read_text()) == [{"name": "Ada", "tier": "gold"},
                                                                 {"name": "Bo", "tier": "silver"}]
    control = task_api.home / "services" / "control"
    assert (control / "gcp.sock").is_socket()
    assert control.stat().st_mode & 0o077 == 0 and (control / "gcp.sock").stat().st_mode & 0o077 == 0
    agent = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "ls", str(control)],
                           capture_output=True, text=True, timeout=10)
    assert agent.returncode != 0  # another user cannot even list it


@needs_root
def test_a_pack_the_emulator_refuses_ends_setup_as_seed_failed_naming_it(tmp_path, task_api, monkeypatch):
    monkeypatch.setenv("DECATHLON_TASK_PYTHON", str(saas_python()))
    source = tmp_path / "src"
    shutil.copytree(PACK, source)
    write_task(source, "bq-seeded", preprocess=SEEDED_PREPROCESS)
    pack = tmp_path / "seeds" / "gcp"
    pack.mkdir(parents=True)
    (pack / "manifest.json").write_text(json.dumps({"emulator": "snowflake", "format": 1}))
    err = task_api.error("setup", "bq-seeded", "--source", str(source), "--launch-time", LAUNCH, "--seeds",
                         str(tmp_path / "seeds"), timeout=300)
    assert err["kind"] == "seed_failed" and "gcp" in err["message"] and "snowflake" in err["message"], err
