"""One suite, every backend: isolation, parallel episodes, timeouts, a sandbox that dies, release on
cancellation, and the same rewards and tool outputs as the local backend — for every mini task and,
on backends that declare RECORDED, every imported recorded Toolathlon run.

Backends plug in through tests/conformance/<name>.py (see its __init__)."""
from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from conformance import modules, require
from conftest import LAUNCH, MINI
from decathlon.backends.base import SandboxSpec
from decathlon.backends.local import LocalBackend
from decathlon.core.episode import EpisodeConfig, run_episode
from decathlon.errors import InfraError
from decathlon.recordings.cassettes import cassette_path
from decathlon.core.oracles import Call, Oracle, variables
from decathlon.core.policies import OraclePolicy, ReplayPolicy, _Scripted
from decathlon.core.task_session import TaskSession
from decathlon.tape.canonical import tokenize
from recorded_runs import TASKS as RECORDED_TASKS

BACKENDS = [pytest.param(m, id=m.NAME, marks=m.MARKS) for m in modules()]
TASKS = sorted(p.parent.name for p in (MINI / "tasks" / "finalpool").glob("*/task_config.json"))


@pytest.fixture(params=BACKENDS)
def backend(request, tmp_path):
    mod = request.param
    require(mod)
    with mod.backend(tmp_path) as b:
        yield b


def _spec(task: str, run: str | None = None) -> SandboxSpec:
    return SandboxSpec(run or uuid.uuid4().hex[:12], uuid.uuid4().hex, task, MINI)


async def _episode(backend, task: str, out: Path | None = None, run: str | None = None):
    cfg = EpisodeConfig(task=task, source=MINI, run_id=run or uuid.uuid4().hex[:12], episode_id=uuid.uuid4().hex,
                        launch_time=LAUNCH, out_dir=out)
    return await run_episode(cfg, backend, OraclePolicy(MINI))


def test_isolation_between_episodes(backend):
    async def go() -> None:
        first = await backend.acquire(_spec("csv-sales-summary"))
        try:
            s = TaskSession(first)
            setup = await s.setup("csv-sales-summary", LAUNCH)
            res = await s.execute("filesystem-write_file", json.dumps({"path": f"{setup.workspace}/left.txt",
                                                                       "content": "from episode one"}))
            assert not res.is_error
        finally:
            await first.release()
        second = await backend.acquire(_spec("csv-sales-summary"))
        try:
            s = TaskSession(second)
            setup = await s.setup("csv-sales-summary", LAUNCH)
            res = await s.execute("filesystem-read_file", json.dumps({"path": f"{setup.workspace}/left.txt"}))
            assert res.is_error and "from episode one" not in res.content
        finally:
            await second.release()
    asyncio.run(go())


def test_parallel_episodes(backend):
    async def go() -> list:
        return await asyncio.gather(*(_episode(backend, t) for t in ["csv-sales-summary", "project-deadlines",
                                                                     "contacts-dedupe", "csv-sales-summary"]))
    results = asyncio.run(go())
    assert [(r.infra_error, r.reward) for r in results] == [(None, 1.0)] * 4


def test_exec_timeout_is_bounded_and_the_sandbox_stays_usable(backend):
    async def go() -> None:
        box = await backend.acquire(_spec("csv-sales-summary"))
        try:
            loop = asyncio.get_running_loop()
            start = loop.time()
            with pytest.raises(InfraError) as e:
                await box.exec(["sleep", "30"], timeout=2)
            assert e.value.kind == "exec_timeout" and loop.time() - start < 15
            res = await box.exec(["echo", "still here"], timeout=30)
            assert res.exit_code == 0 and res.stdout.strip() == "still here"
        finally:
            await box.release()
    asyncio.run(go())


# Python run by the agent's own tool that takes its sandbox down from inside; a backend module may
# define KILL_SANDBOX_CODE (e.g. exhausting a container's memory). This one kills the episode daemon
# and every server it holds (its process group).
KILL_DAEMON = ("import os, signal\n"
               "os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)\n")  # python-execute's parent: the daemon
DIED = ("daemon_died", "sandbox_died", "no_session")


