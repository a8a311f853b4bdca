"""The backend conformance suite, shipped: what every backend must do, as gymnasium's `check_env` checks an env.

    from decathlon.conformance import check_backend
    failures = asyncio.run(check_backend(MyBackend(), Path("fixtures/toolathlon-mini")))

or `python -m decathlon.conformance --backend compose --source fixtures/toolathlon-mini`. The checks run real
episodes against a task source that has oracles (the mini pack has): isolation between episodes, parallel
episodes, a bounded exec timeout, an agent that kills its own sandbox failing its episode (never an infra error),
release on cancellation, and the same rewards and tool outputs as a reference backend. The project's test
suite runs these same checks on every backend it has (tests/test_backend_conformance.py).
"""
from __future__ import annotations

import argparse
import asyncio
import functools
import json
import sys
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from decathlon.backends.base import Backend, SandboxSpec
from decathlon.core.episode import EpisodeConfig, EpisodeResult, run_episode
from decathlon.core.oracles import Call, Oracle, variables
from decathlon.core.policies import EpisodePolicy, OraclePolicy, Policy, _Scripted
from decathlon.core.task_session import SetupResult, TaskSession
from decathlon.errors import InfraError, Kind
from decathlon.tape.canonical import tokenize

LAUNCH = "2026-03-02 09:00:00"  # the mini pack's oracles are written for this launch time
# What a sandbox that died looks like from the host, whichever part of it went first.
DIED = (Kind.DAEMON_DIED, Kind.SANDBOX_DIED, Kind.NO_SESSION)
# Python run by the agent's own tool that takes its sandbox down from inside: kills the episode daemon and
# every server it holds (python-execute's parent is the daemon). A backend may pass code of its own (say,
# exhausting a container's memory).
KILL_DAEMON = "import os, signal\nos.killpg(os.getpgid(os.getppid()), signal.SIGKILL)\n"
# What differs between any two live runs of one task (a timing, a commit hash): masked when outputs are compared.
VOLATILE = ("Execution time:", "committed successfully with hash")


class NonConformance(AssertionError):
    """A backend did not do what every backend must; the message names the check and what came instead."""


def _require(ok: bool, check: str, detail: object) -> None:
    if not ok:
        raise NonConformance(f"{check}: {detail}")


def spec(task: str, source: Path, run: str | None = None) -> SandboxSpec:
    return SandboxSpec(run or uuid.uuid4().hex[:12], uuid.uuid4().hex, task, source)


async def oracle_episode(backend: Backend, source: Path, task: str, out: Path | None = None,
                         run: str | None = None) -> EpisodeResult:
    cfg = EpisodeConfig(task=task, source=source, run_id=run or uuid.uuid4().hex[:12], episode_id=uuid.uuid4().hex,
                        launch_time=LAUNCH, out_dir=out)
    return await run_episode(cfg, backend, OraclePolicy(source))


async def check_isolation(backend: Backend, source: Path, task: str) -> None:
    """What one episode writes, the next episode of the same task never sees."""
    first = await backend.acquire(spec(task, source))
    try:
        s = TaskSession(first)
        setup = await s.setup(task, LAUNCH)
        res = await s.execute("filesystem-write_file", json.dumps({"path": f"{setup.workspace}/left.txt",
                                                                   "content": "from episode one"}))
        _require(not res.is_error, "isolation", f"the first episode could not write a file: {res.content}")
    finally:
        await first.release()
    second = await backend.acquire(spec(task, source))
    try:
        s = TaskSession(second)
        setup = await s.setup(task, LAUNCH)
        res = await s.execute("filesystem-read_file", json.dumps({"path": f"{setup.workspace}/left.txt"}))
        _require(res.is_error and "from episode one" not in res.content, "isolation",
                 f"the second episode read the first one's file: {res.content[:200]}")
    finally:
        await second.release()


async def check_parallel(backend: Backend, source: Path, tasks: list[str]) -> None:
    """Episodes at once, one task twice among them, all pass with their oracles."""
    results = await asyncio.gather(*(oracle_episode(backend, source, t) for t in [*tasks, tasks[0]]))
    got = [(r.task, r.infra_error, r.reward) for r in results]
    _require(all(e is None and reward == 1.0 for _, e, reward in got), "parallel episodes", got)


# How long a backend may take to stop a command at its 2 s timeout.
EXEC_TIMEOUT_BOUND = 15


