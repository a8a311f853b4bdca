"""Episodes on emulated SaaS, through our own two tasks in the checkout's conventions (fixtures/toolathlon-saas):
the tasks' scripts use the vendors' unmodified clients at the real host names, the agent's servers are the
real google-cloud-mcp and our snowflake stand-in; the SaaS front and the episode's emulators answer them."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lines import readline
from conftest import LAUNCH, REPO, TaskApi
from saas_venv import SERVERS, require, saas_python

PACK = REPO / "fixtures" / "toolathlon-saas"
TASKS = ["bq-region-totals", "sf-overdue-flags"]
ORACLE = {t: json.loads((PACK / "oracles" / f"{t}.json").read_text())["steps"] for t in TASKS}


@pytest.fixture(autouse=True)
def task_python(monkeypatch):
    """The pack's scripts import the vendors' clients: the SaaS virtualenv has them (a checkout's task env does too)."""
    monkeypatch.setenv("DECATHLON_TASK_PYTHON", str(saas_python()))
    for env in ("google-cloud", "snowflake"):
        require(SERVERS / env / "bin" / "python", "`python ci/install_servers.py` builds it")


def decathlon(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "decathlon", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)


def rows(proc: subprocess.CompletedProcess) -> list[dict]:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def _messages(tmp: Path) -> str:
    path = tmp / "messages.json"
    path.write_text(json.dumps([{"role": "user", "content": "x"}]))
    return str(path)


def _play(api: TaskApi, task: str) -> None:
    for step in ORACLE[task]:
        if step["tool"].startswith("local-"):
            continue
        out = api.ok("execute", step["tool"], json.dumps(step["arguments"]), timeout=120)
        assert not out.get("is_error"), out


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the local backend gives an episode its own network "
                                "namespace, which needs root (CI runs as root)")


@needs_root
def test_null_policy_runs_the_real_scripts_against_the_emulators_and_scores_zero():
    proc = decathlon("run", *TASKS, "--source", str(PACK), "--policy", "null", "--json", "--launch-time", LAUNCH)
    got = {r["task"]: r for r in rows(proc)}
    assert sorted(got) == TASKS, proc.stderr[-3000:]
    for task, r in got.items():
        assert r["infra_error"] is None and r["pass"] is False, (task, r)


@needs_root
@pytest.mark.parametrize("task", TASKS)
def test_the_oracle_passes_through_the_real_servers(task):
    proc = decathlon("run", task, "--source", str(PACK), "--policy", "oracle", "--json", "--launch-time", LAUNCH)
    (r,) = rows(proc)
    assert r["infra_error"] is None and r["pass"] is True, (r, proc.stderr[-3000:])


def test_bigquerys_refusals_reach_the_agent_through_the_real_google_cloud_server(task_api):
    """What real BigQuery refuses, the emulator refuses before running it, in BigQuery's words and positions, and the
    real google-cloud-mcp shows it to the agent as it would show BigQuery's (a recorded run shows this refusal)."""
    task_api.ok("setup", "bq-region-totals", "--source", str(PACK), "--launch-time", LAUNCH, timeout=300)
    refused = task_api.ok("execute", "google-cloud-bigquery_run_query", json.dumps(
        {"query": "SELECT region,\n       TIMESTAMP_MILLIS(ordered_at) AS t\nFROM `fixture_sales.orders`"}), timeout=120)
    text = json.dumps(refused)
    assert "No matching signature for function TIMESTAMP_MILLIS" in text, refused
    assert "Argument types: TIMESTAMP" in text and "at [2:8]" in text, refused
    ran = task_api.ok("execute", "google-cloud-bigquery_run_query", json.dumps(
        {"query": "SELECT COUNT(*) AS n FROM `fixture_sales.orders` WHERE UNIX_MILLIS(ordered_at) > 0"}), timeout=120)
    assert ran["is_error"] is False and "Row 1: {'n': 8}" in json.dumps(ran["content"]), ran