@pytest.fixture
def kill_code(request) -> str:
    mod = request.node.callspec.params["backend"]
    return getattr(mod, "KILL_SANDBOX_CODE", KILL_DAEMON)


def test_a_tool_call_that_kills_its_sandbox_is_an_infra_error_naming_it(backend, kill_code):
    async def go() -> None:
        box = await backend.acquire(_spec("csv-sales-summary"))
        try:
            s = TaskSession(box)
            await s.setup("csv-sales-summary", LAUNCH)
            with pytest.raises(InfraError) as e:
                await s.execute("local-python-execute", json.dumps({"code": kill_code, "timeout": 60}))
            assert e.value.kind in DIED, e.value
            with pytest.raises(InfraError) as again:  # nothing more gets through it
                await s.execute("filesystem-read_file", json.dumps({"path": "x"}))
            assert again.value.kind in DIED
        finally:
            await box.release()
    asyncio.run(go())


class _KillsItsSandbox:
    """A hostile policy: its first turn runs code that takes its sandbox down, its second reads a file."""
    name = "kills-its-sandbox"

    def __init__(self, code: str) -> None:
        self.code = code

    def start(self, task: str, setup):
        oracle = Oracle(task, [[Call("local-python-execute", {"code": self.code, "timeout": 60})],
                               [Call("filesystem-read_file", {"path": "${workspace}/sales.csv"})]], "Done.")
        return _Scripted(oracle, variables(setup.workspace, setup.launch_time))


def test_an_agent_that_kills_its_sandbox_fails_its_episode(backend, kill_code):
    """After the agent acted, its sandbox dying is its own doing: a failure scored 0, never an infra
    error that would mask the run from training."""
    cfg = EpisodeConfig(task="csv-sales-summary", source=MINI, run_id=uuid.uuid4().hex[:12],
                        episode_id=uuid.uuid4().hex, launch_time=LAUNCH)
    r = asyncio.run(run_episode(cfg, backend, _KillsItsSandbox(kill_code)))
    assert r.infra_error is None and (r.reward, r.passed) == (0.0, False), r
    assert r.failure["kind"] in DIED and r.failure["phase"] == "execute", r.failure


def test_release_after_cancellation(backend, tmp_path):
    run = uuid.uuid4().hex[:12]

    async def go() -> None:
        job = asyncio.create_task(_episode(backend, "excel-grade-report", run=run))
        await asyncio.sleep(1.0)  # mid-setup or mid-episode
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job
        # Released on the way out: nothing of this run is left for a collector to find.
        assert (await backend.collect({"decathlon.run": run}, force=True)).removed == 0
    asyncio.run(go())


_LOCAL_RUNS: dict[str, tuple] = {}


def _outputs(out: Path, task: str) -> list[str]:
    messages = json.loads((out / task / "messages.json").read_text())
    ws = json.loads((out / task / "traj_log.json").read_text())["config"]["agent_workspace"]
    return [m["content"] for m in tokenize(messages, ws) if m["role"] == "tool"]


def _local_reference(task: str, tmp: Path) -> tuple:
    if task not in _LOCAL_RUNS:
        r = asyncio.run(_episode(LocalBackend(), task, tmp / "local"))
        _LOCAL_RUNS[task] = (r.reward, r.passed, r.metrics, _outputs(tmp / "local", task))
    return _LOCAL_RUNS[task]


VOLATILE = ("Execution time:", "committed successfully with hash")


def _stable(outputs: list[str]) -> list[str]:
    """Tool outputs with what differs between any two live runs (a timing, a commit hash) masked."""
    return ["<volatile>" if any(v in o for v in VOLATILE) else o for o in outputs]


@pytest.mark.parametrize("task", TASKS)
def test_same_rewards_and_tool_outputs_as_local(backend, task, tmp_path):
    ref = _local_reference(task, tmp_path)
    r = asyncio.run(_episode(backend, task, tmp_path / "here"))
    assert r.infra_error is None, r.infra_error
    assert (r.reward, r.passed, r.metrics) == ref[:3]
    assert _stable(_outputs(tmp_path / "here", task)) == _stable(ref[3])


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
    assert _outputs(tmp_path / "here", task) == _outputs(tmp_path / "local", task)
