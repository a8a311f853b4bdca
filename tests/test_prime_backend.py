"""The prime backend under faults, against the fake control plane on loopback (fakes/prime): the
real prime-sandboxes SDK on the wire, the platform misbehaving on purpose."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid

import pytest

from conformance.prime import FAKE_KEY, MINI, backend, fake_config
from conftest import LAUNCH, REPO
from decathlon.backends.base import SandboxSpec
from decathlon.backends.prime import PrimeBackend
from decathlon.core.episode import EpisodeConfig, run_episode
from decathlon.errors import InfraError
from decathlon.core.policies import ReplayPolicy
from decathlon.core.task_session import TaskSession
from fakes.prime.control import fast_sdk_rate_limits

CASSETTES = REPO / "fixtures" / "cassettes"
TASK = "project-deadlines"


def _spec(run: str) -> SandboxSpec:
    return SandboxSpec(run, uuid.uuid4().hex, TASK, MINI)


async def _episode(b, run: str):
    cfg = EpisodeConfig(task=TASK, source=MINI, run_id=run, episode_id=uuid.uuid4().hex, mode="replay",
                        cassette=CASSETTES / f"{TASK}.cassette.json")
    return await run_episode(cfg, b, ReplayPolicy(CASSETTES))


def _clean(stats: dict) -> None:
    assert stats["alive"] == [] and stats["alive_processes"] == 0, stats
    assert stats["duplicate_keys"] == [] and stats["duplicate_episodes"] == [], stats


def test_no_api_key_is_a_clear_error_before_any_sandbox(monkeypatch):
    monkeypatch.delenv("PRIME_API_KEY", raising=False)
    with pytest.raises(InfraError) as e:
        PrimeBackend.from_env()
    assert e.value.kind == "no_api_key" and "PRIME_API_KEY" in e.value.message
    assert "s3cret" not in repr(PrimeBackend(fake_config(), "s3cret"))


def test_429_bursts_and_5xx_are_retried(tmp_path):
    run = uuid.uuid4().hex[:8]
    with fast_sdk_rate_limits(), backend(tmp_path, "rate429_every=4,rate429_burst=2,err5xx_every=7") as b:
        results = asyncio.run(_gather(b, run, 3))
        assert [(r.infra_error, r.reward) for r in results] == [(None, 1.0)] * 3
        _clean(b.fake.stats())


async def _gather(b, run: str, n: int):
    try:
        return await asyncio.gather(*(_episode(b, run) for _ in range(n)))
    finally:
        await b.close()


def test_stuck_pending_is_bounded_then_an_infra_error_naming_it(tmp_path):
    with backend(tmp_path, "stuck_every=1", start_timeout=1.5) as b:
        start = time.monotonic()
        with pytest.raises(InfraError) as e:
            asyncio.run(b.acquire(_spec("stuck")))
        assert e.value.kind == "sandbox_start_timeout" and "fake" in e.value.message
        assert time.monotonic() - start < 30  # 1.5 s budget; slack for a loaded CI host
        _clean(b.fake.stats())  # the stuck one was deleted, not abandoned


def test_running_but_unreachable_is_replaced(tmp_path):
    with backend(tmp_path, "unreachable_every=2") as b:
        async def go() -> None:
            first = await b.acquire(_spec("unreach"))  # created 1st: fine
            second = await b.acquire(_spec("unreach"))  # 2nd is unreachable, replaced by the 3rd
            res = await second.exec(["echo", "answering"], timeout=20)
            assert res.stdout.strip() == "answering"
            await first.release()
            await second.release()
            await b.close()
        asyncio.run(go())
        stats = b.fake.stats()
        assert stats["created"] == 3
        _clean(stats)


def test_never_reachable_gives_up_with_an_infra_error(tmp_path):
    with backend(tmp_path, "unreachable_every=1", replacements=1) as b:
        with pytest.raises(InfraError) as e:
            asyncio.run(b.acquire(_spec("never")))
        assert e.value.kind == "sandbox_unreachable"
        stats = b.fake.stats()
        assert stats["created"] == 2
        _clean(stats)


def test_failing_deletes_are_retried(tmp_path):
    with backend(tmp_path, "delete_fail_every=1,delete_fail_times=2") as b:
        async def go() -> None:
            box = await b.acquire(_spec("del"))
            await box.release()
            await b.close()
        asyncio.run(go())
        assert not b.undeleted
        _clean(b.fake.stats())


def test_undeletable_sandboxes_are_found_by_gc(tmp_path):
    run = uuid.uuid4().hex[:8]
    with backend(tmp_path, "delete_stuck_every=1", release_attempts=2) as b:
        async def go() -> int:
            box = await b.acquire(_spec(run))
            await box.release()  # never raises, even now
            assert box.id in b.undeleted and b.fake.stats()["alive"] == [box.id]
            removed = (await b.collect({"decathlon.run": run})).removed
            await b.close()
            return removed
        assert asyncio.run(go()) == 1
        _clean(b.fake.stats())


def test_401_stops_creating(tmp_path):
    with backend(tmp_path, "auth=401") as b:
        with pytest.raises(InfraError) as e:
            asyncio.run(b.acquire(_spec("auth")))
        assert e.value.kind == "unauthorized"
        asked = b.fake.stats()["requests"]
        with pytest.raises(InfraError) as again:
            asyncio.run(b.acquire(_spec("auth")))
        assert again.value.kind == "unauthorized" and b.fake.stats()["requests"] == asked
        assert FAKE_KEY not in str(e.value) + str(again.value)


def test_402_quota_stops_creating_and_releases_what_exists(tmp_path):
    with backend(tmp_path, "quota_after=1") as b:
        async def go() -> None:
            held = await b.acquire(_spec("quota"))
            with pytest.raises(InfraError) as e:
                await b.acquire(_spec("quota"))
            assert e.value.kind == "payment_required"
            with pytest.raises(InfraError) as after:  # the live one was released: its episode learns so
                await held.exec(["true"])
            assert after.value.kind == "sandbox_released"
            await b.close()
        asyncio.run(go())
        _clean(b.fake.stats())


def test_a_lost_create_response_is_retried_under_the_same_key(tmp_path):
    with backend(tmp_path, "create_lost_every=1") as b:
        async def go() -> None:
            box = await b.acquire(_spec("idem"))
            await box.release()
            await b.close()
        asyncio.run(go())
        stats = b.fake.stats()
        assert stats["created"] == 1 and list(stats["created_per_key"].values()) == [1]
        _clean(stats)


def test_a_sandbox_dying_mid_episode_fails_that_episode_naming_it(tmp_path):
    """After the agent acted, a sandbox that dies may have been killed by the agent (memory, pids): the
    episode's failure (scored 0), not an infra error (decathlon.errors.environment_owned)."""
    run = uuid.uuid4().hex[:8]
    with backend(tmp_path, "die_every=2,die_after_execs=3") as b:
        results = asyncio.run(_gather(b, run, 3))
        died = [r for r in results if r.failure]
        assert len(died) == 1 and died[0].failure["kind"] == "sandbox_died", [r.failure for r in results]
        assert "fake" in died[0].failure["message"] and died[0].infra_error is None and died[0].reward == 0.0
        assert [r.reward for r in results if not r.failure] == [1.0, 1.0]
        _clean(b.fake.stats())