async def check_exec_timeout(backend: Backend, source: Path, task: str) -> None:
    """A command over its timeout is stopped within bounds (exec_timeout), and the sandbox still answers."""
    box = await backend.acquire(spec(task, source))
    try:
        loop = asyncio.get_running_loop()
        start = loop.time()
        try:
            # Just longer than the bound below: a backend that ignores the timeout is caught either way, and the
            # check costs no more wall time than that.
            await box.exec(["sleep", str(EXEC_TIMEOUT_BOUND + 1)], timeout=2)
        except InfraError as exc:
            _require(exc.kind == Kind.EXEC_TIMEOUT, "exec timeout", f"raised {exc.kind} instead of exec_timeout")
        else:
            raise NonConformance(f"exec timeout: `sleep {EXEC_TIMEOUT_BOUND + 1}` with a 2 s timeout returned")
        _require(loop.time() - start < EXEC_TIMEOUT_BOUND, "exec timeout",
                 f"took {loop.time() - start:.1f} s to stop a 2 s command")
        res = await box.exec(["echo", "still here"], timeout=30)
        _require(res.exit_code == 0 and res.stdout.strip() == "still here", "exec timeout",
                 f"the sandbox did not answer after the timeout: {res}")
    finally:
        await box.release()


async def check_sandbox_death_is_named(backend: Backend, source: Path, task: str, kill_code: str = KILL_DAEMON) -> None:
    """A tool call that kills its sandbox is an error naming that (daemon_died, sandbox_died), and nothing more
    gets through the dead sandbox."""
    box = await backend.acquire(spec(task, source))
    try:
        s = TaskSession(box)
        await s.setup(task, LAUNCH)
        for call, args in (("local-python-execute", {"code": kill_code, "timeout": 60}),
                           ("filesystem-read_file", {"path": "x"})):
            try:
                await s.execute(call, json.dumps(args))
            except InfraError as exc:
                _require(exc.kind in DIED, "sandbox death", f"{call} raised {exc.kind}: {exc.message[:200]}")
            else:
                raise NonConformance(f"sandbox death: {call} answered from a sandbox whose daemon was killed")
    finally:
        await box.release()


class _KillsItsSandbox:
    """A hostile policy: its first turn runs code that takes its sandbox down, its second reads a file."""
    name = "kills-its-sandbox"

    def __init__(self, code: str) -> None:
        self.code = code

    def start(self, task: str, setup: SetupResult) -> EpisodePolicy:
        oracle = Oracle(task, [[Call("local-python-execute", {"code": self.code, "timeout": 60})],
                               [Call("filesystem-read_file", {"path": "${workspace}/sales.csv"})]], "Done.")
        return _Scripted(oracle, variables(setup.workspace, setup.launch_time))


async def check_agent_kill_is_its_failure(backend: Backend, source: Path, task: str,
                                          kill_code: str = KILL_DAEMON) -> None:
    """After the agent acted, its sandbox dying is its own doing: a failure scored 0, never an infra error
    that would mask the run from training."""
    policy: Policy = _KillsItsSandbox(kill_code)
    cfg = EpisodeConfig(task=task, source=source, run_id=uuid.uuid4().hex[:12], episode_id=uuid.uuid4().hex,
                        launch_time=LAUNCH)
    r = await run_episode(cfg, backend, policy)
    _require(r.infra_error is None and (r.reward, r.passed) == (0.0, False), "agent kills its sandbox",
             f"infra_error={r.infra_error}, reward={r.reward}, pass={r.passed}")
    _require(r.failure is not None and r.failure["kind"] in DIED and r.failure["phase"] == "execute",
             "agent kills its sandbox", f"failure={r.failure}")


async def check_release_on_cancel(backend: Backend, source: Path, task: str) -> None:
    """An episode cancelled mid-way releases its sandbox on the way out: nothing of its run is left."""
    run = uuid.uuid4().hex[:12]
    job = asyncio.create_task(oracle_episode(backend, source, task, run=run))
    await asyncio.sleep(1.0)  # mid-setup or mid-episode
    job.cancel()
    try:
        await job
    except asyncio.CancelledError:
        pass
    left = (await backend.collect({"decathlon.run": run}, force=True)).removed
    _require(left == 0, "release on cancellation", f"{left} sandbox(es) of the cancelled run were left behind")


