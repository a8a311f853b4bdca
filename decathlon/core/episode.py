"""One episode: acquire → setup → (policy → execute)* → evaluate → release, each phase timed and bounded."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from decathlon.backends.base import Backend, Sandbox, SandboxSpec
from decathlon.core.agent_loop import Loop, run_loop
from decathlon.core.lifecycle import acquire, release, save_artifacts, warn
from decathlon.core.blame import environment_owned
from decathlon.contract.result import EpisodeRecord, note_release, write_result
from decathlon.errors import InfraError, Kind
from decathlon.core.policies import Policy
from decathlon.recordings.cassettes import FROM_CASSETTE, cassette_path, read_cassette_bytes, recorded_verdict, trajectory_path
from decathlon.core.seeds import Pack, upload as upload_seeds
from decathlon.core.task_session import RECORDED_PATH, RECORDED_TRAJECTORY, EvalResult, TaskSession, Timeouts
from decathlon.tape.store import write_atomic



@dataclass(frozen=True)
class EpisodeConfig:
    task: str
    source: Path
    run_id: str
    episode_id: str
    launch_time: str | None = None
    max_turns: int = 100
    mode: str = "live"
    out_dir: Path | None = None
    timeouts: Timeouts = field(default_factory=Timeouts)
    cassette: Path | None = None  # replay: the cassette to serve from
    record_to: Path | None = None  # record: the folder that receives <task>.cassette.json and its trajectory
    omit_unavailable_servers: bool = False  # start without servers that cannot run here (a policy calling no tool)
    frozen_clock: bool = False  # the task's own processes start at launch_time as "now" (decathlon/sandbox/clock.py)
    saas: str = "emulated"  # emulated: the episode's own SaaS emulators (decathlon/emulators/front); real: the vendors
    seeds: Pack | None = None  # this task's seed packs (checked by `run --seeds`), loaded at setup
    repeat: int = 1  # which of the task's --repeats this episode is (1-based)
    repeat_folder: bool = False  # artifacts under <out>/<task>/repeat-<i>/ (more than one repeat) or <out>/<task>/
    run_info: dict = field(default_factory=dict)  # what ran (source, policy, backend, mode): `report` groups by it
    conflict_group: str | None = None  # live mode: the task's conflict group held for this episode
    conflict_wait: float = 0.0  # seconds waited for another task of that group
    progress: Callable[[str], None] | None = None  # hears each phase as it starts (`setup: preprocess`…), for a display

    @property
    def folder(self) -> Path | None:
        """This episode's artifacts folder under --out."""
        if self.out_dir is None:
            return None
        return self.out_dir / self.task / f"repeat-{self.repeat}" if self.repeat_folder else self.out_dir / self.task


# What one episode leaves: the result.json model, shared with the verifiers harness.
EpisodeResult = EpisodeRecord
# Setup's own steps, kept beside its total in the episode's timings (the reply's names → ours).
SETUP_STEPS = {"services_start": "services", "preprocess": "preprocess", "servers": "servers",
               "preflight_wait": "preflight"}


class _Timer:
    def __init__(self, timings: dict[str, float], phase: str) -> None:
        self.timings, self.phase = timings, phase

    def __enter__(self) -> None:
        self.start = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        self.timings[self.phase] = round(self.timings.get(self.phase, 0.0) + time.monotonic() - self.start, 4)