@pytest.mark.parametrize("task", TASKS)
def test_two_concurrent_episodes_each_have_their_own_vendor_state(task, tmp_path):
    """One episode does the task, the other does nothing: sharing an account, both would pass (or the second
    preprocess would undo the first's work)."""
    done, idle = TaskApi(tmp_path / "done"), TaskApi(tmp_path / "idle")
    try:
        for api in (done, idle):
            api.ok("setup", task, "--source", str(PACK), "--launch-time", LAUNCH, timeout=300)
        _play(done, task)
        passed = done.ok("evaluate", "--messages", _messages(tmp_path), timeout=300)
        failed = idle.ok("evaluate", "--messages", _messages(tmp_path), timeout=300)
        assert passed["pass"] is True, passed
        assert failed["pass"] is False, failed
    finally:
        done.run("teardown")
        idle.run("teardown")


def test_an_emulator_that_dies_mid_episode_is_named(task_api, tmp_path):
    task_api.ok("setup", "sf-overdue-flags", "--source", str(PACK), "--launch-time", LAUNCH, timeout=300)
    logs = task_api.home / "services" / "logs"
    line = next(x for x in (logs / "front.log").read_text().splitlines() if "snowflake emulator is ready" in x)
    os.kill(int(line.split("(pid ")[1].rstrip(")")), signal.SIGKILL)
    deadline = time.monotonic() + 10
    while "killed by SIGKILL" not in (logs / "front.log").read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    err = task_api.error("evaluate", "--messages", _messages(tmp_path), "--status", "success")
    assert err["kind"] == "service_died", err
    assert "SaaS front" in err["message"] and "snowflake emulator" in err["message"], err


def test_real_saas_reaches_the_vendor_through_the_users_network_with_the_users_accounts(task_api, tmp_path, monkeypatch):
    """`--saas real` cannot be tried against Snowflake from here: the "vendor" is our front and emulators started
    outside the episode, reached through the user's own proxy variables, with the user's own token session and key
    file. The episode installs no front of its own and makes no credentials."""
    outside = tmp_path / "outside"
    (outside / "logs").mkdir(parents=True)
    front = subprocess.Popen([sys.executable, "-m", "decathlon.emulators.front", "--root", str(outside), "--home",
                              str(outside), "--logs", str(outside / "logs")], stdout=subprocess.PIPE,
                             env={**os.environ, "DECATHLON_SAAS_PYTHON": str(saas_python())})
    try:
        assert front.stdout is not None
        port = json.loads(readline(front, what="the front's ready line").decode().split(" ", 2)[2])["http"]
        source = tmp_path / "checkout"
        shutil.copytree(PACK, source)
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        (source / "configs" / "snowflake_rsa_key.p8").write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        tks = tmp_path / "token_key_session.py"
        tks.write_text("all_token_key_session = " + repr({
            "snowflake_account": "USERS-OWN", "snowflake_user": "ME", "snowflake_role": "ACCOUNTADMIN",
            "snowflake_warehouse": "COMPUTE_WH", "snowflake_database": "SNOWFLAKE", "snowflake_schema": "PUBLIC",
            "snowflake_private_key_path": str(source / "configs" / "snowflake_rsa_key.p8"),
            "snowflake_op_allowed_databases": "null"}) + "\n")
        bundle = outside / "saas" / "ca-bundle.pem"
        for name, value in {"DECATHLON_TOKEN_KEY_SESSION": str(tks), "HTTPS_PROXY": f"http://127.0.0.1:{port}",
                            "SSL_CERT_FILE": str(bundle), "REQUESTS_CA_BUNDLE": str(bundle)}.items():
            monkeypatch.setenv(name, value)
        out = task_api.ok("setup", "sf-overdue-flags", "--source", str(source), "--launch-time", LAUNCH, "--saas",
                          "real", timeout=300)
        assert "front" not in (out.get("services") or {}), out
        assert not (task_api.home / "saas").exists()
        _play(task_api, "sf-overdue-flags")
        result = task_api.ok("evaluate", "--messages", _messages(tmp_path), timeout=300)
        assert result["pass"] is True, result
        # the "vendor" outside the episode is what was reached: its front started its Snowflake on first use
        assert "query-request" in (outside / "logs" / "snowflake.log").read_text()
    finally:
        front.send_signal(signal.SIGTERM)
        front.wait(10)
