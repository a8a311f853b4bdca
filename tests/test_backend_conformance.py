"""One suite, every backend: isolation, parallel episodes, timeouts, a sandbox that dies, release on
cancellation, and the same rewards and tool outputs as the local backend — for every mini task and,
on backends that declare RECORDED, every imported recorded Toolathlon run.

Backends plug in through tests/conformance/<name>.py (see its __init__)."""
from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from conformance import modules, require
from conftest import MINI
from decathlon import conformance as checks
from decathlon.backends.local import LocalBackend
from decathlon.core.episode import EpisodeConfig, run_episode
from decathlon.recordings.cassettes import cassette_path
from decathlon.core.policies import ReplayPolicy
from recorded_runs import TASKS as RECORDED_TASKS

BACKENDS = [pytest.param(m, id=m.NAME, marks=m.MARKS) for m in modules()]
TASKS = sorted(p.parent.name for p in (MINI / "tasks" / "finalpool").glob("*/task_config.json"))


@pytest.fixture(params=BACKENDS)
def backend(request, tmp_path):
    mod = request.param
    require(mod)
    with mod.backend(tmp_path) as b:
        yield b


def test_isolation_between_episodes(backend):
    asyncio.run(checks.check_isolation(backend, MINI, "csv-sales-summary"))


def test_parallel_episodes(backend):
    asyncio.run(checks.check_parallel(backend, MINI, ["csv-sales-summary", "project-deadlines", "contacts-dedupe"]))


def test_exec_timeout_is_bounded_and_the_sandbox_stays_usable(backend):
    asyncio.run(checks.check_exec_timeout(backend, MINI, "csv-sales-summary"))


@pytest.fixture
def kill_code(request) -> str:
    """A backend module may define KILL_SANDBOX_CODE (e.g. exhausting a container's memory)."""
    mod = request.node.callspec.params["backend"]
    return getattr(mod, "KILL_SANDBOX_CODE", checks.KILL_DAEMON)


def test_a_tool_call_that_kills_its_sandbox_is_an_infra_error_naming_it(backend, kill_code):
    asyncio.run(checks.check_sandbox_death_is_named(backend, MINI, "csv-sales-summary", kill_code))


def test_an_agent_that_kills_its_sandbox_fails_its_episode(backend, kill_code):
    asyncio.run(checks.check_agent_kill_is_its_failure(backend, MINI, "csv-sales-summary", kill_code))


def test_release_after_cancellation(backend):
    # A task whose setup takes a while: the cancellation lands mid-setup or mid-episode.
    asyncio.run(checks.check_release_on_cancel(backend, MINI, "excel-grade-report"))


_LOCAL_RUNS: dict[str, checks.Reference] = {}


@pytest.mark.parametrize("task", TASKS)
def test_same_rewards_and_tool_outputs_as_local(backend, task, tmp_path):
    if task not in _LOCAL_RUNS:
        _LOCAL_RUNS[task] = asyncio.run(checks.reference_run(LocalBackend(), MINI, task, tmp_path / "local"))
    asyncio.run(checks.check_same_as(backend, MINI, task, _LOCAL_RUNS[task], tmp_path / "here"))


def test_the_shipped_checker_names_what_breaks(tmp_path, monkeypatch):
    """check_backend on a backend whose exec ignores short timeouts: that check is named, the others hold."""
    # The ignored command runs to its end: a 5 s bound makes it `sleep 6`, not the shipped `sleep 16`.
    monkeypatch.setattr(checks, "EXEC_TIMEOUT_BOUND", 5)
    class IgnoresTimeouts(LocalBackend):
        async def acquire(self, spec):
            box = await super().acquire(spec)
            real_exec = box.exec

            async def exec(argv, stdin=None, timeout=300.0):
                return await real_exec(argv, stdin, 3600.0 if argv[:1] == ["sleep"] and timeout < 5 else timeout)
            box.exec = exec
            return box

    results = asyncio.run(checks.check_backend(IgnoresTimeouts(), MINI, ["csv-sales-summary"]))
    assert [k for k, v in results.items() if v is not None] == ["exec_timeout"], results
    assert results["exec_timeout"] is not None and "exec timeout" in results["exec_timeout"], results


# The recorded runs: 108 episodes (thousands of tool calls) per backend, so only on the backends that
# the issue holds to them (RECORDED = True in their module; the local backend is the reference).
RECORDED = [pytest.param(m, task, id=f"{m.NAME}-{task}", marks=m.MARKS)
            for m in modules() if getattr(m, "RECORDED", False) for task in RECORDED_TASKS]


async def _replayed(backend, task: str, source: Path, out: Path):
    cfg = EpisodeConfig(task=task, source=source, run_id="recorded", episode_id=uuid.uuid4().hex, mode="replay",
                        cassette=cassette_path(source / "cassettes", task), out_dir=out)
    return await run_episode(cfg, backend, ReplayPolicy(source / "cassettes"))


@pytest.mark.parametrize(("module", "task"), RECORDED)
def test_recorded_run_same_as_local(module, task, imported, tmp_path):
    require(module)
    ref = asyncio.run(_replayed(LocalBackend(), task, imported, tmp_path / "local"))
    assert ref.infra_error is None, ref.infra_error
    with module.backend(tmp_path) as backend:
        r = asyncio.run(_replayed(backend, task, imported, tmp_path / "here"))
    assert r.infra_error is None, r.infra_error
    assert (r.reward, r.passed, r.metrics, r.tool_calls) == (ref.reward, ref.passed, ref.metrics, ref.tool_calls)
    # Replayed outputs are the recorded strings: byte-identical, nothing masked.
    assert checks.tool_outputs(tmp_path / "here", task) == checks.tool_outputs(tmp_path / "local", task)