async def run_episode(cfg: EpisodeConfig, backend: Backend, policy: Policy) -> EpisodeResult:
    result = EpisodeResult(task=cfg.task, repeat=cfg.repeat, run=dict(cfg.run_info), started=time.time(),
                           conflict_group=cfg.conflict_group, conflict_wait=cfg.conflict_wait)
    sandbox: Sandbox | None = None
    messages: list[dict] = []
    loop: Loop | None = None
    phase = "acquire"

    def say(what: str) -> None:
        if cfg.progress is not None:
            cfg.progress(what)

    try:
        say("acquire")
        with _Timer(result.timings, "acquire"):
            spec = SandboxSpec(cfg.run_id, cfg.episode_id, cfg.task, cfg.source)
            sandbox = await acquire(backend, spec)
        session = TaskSession(sandbox, cfg.timeouts)
        phase = "setup"
        say("setup")
        with _Timer(result.timings, "setup"):
            from_tape = cfg.mode in FROM_CASSETTE
            tape = read_cassette_bytes(cfg.cassette) if from_tape and cfg.cassette else None
            if from_tape and tape is None:
                raise InfraError(Kind.USAGE, f"a {cfg.mode} needs a cassette", "setup")
            if cfg.mode == "rerun":
                result.replayed_servers = []
                result.recorded_pass = recorded_verdict(tape)
            seeded = await upload_seeds(sandbox, cfg.seeds, cfg.episode_id) if cfg.seeds is not None else None
            setup = await session.setup(cfg.task, cfg.launch_time, cfg.mode, tape, cfg.omit_unavailable_servers,
                                        cfg.frozen_clock, cfg.saas,
                                        (lambda step: say(f"setup: {step}")) if cfg.progress is not None else None,
                                        seeds=seeded)
        for theirs, ours in SETUP_STEPS.items():
            if theirs in setup.timings:
                result.timings[ours] = round(setup.timings[theirs], 4)
        result.omitted_servers = [o.model_dump() for o in setup.omitted_servers]
        if cfg.mode == "rerun":
            result.replayed_servers = [r.model_dump() for r in setup.replayed_servers]
        messages = [{"role": "system", "content": setup.system_prompt}, {"role": "user", "content": setup.prompt}]
        actor = policy.start(cfg.task, setup)
        loop = Loop(messages)
        phase = "agent"
        say("agent")
        with _Timer(result.timings, "agent"):
            await run_loop(loop, lambda sent: actor.act(sent, setup.tools), session.execute, cfg.max_turns)
        result.status = loop.status or "max_turns_reached"
        phase = "evaluate"
        say("evaluate")
        with _Timer(result.timings, "evaluate"):
            ev: EvalResult = await session.evaluate(messages, result.status)
        result.passed = ev.passed
        result.metrics = ev.metrics
        result.reward = 1.0 if ev.passed else 0.0
        if loop.failure is not None:
            # The agent ended its own run (it overflowed the model's context): status "failed", so no
            # evaluator ran (task-api grades a "success" alone). It scores as every failure does, 0 with
            # pass false; null is the turn cap's, a limit of ours cutting a run short of any verdict, and
            # verifiers scores this run by the same FAILED verdict (passed=False).
            _blame(result, loop.failure, "agent", acted=True, replaying=cfg.mode in FROM_CASSETTE)
        if cfg.mode == "record" and cfg.record_to is not None:
            phase = "record"
            await _keep_recording(cfg, sandbox)
    except InfraError as exc:
        _blame(result, exc, phase, acted=loop is not None and loop.acted, replaying=cfg.mode in FROM_CASSETTE)
    except asyncio.CancelledError:
        result.infra_error = {"kind": "cancelled", "message": "the episode was cancelled", "phase": phase}
        raise
    except Exception as exc:  # noqa: BLE001 - a bug of ours fails this episode alone, named
        result.infra_error = {"kind": "internal_error", "phase": phase,
                              "message": f"{type(exc).__name__}: {exc} (a bug in decathlon; please report it)"}
    finally:
        if loop is not None:
            result.turns, result.tool_calls = loop.turns, loop.tool_calls
        if sandbox is not None:
            try:
                if cfg.folder is not None:
                    await save_artifacts(cfg.folder, sandbox, messages, cfg.task)
            finally:  # whatever saving did, the sandbox goes
                say("release")
                with _Timer(result.timings, "release"):
                    note_release(result, await release(sandbox))
        result.finished = time.time()
        _write_result(cfg, result)
    return result


def _blame(result: EpisodeResult, exc: InfraError, phase: str, acted: bool, replaying: bool) -> None:
    """Once the agent has acted, a fault of its sandbox may be its own doing: the episode's failure
    (reward 0), not an infra error that would mask the run. Before, or for faults the environment owns
    (the model endpoint, the replay layer, ...), an infra error."""
    err = {**exc.to_json(), "phase": exc.phase or phase}
    result.reward = 0.0
    if acted and not environment_owned(exc, replaying):
        result.failure = err
        result.passed = False
    else:
        result.infra_error = err


def _write_result(cfg: EpisodeConfig, result: EpisodeResult) -> None:
    if cfg.folder is None:
        return
    try:
        write_result(cfg.folder, result)
    except OSError as exc:
        warn(f"could not write the result of {cfg.task} under {cfg.out_dir}: {exc}")


async def _keep_recording(cfg: EpisodeConfig, sandbox: Sandbox) -> None:
    """The sandbox wrote its cassette (and the redacted trajectory that drove it) only because the
    episode ended cleanly; keep both, whole, side by side."""
    assert cfg.record_to is not None
    tape = (await sandbox.get_file(RECORDED_PATH)).decode("utf-8")
    trajectory = (await sandbox.get_file(RECORDED_TRAJECTORY)).decode("utf-8")
    write_atomic(trajectory_path(cfg.record_to, cfg.task), trajectory)
    write_atomic(cassette_path(cfg.record_to, cfg.task), tape)
