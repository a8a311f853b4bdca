"""Record once, replay offline byte for byte: the mini pack's committed cassettes, misses, secrets, locks."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import LAUNCH, MINI, PASSING_EVALUATOR, REPO, TEST_SERVERS, write_server, write_task
from decathlon.tape.canonical import tokenize

CASSETTES = REPO / "fixtures" / "cassettes"
TASKS = sorted(p.parent.name for p in (MINI / "tasks" / "finalpool").glob("*/task_config.json"))


def decathlon(*args: str, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "decathlon", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=REPO, env={**os.environ, **(env or {})})


def test_committed_cassettes_verify():
    proc = decathlon("cassettes", "verify", str(CASSETTES))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name.split(".")[0] for p in CASSETTES.glob("*.cassette.json")) == TASKS


@pytest.mark.parametrize("policy", ["oracle", "replay"])
@pytest.mark.parametrize("task", TASKS)
def test_replay_gives_the_recorded_reward_and_byte_identical_tool_outputs(task, policy, tmp_path):
    proc = decathlon("run", task, "--source", str(MINI), "--mode", "replay", "--policy", policy, "--json",
                     "--out", str(tmp_path))
    r = json.loads(proc.stdout)
    assert proc.returncode == 0 and r["infra_error"] is None, r
    cassette = json.loads((CASSETTES / f"{task}.cassette.json").read_text())
    assert r["reward"] == 1.0 and r["pass"] is cassette["meta"]["recorded_pass"] is True
    assert r["metrics"] == cassette["meta"]["recorded_metrics"]
    recorded = json.loads((CASSETTES / f"{task}.trajectory.json").read_text())["messages"]
    replayed = json.loads((tmp_path / task / "messages.json").read_text())
    workspace = json.loads((tmp_path / task / "traj_log.json").read_text())["config"]["agent_workspace"]
    want = [m["content"] for m in recorded if m["role"] == "tool"]
    have = [m["content"] for m in tokenize(replayed, workspace) if m["role"] == "tool"]
    assert have == want


def test_replay_miss_names_the_call(tmp_path):
    oracles = tmp_path / "oracles"
    oracles.mkdir()
    oracle = json.loads((MINI / "oracles" / "contacts-dedupe.json").read_text())
    oracle["steps"][1]["arguments"]["path"] = "${workspace}/contact.csv"  # not what was recorded
    (oracles / "contacts-dedupe.json").write_text(json.dumps(oracle))
    proc = decathlon("run", "contacts-dedupe", "--source", str(MINI), "--mode", "replay", "--policy", "oracle",
                     "--oracles", str(oracles), "--json")
    assert proc.returncode == 1
    err = json.loads(proc.stdout)["infra_error"]
    assert err["kind"] == "replay_miss"
    assert "filesystem-read_file" in err["message"] and "contact.csv" in err["message"]
    assert "nearest recorded call" in err["message"] and "contacts.csv" in err["message"]


def test_bad_cassettes_are_named(tmp_path):
    folder = tmp_path / "tapes"
    folder.mkdir()
    proc = decathlon("run", "csv-sales-summary", "--source", str(MINI), "--mode", "replay", "--cassettes", str(folder), "--json")
    # A missing cassette is the run's mistake, said before any sandbox, with the way to get one.
    assert proc.returncode == 2 and "have no cassette" in proc.stderr and "csv-sales-summary" in proc.stderr
    assert "decathlon record" in proc.stderr, proc.stderr
    bad = json.loads((CASSETTES / "csv-sales-summary.cassette.json").read_text())
    bad["servers"]["filesystem"]["interactions"][0]["result"]["content"][0]["text"] = "forged"
    (folder / "csv-sales-summary.cassette.json").write_text(json.dumps(bad))
    proc = decathlon("run", "csv-sales-summary", "--source", str(MINI), "--mode", "replay", "--cassettes", str(folder), "--json")
    err = json.loads(proc.stdout)["infra_error"]
    assert err["kind"] == "cassette_hash" and "csv-sales-summary.cassette.json" in err["message"]
    proc = decathlon("cassettes", "verify", str(folder))
    assert proc.returncode == 1 and "content hash mismatch" in proc.stderr


def test_diff():
    a = CASSETTES / "csv-sales-summary.cassette.json"
    proc = decathlon("cassettes", "diff", str(a), str(a))
    assert proc.returncode == 0 and proc.stdout.strip() == "identical"
    proc = decathlon("cassettes", "diff", str(a), str(CASSETTES / "project-deadlines.cassette.json"))
    assert proc.returncode == 1 and "+++" in proc.stdout and "project-deadlines" in proc.stdout


SECRET = "sk-planted-0123456789abcdef0123"


def _secret_source(source: Path) -> None:
    write_server(source, "toy", sys.executable, [str(TEST_SERVERS / "toy_server.py")],
                 env={"TOY_API_KEY": SECRET})
    write_task(source, "leaky", servers=["toy"], evaluator=PASSING_EVALUATOR)
    (source / "oracles").mkdir()
    (source / "oracles" / "leaky.json").write_text(json.dumps({"task": "leaky", "steps": [
        {"tool": "toy-echo", "arguments": {"text": f"the key is {SECRET}"}},
        {"tool": "toy-env", "arguments": {"name": "TOY_API_KEY"}},
        {"tool": "local-claim_done", "arguments": {}}]}))


def test_planted_secret_never_reaches_disk(source, tmp_path):
    _secret_source(source)
    out = tmp_path / "tapes"
    proc = decathlon("record", "leaky", "--source", str(source), "--out", str(out), "--launch-time", LAUNCH,
                     env={"PLANTED_SERVICE_TOKEN": SECRET})
    assert proc.returncode == 0, proc.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in files} == {"leaky.cassette.json", "leaky.trajectory.json"}
    for p in files:
        assert SECRET.encode() not in p.read_bytes(), p
    cassette = json.loads((out / "leaky.cassette.json").read_text())
    texts = [i["result"]["content"][0]["text"] for i in cassette["servers"]["toy"]["interactions"]]
    # the host's PLANTED_SERVICE_TOKEN never reaches the sandbox (local.sandbox_env): the server's own
    # variable is the one that names the value
    assert texts == ["the key is <REDACTED:TOY_API_KEY>", "<REDACTED:TOY_API_KEY>"]
    assert decathlon("cassettes", "verify", str(out)).returncode == 0
    # and a verify run that knows the secret would flag it, had it leaked
    leaked = tmp_path / "leaked.cassette.json"
    from decathlon.tape.store import save
    save(leaked, {"meta": {"task": "x"}, "servers": {}, "note": SECRET})
    proc = decathlon("cassettes", "verify", str(leaked), env={"PLANTED_SERVICE_TOKEN": SECRET})
    assert proc.returncode == 1 and "PLANTED_SERVICE_TOKEN" in proc.stderr


def test_record_refuses_to_overwrite_and_to_share_a_file(source, tmp_path):
    _secret_source(source)
    out = tmp_path / "tapes"
    assert decathlon("record", "leaky", "--source", str(source), "--out", str(out)).returncode == 0
    proc = decathlon("record", "leaky", "--source", str(source), "--out", str(out))
    assert proc.returncode == 2 and "--force" in proc.stderr
    from decathlon.cli.record import recorder_lock
    with recorder_lock(out / "leaky.cassette.json"):
        proc = decathlon("record", "leaky", "--source", str(source), "--out", str(out), "--force")
    assert proc.returncode == 2 and "another recorder" in proc.stderr
    assert decathlon("record", "leaky", "--source", str(source), "--out", str(out), "--force").returncode == 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_interrupted_record_leaves_nothing(source, tmp_path, sig):
    write_server(source, "toy", sys.executable, [str(TEST_SERVERS / "toy_server.py")], timeout=60)
    write_task(source, "slow", servers=["toy"], evaluator=PASSING_EVALUATOR, local_tools=["claim_done", "sleep"])
    (source / "oracles").mkdir()
    (source / "oracles" / "slow.json").write_text(json.dumps({"task": "slow", "steps": [
        {"tool": "toy-echo", "arguments": {"text": "started"}}, {"tool": "local-sleep", "arguments": {"seconds": 30}},
        {"tool": "local-claim_done", "arguments": {}}]}))
    out = tmp_path / "tapes"
    proc = subprocess.Popen([sys.executable, "-m", "decathlon", "record", "slow", "--source", str(source), "--out", str(out)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, "DECATHLON_LOCAL_DIR": str(tmp_path / "boxes")})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list((tmp_path / "boxes").glob("*/run/servers/toy.stderr")):
        time.sleep(0.1)
    time.sleep(1.0)  # well inside the 30 s sleep
    os.kill(proc.pid, sig)
    proc.wait(timeout=60)
    leftovers = [p.name for p in out.glob("*")] if out.exists() else []
    assert not [n for n in leftovers if not n.endswith(".lock")], leftovers
    if sig == signal.SIGINT:
        assert not leftovers and not list((tmp_path / "boxes").glob("decathlon-ep-*"))
    else:
        # SIGKILL leaves a stale lock (and the sandbox, for `decathlon gc`), never a cassette; the next
        # recorder takes the lock over.
        subprocess.run([sys.executable, "-m", "decathlon", "gc"], cwd=REPO, check=True, capture_output=True,
                       env={**os.environ, "DECATHLON_LOCAL_DIR": str(tmp_path / "boxes")})
        assert not list((tmp_path / "boxes").glob("decathlon-ep-*"))
