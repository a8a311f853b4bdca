"""The 108 Toolathlon tasks, offline: each recorded real run imported and replayed, setup → every call →
evaluate, byte for byte. Where the runs come from: tests/recorded_runs.py."""
from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from pathlib import Path

import pytest

from recorded_runs import HOW, REQUIRED, TASKS
from decathlon.backends.base import SandboxSpec
from decathlon.backends.local import LocalBackend
from decathlon.recordings.cassettes import cassette_path, trajectory_path
from decathlon.errors import InfraError
from decathlon.core.task_session import TaskSession
from decathlon.tape.canonical import tokenize
from decathlon.sandbox.routing import route


def test_trajectories_are_present():
    if not TASKS:
        if REQUIRED:
            pytest.fail(HOW)
        pytest.skip(HOW)
    assert len(TASKS) == 108


def _recorded_calls(trajectory: list[dict]) -> list[tuple[str, str, str]]:
    results = {m.get("tool_call_id"): m.get("content") for m in trajectory if m.get("role") == "tool"}
    return [(c["function"]["name"], c["function"].get("arguments") or "", results[c["id"]])
            for m in trajectory if m.get("role") == "assistant" for c in m.get("tool_calls") or []
            if c.get("id") in results]


async def _replay_task(source: Path, task: str, calls_limit: int | None = None) -> dict:
    cassette = json.loads(cassette_path(source / "cassettes", task).read_text())
    trajectory = json.loads(trajectory_path(source / "cassettes", task).read_text())["messages"]
    box = await LocalBackend().acquire(SandboxSpec("suite", uuid.uuid4().hex, task, source))
    try:
        session = TaskSession(box)
        setup = await session.setup(task, mode="replay", cassette=cassette_path(source / "cassettes", task).read_bytes())
        offered = {t["function"]["name"] for t in setup.tools}
        servers = sorted(cassette["servers"])
        for name, _, _ in _recorded_calls(trajectory):
            r = route(name, servers)
            if r is not None and r.server != "local" and name not in {f["tool"] for f in cassette["framework"]}:
                assert name in offered, f"{name} is not offered"
                assert r.server in cassette["servers"], f"{name} routes to {r.server}, which was not recorded"
        outputs = []
        for name, raw, want in _recorded_calls(trajectory)[:calls_limit]:
            res = await session.execute(name, raw)
            have = tokenize(res.content, setup.workspace)
            assert have == want, f"{name} answered differently than recorded"
            outputs.append(hashlib.sha256(have.encode("utf-8", "surrogatepass")).hexdigest()[:16])
        status = "success" if calls_limit is None else "max_turns_reached"
        ev = await session.evaluate(trajectory, status)
        return {"pass": ev.passed, "metrics": ev.metrics, "outputs": outputs, "recorded": cassette["meta"]}
    finally:
        await box.release()


@pytest.mark.parametrize("task", TASKS)
def test_recorded_run_replays(task, imported, record_property):
    out = asyncio.run(_replay_task(imported, task))
    assert out["pass"] == out["recorded"]["recorded_pass"]
    assert out["metrics"] == out["recorded"]["recorded_metrics"]
    record_property("digest", hashlib.sha256(json.dumps([out["pass"], out["metrics"], out["outputs"]],
                                                        sort_keys=True).encode()).hexdigest())


# A local-files task, one whose server name has a hyphen (google-cloud), and one with an unprefixed call.
NEGATIVE = [t for t in ("arrange-workspace", "ab-testing", "language-school") if t in TASKS]


@pytest.mark.parametrize("task", NEGATIVE)
def test_a_diverging_call_is_a_replay_miss(task, imported):
    async def go() -> None:
        tape = cassette_path(imported / "cassettes", task)
        cassette = json.loads(tape.read_text())
        server = sorted(cassette["servers"])[0]
        tool = cassette["servers"][server]["interactions"][0]["tool"]
        box = await LocalBackend().acquire(SandboxSpec("suite", uuid.uuid4().hex, task, imported))
        try:
            session = TaskSession(box)
            await session.setup(task, mode="replay", cassette=tape.read_bytes())
            with pytest.raises(InfraError) as e:
                await session.execute(f"{server}-{tool}", json.dumps({"surely": "not recorded"}))
            assert e.value.kind == "replay_miss" and f"{server}-{tool}" in e.value.message
        finally:
            await box.release()
    asyncio.run(go())


def test_a_trajectory_cut_short_does_not_pass(imported):
    passing = [t for t in TASKS if json.loads(cassette_path(imported / "cassettes", t).read_text())["meta"]["recorded_pass"]]
    assert passing
    out = asyncio.run(_replay_task(imported, passing[0], calls_limit=2))
    assert out["pass"] is None  # the run never finished: no verdict, reward 0


def test_import_report_keeps_the_odd_calls(imported):
    report = json.loads((imported / "import-report.json").read_text())
    assert len(report["tasks"]) == len(TASKS)
    assert sum(1 for e in report["tasks"].values() if e["pass"] is True) == 46
    findings = {t: e["findings"] for t, e in report["tasks"].items() if e["findings"]}
    assert findings.get("language-school", {}).get("unprefixed_tools") == ["web_search"]
    assert "playwright_with_chunk" in findings.get("youtube-repo", {}).get("servers_not_in_manifest", [])