def test_killed_from_outside_mid_session(tmp_path):
    with backend(tmp_path) as b:
        async def go() -> None:
            box = await b.acquire(_spec("kill"))
            try:
                session = TaskSession(box)
                setup = await session.setup("csv-sales-summary", LAUNCH)
                b.fake.kill(box.id)
                with pytest.raises(InfraError) as e:
                    await session.execute("filesystem-read_file", json.dumps({"path": f"{setup.workspace}/x"}))
                assert e.value.kind == "sandbox_died" and box.id in e.value.message
            finally:
                await box.release()
                await b.close()
        asyncio.run(go())
        _clean(b.fake.stats())


def test_small_scale_run_with_mixed_faults():
    proc = subprocess.run([sys.executable, "bench/prime_scale.py", "--episodes", "12", "--faults", "mixed",
                           "--concurrency", "6", "--json"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["leaked"] == 0 and out["duplicates"] == 0 and out["leaked_processes"] == 0, out
    assert out["scored"] + out["infra"] == out["episodes"] == 12 and out["infra_unexplained"] == 0, out


def test_the_creation_pacer_spaces_creates_evenly():
    from decathlon.backends.prime import _Pacer

    async def go() -> float:
        pacer = _Pacer(600)  # one every 0.1 s
        start = time.monotonic()
        for _ in range(4):
            await pacer.wait()
        return time.monotonic() - start
    assert 0.29 <= asyncio.run(go()) < 2.0


def test_configuration_comes_from_the_environment(monkeypatch):
    from decathlon.backends.prime import PrimeConfig

    monkeypatch.setenv("DECATHLON_PRIME_IMAGE", "ghcr.io/x/sandbox:1")
    monkeypatch.setenv("DECATHLON_PRIME_MAX_LIVE", "7")
    monkeypatch.setenv("DECATHLON_PRIME_CPU", "2.5")
    cfg = PrimeConfig.from_env()
    assert (cfg.image, cfg.max_live, cfg.cpu) == ("ghcr.io/x/sandbox:1", 7, 2.5)


def test_the_sweep_of_a_cancelled_create_finds_the_episodes_sandbox_by_its_labels(tmp_path):
    """A create cancelled in flight may land unseen; the episode's sweep deletes it by the labels the create gave it
    (it matched none while it asked for a label no sandbox carries)."""
    with backend(tmp_path) as b:
        spec = _spec("sweep")

        async def go() -> None:
            box = await b.acquire(spec)
            other = await b.acquire(_spec("sweep"))
            await b._sweep_episode(b._state(), spec)
            assert b.fake.stats()["alive"] == [other.id], "the sweep takes this episode's sandbox and no other"
            await box.release()
            await other.release()
            await b.close()
        asyncio.run(go())
        _clean(b.fake.stats())
