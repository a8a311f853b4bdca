"""Issue 13, findings 10 and 16-20: gc leaves live runs alone, imports are atomic, bad inputs get named
errors (never a traceback), one broken task does not block its source, recorder locks by flock, and
no daemon socket outlives its episode."""
from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import queue
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from lines import readline
from conftest import LAUNCH, MINI, PASSING_EVALUATOR, REPO, write_task
from decathlon.backends.base import SandboxSpec
from decathlon.backends.local import LocalBackend
from decathlon.core.episode import EpisodeConfig, run_episode
from decathlon.errors import InfraError

pytestmark = pytest.mark.adversarial


def decathlon(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "decathlon", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def _named(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    for w in words:
        assert w in proc.stderr, (w, proc.stderr)


# --- 10: gc removes only what no live run owns -------------------------------------------------------

HOLDER = """
import asyncio, sys
sys.path.insert(0, {repo!r})
from pathlib import Path
from decathlon.backends.base import SandboxSpec
from decathlon.backends.local import LocalBackend
from decathlon.core.lifecycle import acquire
async def main():
    await acquire(LocalBackend(), SandboxSpec({run!r}, "ep-" + {run!r}, "project-deadlines", Path({mini!r})))
    print("acquired", flush=True)
    await asyncio.sleep(120)
asyncio.run(main())
"""


def _boxes(folder: Path) -> list[Path]:
    return sorted(folder.glob("decathlon-ep-*"))


def test_10_gc_without_run_leaves_a_live_run_alone_and_force_takes_it(tmp_path):
    env = {"DECATHLON_LOCAL_DIR": str(tmp_path / "boxes"), "DECATHLON_LEASE_DIR": str(tmp_path / "leases")}
    run = uuid.uuid4().hex[:12]
    live = subprocess.Popen([sys.executable, "-c", HOLDER.format(repo=str(REPO), run=run, mini=str(MINI))],
                            stdout=subprocess.PIPE, text=True, env={**os.environ, **env})
    try:
        assert readline(live, what="the holder's `acquired`").strip() == "acquired"
        # A crashed run's sandbox (no process holds its lease) and another user's.
        os.environ.update(env)
        try:
            dead = asyncio.run(LocalBackend().acquire(SandboxSpec("dead-run", "ep-dead", "project-deadlines", MINI)))
            other = asyncio.run(LocalBackend().acquire(SandboxSpec("other-run", "ep-other", "project-deadlines", MINI)))
        finally:
            for k in env:
                os.environ.pop(k)
        labels = json.loads((other.root / "labels.json").read_text())
        labels["decathlon.owner"] = "elsewhere:4242"
        (other.root / "labels.json").write_text(json.dumps(labels))
        assert len(_boxes(tmp_path / "boxes")) == 3

        gc = decathlon("gc", env=env)
        assert gc.returncode == 0, gc.stderr
        out = json.loads(gc.stdout)
        assert (out["removed"], out["skipped_live"], out["skipped_foreign"]) == (1, 1, 1)
        assert [(r["run"], r["action"]) for r in out["runs"]] == sorted([("dead-run", "removed"),
                                                                         ("other-run", "skipped"), (run, "skipped")])
        assert "--force" in gc.stderr
        assert not dead.root.exists() and other.root.exists() and len(_boxes(tmp_path / "boxes")) == 2
        assert live.poll() is None, "the live run must not notice gc"

        forced = decathlon("gc", "--force", env=env)
        assert json.loads(forced.stdout)["removed"] == 2 and _boxes(tmp_path / "boxes") == []
    finally:
        live.kill()
        live.wait()


def test_10_a_killed_runs_lease_is_free_at_once(tmp_path):
    env = {"DECATHLON_LOCAL_DIR": str(tmp_path / "boxes"), "DECATHLON_LEASE_DIR": str(tmp_path / "leases")}
    run = uuid.uuid4().hex[:12]
    live = subprocess.Popen([sys.executable, "-c", HOLDER.format(repo=str(REPO), run=run, mini=str(MINI))],
                            stdout=subprocess.PIPE, text=True, env={**os.environ, **env})
    assert readline(live, what="the holder's `acquired`").strip() == "acquired"
    live.kill()  # SIGKILL: no handler runs, the kernel drops the lock
    live.wait()
    gc = decathlon("gc", "--run", run, env=env)
    out = json.loads(gc.stdout)
    assert (out["removed"], out["skipped_live"], out["skipped_foreign"]) == (1, 0, 0)
    assert [(r["run"], r["action"]) for r in out["runs"]] == [(run, "removed")]
    assert not list((tmp_path / "leases").glob("*.lease")), "gc tidies the leases of dead runs"


# --- 16: imports are atomic -----------------------------------------------------------------------------

def _run(task: str, passed: bool = True) -> dict:
    return {"pass": passed, "messages": [
        {"role": "user", "content": f"Do {task}."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "local-claim_done", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "done"}]}


def _runs(folder: Path, **extra: bytes) -> Path:
    folder.mkdir()
    for task in ("alpha", "beta"):
        (folder / f"{task}.json").write_text(json.dumps(_run(task)))
    for name, data in extra.items():
        (folder / f"{name}.json").write_bytes(data)
    return folder


BAD_RUNS = {
    "empty": (b"", "bad_run"),
    "a-list": (b"[]", "JSON object"),
    "not-utf8": (b'{"messages": ["\xff\xfe"]}', "not UTF-8"),
    "string-messages": (json.dumps({"messages": ["hello", 3]}).encode(), "messages[0]"),
    "call-without-function": (json.dumps({"messages": [{"role": "assistant", "tool_calls": [{"id": "x"}]}]}).encode(),
                              "tool_calls[0]"),
    "deep": (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
}


@pytest.mark.parametrize("case", sorted(BAD_RUNS))
def test_16_17_a_bad_run_is_named_and_leaves_no_partial_import(tmp_path, case):
    data, words = BAD_RUNS[case]
    src = _runs(tmp_path / "runs", **{"zz-" + case: data})
    out = tmp_path / "imported"
    proc = decathlon("cassettes", "import-trajectories", str(src), "--out", str(out))
    _named(proc, f"zz-{case}.json", words)
    assert not out.exists(), "nothing of a failed import is written"
    assert [p.name for p in tmp_path.iterdir()] == ["runs"], "no staging folder is left behind"
    run = decathlon("run", "--all", "--source", str(out), "--policy", "null")
    _named(run, "not a Toolathlon root")


def test_16_a_failed_reimport_keeps_the_earlier_import_whole(tmp_path):
    src = _runs(tmp_path / "runs")
    out = tmp_path / "imported"
    assert decathlon("cassettes", "import-trajectories", str(src), "--out", str(out)).returncode == 0
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    (src / "gamma.json").write_text(json.dumps(_run("gamma")))
    (src / "omega.json").write_text("[]")
    _named(decathlon("cassettes", "import-trajectories", str(src), "--out", str(out)), "omega.json")
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before
    (src / "omega.json").unlink()
    assert decathlon("cassettes", "import-trajectories", str(src), "--out", str(out)).returncode == 0
    assert (out / "tasks" / "finalpool" / "gamma" / "task_config.json").is_file()
    assert [p.name for p in sorted(tmp_path.iterdir())] == ["imported", "runs"]


def test_16_import_refuses_a_folder_that_is_not_an_import(tmp_path):
    src = _runs(tmp_path / "runs")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    _named(decathlon("cassettes", "import-trajectories", str(src), "--out", str(out)), "not an earlier import")
    assert (out / "notes.txt").read_text() == "keep me"


# --- 17: named errors for bad task configs, cassettes and server definitions ------------------------

@pytest.mark.parametrize("raw,words", [(b"\xff\xfe{}", "not UTF-8"), (b"[1, 2]", "JSON object"),
                                       (b'{"needed_mcp_servers": [1], "needed_local_tools": []}', "names")])
def test_17_a_bad_task_config_is_named(source, raw, words):
    write_task(source, "broken", evaluator=PASSING_EVALUATOR)
    (source / "tasks" / "finalpool" / "broken" / "task_config.json").write_bytes(raw)
    proc = decathlon("run", "broken", "--source", str(source), "--policy", "null", "--json")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["infra_error"]["kind"] == "bad_task" and words in result["infra_error"]["message"]


def test_17_a_cassette_nested_100k_deep_is_named_by_verify_and_replay(tmp_path):
    tapes = tmp_path / "tapes"
    tapes.mkdir()
    deep = b'{"format": "decathlon-cassette", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    (tapes / "project-deadlines.cassette.json").write_bytes(deep)
    (tapes / "project-deadlines.trajectory.json").write_bytes(b'{"messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    proc = decathlon("cassettes", "verify", str(tapes))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.count("nested too deeply") == 2, proc.stderr
    run = decathlon("run", "project-deadlines", "--source", str(MINI), "--cassettes", str(tapes), "--mode", "replay",
                    "--policy", "replay", "--json")
    assert "Traceback" not in run.stderr, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["infra_error"]["kind"] in ("bad_cassette", "bad_trajectory"), result
    assert "nested too deeply" in result["infra_error"]["message"], result


def _server_yaml(source: Path, body: str) -> None:
    (source / "configs" / "mcp_servers" / "odd.yaml").write_text(body)


@pytest.mark.parametrize("body,words", [
    ("type: stdio\nname: odd\nparams: [python, -m, x]\n", "`params` must be a mapping"),
    ("type: stdio\nname: odd\nparams: {command: python, args: []}\nclient_session_timeout_seconds: soon\n",
     "client_session_timeout_seconds"),
    ("type: stdio\nname: odd\nparams: {command: python, args: -m mcp_server_fetch}\n", "params.args must be a list"),
])
def test_17_a_bad_server_definition_is_named_at_once(source, body, words):
    _server_yaml(source, body)
    write_task(source, "uses-odd", servers=["odd"], evaluator=PASSING_EVALUATOR)
    started = time.monotonic()
    proc = decathlon("run", "uses-odd", "--source", str(source), "--policy", "null", "--json")
    assert time.monotonic() - started < 45, "named at once, not after a server-start timeout"
    assert "Traceback" not in proc.stderr, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["infra_error"]["kind"] == "bad_server_config", result
    assert words in result["infra_error"]["message"], result


# --- 18: one broken task does not block its source -------------------------------------------------------

def test_18_one_broken_task_config_blocks_only_itself(source):
    for name in ("good-one", "good-two"):
        write_task(source, name, evaluator=PASSING_EVALUATOR)
    write_task(source, "broken", evaluator=PASSING_EVALUATOR)
    (source / "tasks" / "finalpool" / "broken" / "task_config.json").write_text("{not json")
    listing = decathlon("tasks", "--source", str(source), "--json")
    assert listing.returncode == 0, listing.stderr
    rows = {t["id"]: t for t in json.loads(listing.stdout)}
    assert sorted(rows) == ["broken", "good-one", "good-two"]
    assert "not valid JSON" in rows["broken"]["error"] and "error" not in rows["good-one"]
    assert "broken cannot run" in listing.stderr

    run = decathlon("run", "--all", "--source", str(source), "--policy", "null", "--json")
    results = {r["task"]: r for r in map(json.loads, run.stdout.strip().splitlines())}
    assert results["broken"]["infra_error"]["kind"] == "bad_task"
    assert results["good-one"]["infra_error"] is None and results["good-two"]["infra_error"] is None


def test_18_the_taskset_leaves_a_broken_task_out_with_a_warning(source):
    from decathlon.training.env import DecathlonTaskset, DecathlonTasksetConfig
    write_task(source, "good", evaluator=PASSING_EVALUATOR)
    write_task(source, "broken", evaluator=PASSING_EVALUATOR)
    (source / "tasks" / "finalpool" / "broken" / "task_config.json").write_text("[]")
    with pytest.warns(UserWarning, match="broken left out"):
        loaded = [t.data.task for t in DecathlonTaskset(DecathlonTasksetConfig(source=source)).load()]
    assert loaded == ["good"]


# --- 19: the recorder lock is a flock ------------------------------------------------------------------

def _contend(target: str, start: float, q) -> None:
    from decathlon.cli.record import recorder_lock
    # Asleep until just before the start, then spinning: the three reach for the lock within microseconds, and
    # the trials do not burn a core each while they wait.
    time.sleep(max(0.0, start - time.time() - 0.005))
    while time.time() < start:
        pass
    try:
        with recorder_lock(Path(target)):
            q.put(("held", time.time()))
            time.sleep(0.05)
            q.put(("released", time.time()))
    except InfraError:
        q.put(("refused", time.time()))


def test_19_two_recorders_never_hold_the_lock_together(tmp_path):
    target = tmp_path / "t.cassette.json"
    lock = Path(str(target) + ".lock")
    ctx = multiprocessing.get_context("fork")
    overlaps = 0
    for trial in range(60):
        lock.write_text("999999")  # a crashed recorder's leftover (the race was in taking one over)
        q = ctx.Queue()
        start = time.time() + 0.05
        procs = [ctx.Process(target=_contend, args=(str(target), start, q)) for _ in range(3)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(30)
        events: list[tuple[str, float]] = []
        # Every contender ends with "released" or "refused": read until all have, without waiting on an empty queue.
        while sum(e in ("released", "refused") for e, _ in events) < len(procs):
            try:
                events.append(q.get(timeout=10))
            except queue.Empty:
                pytest.fail(f"trial {trial}: a contender ended without a word: {events}")
        depth = 0
        for e, _ in sorted((e for e in events if e[0] != "refused"), key=lambda ev: (ev[1], ev[0] != "released")):
            depth += 1 if e == "held" else -1
            overlaps += depth > 1
        assert any(e == "held" for e, _ in events), f"trial {trial}: nobody got the lock"
        lock.unlink(missing_ok=True)  # as the last holder does
    assert overlaps == 0


# --- 20: no hashed socket outlives its episode --------------------------------------------------------

KILL_DAEMON = ("import os, signal\n"
               "os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)\n")


def test_20_a_long_homes_socket_in_tmp_is_removed_at_release_even_after_sigkill(tmp_path, monkeypatch):
    from decathlon.core.oracles import Call, Oracle, variables
    from decathlon.core.policies import _Scripted
    from decathlon.sandbox.sockpath import socket_path

    class KillsDaemon:
        name = "kills-daemon"

        def start(self, task, setup):
            steps = [[Call("local-python-execute", {"code": KILL_DAEMON})], [Call("local-claim_done", {})]]
            return _Scripted(Oracle(task, steps, "Done."), variables(setup.workspace, setup.launch_time))

    boxes = tmp_path / ("long-" + "x" * 90)
    monkeypatch.setenv("DECATHLON_LOCAL_DIR", str(boxes))
    seen: list[str] = []

    class Watching(LocalBackend):
        async def acquire(self, spec):
            box = await super().acquire(spec)
            seen.append(socket_path(str(box.root)))
            return box

    cfg = EpisodeConfig(task="csv-sales-summary", source=MINI, run_id=uuid.uuid4().hex[:12],
                        episode_id=uuid.uuid4().hex, launch_time=LAUNCH)
    result = asyncio.run(run_episode(cfg, Watching(), KillsDaemon()))
    assert result.failure and result.failure["kind"] in ("daemon_died", "no_session"), result
    assert seen and seen[0].startswith("/tmp/task-api-"), "the home is long enough to put its socket in /tmp"
    # This episode's own socket only: /tmp is shared with the tests other workers run at the same time.
    assert not Path(seen[0]).exists(), "the killed daemon's socket was left in /tmp"


def test_gc_run_by_id_takes_another_hosts_dead_run_but_never_a_live_one(tmp_path, monkeypatch):
    """A runner container labels its sandboxes with its own host name: `gc --run ID` (the id the run printed)
    removes them once the run is dead, whoever the owner; without --run they are another host's; a live
    run's are never taken without --force."""
    import uuid
    from decathlon.backends import leases
    monkeypatch.setenv("DECATHLON_LEASE_DIR", str(tmp_path))
    run = "gc-" + uuid.uuid4().hex[:8]
    theirs = {leases.OWNER_LABEL: "runner-container:0", leases.RUN_LABEL: run}
    assert leases.collectable(theirs, False) == "foreign"
    assert leases.collectable(theirs, False, {leases.RUN_LABEL: "another"}) == "foreign"
    assert leases.collectable(theirs, False, {leases.RUN_LABEL: run}) is None
    leases.hold(run)  # held for this process's life, as a run's lease is
    assert leases.collectable(theirs, False, {leases.RUN_LABEL: run}) == "live"
    assert leases.collectable(theirs, True, {leases.RUN_LABEL: run}) is None