def tool_outputs(out: Path, task: str) -> list[str]:
    """The tool outputs an episode showed its model, with its workspace path made neutral."""
    messages = json.loads((out / task / "messages.json").read_text())
    ws = json.loads((out / task / "traj_log.json").read_text())["config"]["agent_workspace"]
    return [m["content"] for m in tokenize(messages, ws) if m["role"] == "tool"]


def stable(outputs: list[str]) -> list[str]:
    return ["<volatile>" if any(v in o for v in VOLATILE) else o for o in outputs]


@dataclass(frozen=True)
class Reference:
    reward: float | None
    passed: bool | None
    metrics: dict[str, float]
    outputs: list[str]


async def reference_run(backend: Backend, source: Path, task: str, tmp: Path) -> Reference:
    r = await oracle_episode(backend, source, task, tmp)
    return Reference(r.reward, r.passed, dict(r.metrics), tool_outputs(tmp, task))


async def check_same_as(backend: Backend, source: Path, task: str, reference: Reference, tmp: Path) -> None:
    """The same reward, verdict, metrics and tool outputs (bar what differs between any two runs) as the
    reference backend's run of the task."""
    r = await oracle_episode(backend, source, task, tmp)
    _require(r.infra_error is None, f"same as reference ({task})", f"infra error {r.infra_error}")
    got = (r.reward, r.passed, dict(r.metrics))
    _require(got == (reference.reward, reference.passed, reference.metrics), f"same as reference ({task})",
             f"{got} != {(reference.reward, reference.passed, reference.metrics)}")
    _require(stable(tool_outputs(tmp, task)) == stable(reference.outputs), f"same as reference ({task})",
             "the tool outputs differ")


Check = Callable[[], Awaitable[None]]


async def check_backend(backend: Backend, source: Path, tasks: list[str] | None = None,
                        reference: Backend | None = None, workdir: Path | None = None,
                        kill_code: str = KILL_DAEMON) -> dict[str, str | None]:
    """Every check on `backend`, in order; {check name: None where it held, else what broke}. `tasks` are
    tasks of `source` with oracles (all of them by default); with `reference` (the local backend, say),
    each task's run is also compared with the reference's."""
    tasks = sorted(tasks or [p.parent.name for p in (source / "tasks" / "finalpool").glob("*/task_config.json")])
    if not tasks:
        raise InfraError(Kind.USAGE, f"{source} has no tasks (tasks/finalpool/<task>/task_config.json)")
    first = tasks[0]
    checks: dict[str, Check] = {
        "isolation": lambda: check_isolation(backend, source, first),
        "parallel": lambda: check_parallel(backend, source, tasks[:3]),
        "exec_timeout": lambda: check_exec_timeout(backend, source, first),
        "sandbox_death": lambda: check_sandbox_death_is_named(backend, source, first, kill_code),
        "agent_kill": lambda: check_agent_kill_is_its_failure(backend, source, first, kill_code),
        "release_on_cancel": lambda: check_release_on_cancel(backend, source, first),
    }
    results: dict[str, str | None] = {}
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        if reference is not None:
            for task in tasks:
                ref = await reference_run(reference, source, task, Path(tmp) / "ref" / task)
                checks[f"same_as_reference:{task}"] = functools.partial(
                    check_same_as, backend, source, task, ref, Path(tmp) / "here" / task)
        for name, check in checks.items():
            try:
                await check()
                results[name] = None
            except (NonConformance, InfraError) as exc:
                results[name] = str(exc)
    return results


def main(argv: list[str] | None = None) -> int:
    from decathlon.backends import make_backend

    p = argparse.ArgumentParser(prog="python -m decathlon.conformance",
                                description="Run the backend conformance checks on one backend.")
    p.add_argument("--backend", default="local", help="local, compose or prime")
    p.add_argument("--source", type=Path, required=True, help="a task source with oracles (fixtures/toolathlon-mini)")
    p.add_argument("--task", action="append", help="a task to use (repeatable; default: every task of --source)")
    p.add_argument("--compare-local", action="store_true", help="also compare each task's run with the local backend")
    ns = p.parse_args(argv)

    async def go() -> dict[str, str | None]:
        backend = make_backend(ns.backend)
        reference = make_backend("local") if ns.compare_local else None
        try:
            return await check_backend(backend, ns.source.resolve(), ns.task, reference)
        finally:
            await backend.close()

    results = asyncio.run(go())
    for name, problem in results.items():
        print(f"{'ok  ' if problem is None else 'FAIL'} {name}" + (f": {problem}" if problem else ""))
    return 0 if all(v is None for v in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
