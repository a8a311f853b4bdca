"""Seed packs at setup (decathlon/sandbox/seeds.py): state no preprocess makes, loaded through the emulators' control
sockets before the preprocess, which then sees it as it would see the vendor's; bad packs end setup as seed_failed,
named, before the agent acts. From the host, `decathlon run --seeds LIBRARY` (decathlon/core/seeds.py) hands each task
its own packs, checked once before any sandbox."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LAUNCH, REPO, write_task
from decathlon.backends.base import SandboxSpec
from decathlon.backends.local import LocalBackend
from decathlon.core import seeds as host_seeds
from decathlon.core.task_session import TaskSession, Timeouts
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


SEEN_EVALUATOR = """
import json, os, sys
from utils.general.helper import parse_args

args = parse_args()
rows = json.load(open(os.path.join(args.agent_workspace, "seen.json")))
sys.exit(0 if [r["name"] for r in rows] == ["Ada", "Bo"] else 1)
"""


def test_a_seed_library_is_checked_before_any_sandbox(tmp_path):
    lib = tmp_path / "lib"
    with pytest.raises(InfraError, match="not a folder"):
        host_seeds.library(lib, ["t"])
    (lib / "other-task" / "gcp").mkdir(parents=True)
    with pytest.raises(InfraError, match="no folder for any task of this run.*other-task"):
        host_seeds.library(lib, ["t"])
    (lib / "t" / "drive").mkdir(parents=True)
    with pytest.raises(InfraError, match="drive is no emulator's name"):
        host_seeds.library(lib, ["t", "u"])
    (lib / "t" / "drive").rmdir()
    (lib / "t" / "gcp" / "tables").mkdir(parents=True)
    (lib / "t" / "gcp" / "manifest.json").write_text("{}")
    (lib / "t" / "gcp" / "tables" / "a.parquet").write_bytes(b"x" * 10)
    (lib / "t" / "stray.txt").write_text("beside the emulators")
    with pytest.raises(InfraError, match="lies beside the emulators"):
        host_seeds.library(lib, ["t"])
    (lib / "t" / "stray.txt").unlink()
    (lib / "t" / "gcp" / "link").symlink_to("/etc/passwd")
    with pytest.raises(InfraError, match="symlink"):
        host_seeds.library(lib, ["t"])
    (lib / "t" / "gcp" / "link").unlink()
    packs = host_seeds.library(lib, ["u", "t"])
    assert list(packs) == ["t"] and packs["t"].emulators == ["gcp"] and packs["t"].size == 12
    assert packs["t"].files == ["gcp/manifest.json", "gcp/tables/a.parquet"]


@needs_root
def test_run_seeds_hands_each_task_its_own_pack_where_the_agent_cannot_read_it(tmp_path, monkeypatch):
    """`decathlon run --seeds LIB`: the task with a folder in LIB starts seeded (its preprocess sees the table, its
    evaluator passes; without the seed the same preprocess fails, as the test above shows)."""
    pack = _make_gcp_seed(tmp_path / "made")
    source = tmp_path / "src"
    shutil.copytree(PACK, source)
    write_task(source, "bq-seeded", preprocess=SEEDED_PREPROCESS, evaluator=SEEN_EVALUATOR)
    lib = tmp_path / "lib"
    shutil.copytree(pack, lib / "bq-seeded")
    env = {**os.environ, "DECATHLON_TASK_PYTHON": str(saas_python()), "DECATHLON_LOCAL_DIR": str(tmp_path / "boxes"),
           "DECATHLON_LEASE_DIR": str(tmp_path / "leases")}

    def run(*extra: str) -> dict:
        proc = subprocess.run([sys.executable, "-m", "decathlon", "run", "bq-seeded", "--source", str(source),
                               "--backend", "local", "--policy", "null", "--launch-time", LAUNCH, "--json", *extra],
                              cwd=REPO, capture_output=True, text=True, timeout=400, env=env)
        rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        assert len(rows) == 1, proc.stderr[-3000:]
        return rows[0] | {"stderr": proc.stderr}

    seeded = run("--seeds", str(lib))
    assert (seeded["reward"], seeded["infra_error"]) == (1.0, None), seeded
    assert "seed packs for 1 of 1 task(s)" in seeded["stderr"] and "bq-seeded (gcp)" in seeded["stderr"]
    assert not any((tmp_path / "boxes").iterdir())  # the episode released, its copy of the pack with it

    async def set_up_seeded() -> None:
        backend = LocalBackend()
        sandbox = await backend.acquire(SandboxSpec("run", "ep1", "bq-seeded", source))
        try:
            pack_of = host_seeds.library(lib, ["bq-seeded"])["bq-seeded"]
            where = await host_seeds.upload(sandbox, pack_of, "ep1")
            await TaskSession(sandbox, Timeouts()).setup("bq-seeded", LAUNCH, seeds=where)
            assert (sandbox.root / where / "gcp" / "manifest.json").is_file()
            state = (sandbox.root / "state").stat()  # the folder the pack lies in: root's alone, no agent enters it
            assert (state.st_uid, state.st_mode & 0o077) == (0, 0)
        finally:
            await sandbox.release()
            await backend.close()

    monkeypatch.setenv("DECATHLON_TASK_PYTHON", str(saas_python()))
    monkeypatch.setenv("DECATHLON_LOCAL_DIR", str(tmp_path / "boxes"))
    monkeypatch.setenv("DECATHLON_LEASE_DIR", str(tmp_path / "leases"))
    asyncio.run(set_up_seeded())


def test_run_refuses_a_library_it_cannot_use_before_any_sandbox(tmp_path):
    (tmp_path / "lib" / "other-task" / "gcp").mkdir(parents=True)
    mini = REPO / "fixtures" / "toolathlon-mini"
    for extra, said in ([], "no folder for any task of this run (it has folders for other-task"), \
                        (["--policy", "replay"], "a replay runs no emulator"):
        proc = subprocess.run([sys.executable, "-m", "decathlon", "run", "--all", "--source", str(mini), "--seeds",
                               str(tmp_path / "lib"), *extra], cwd=REPO, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "DECATHLON_LOCAL_DIR": str(tmp_path / "boxes")})
        assert proc.returncode == 2 and said in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert not (tmp_path / "boxes").exists()
