"""One verifiers rollout's hold on a decathlon sandbox: acquire, evaluate once, save artifacts, release.

The Task (setup, scoring) and the Harness (chat loop, cleanup) are different objects that verifiers
calls at different times; what they share for one rollout lives here, on the rollout's `trace.state`
(kept out of traces.jsonl, and per rollout even when several rollouts run the same task).
"""
from __future__ import annotations

import asyncio
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import verifiers.v1 as vf
from pydantic import PrivateAttr

from decathlon import errors
from decathlon.core import blame

from decathlon.training import conflicts
from decathlon.core.agent_loop import FAILED, EpisodeFailed
from decathlon.backends import make_backend
from decathlon.backends.base import Sandbox, SandboxSpec
from decathlon.contract.result import EpisodeRecord, note_release, write_result
from decathlon.core.lifecycle import acquire, release, save_artifacts, warn
from decathlon.core.task_session import EvalResult, SetupResult, TaskSession
from decathlon.errors import Kind

# Every sandbox of this process carries one run label, so `decathlon gc --run` can collect what a
# crash leaves behind; vf-eval exports its run id as VF_RUN_ID before the first rollout.
_PROCESS_RUN = uuid.uuid4().hex[:12]


class InfraError(errors.InfraError, vf.RolloutError):
    """decathlon's InfraError as verifiers records it: the rollout fails (ok=False) instead of scoring 0.
    The same error (an errors.InfraError), also a RolloutError, so that verifiers puts it on the trace; its
    class name is what verifiers shows there.

    On the trace: `errors[-1].type == "InfraError"` with message "<kind>: <message>", and
    `info["infra_error"] = {kind, message, phase}`. A failure in setup or a tool call also leaves
    `stop_condition == "infra_error"`; one in scoring leaves the agent's own stop condition, every
    reward None.
    """

    @classmethod
    def wrap(cls, exc: errors.InfraError, phase: str) -> InfraError:
        return cls(exc.kind, exc.message, exc.phase or phase)

    def to_json(self) -> dict[str, str | None]:  # type: ignore[override]  # phase always present here
        return {"kind": str(self.kind), "message": self.message, "phase": self.phase}


FAILED_STATUS = FAILED  # the run's status when the episode failed on its own (see `fail`)


def fail(trace: vf.Trace, exc: errors.InfraError, phase: str) -> InfraError | EpisodeFailed:
    """What to raise for `exc`, also kept machine-readable on trace.info.

    After the agent acted (a model call, a tool call or the evaluation), a fault the environment does not
    own is the episode's failure (`trace.info["failure"]`, the episode scores 0: see decathlon.errors;
    its sandbox breaking, or its policy overflowing the model's context): an EpisodeFailed that ends the
    loop as a normal end would. Otherwise the rollout fails with an InfraError (ok=False, masked)."""
    ep = trace.state.episode if isinstance(trace.state, DecathlonState) else None
    if phase != "setup" and ep is not None and not blame.environment_owned(exc):
        ep.failure = {**exc.to_json(), "phase": exc.phase or phase}
        trace.info["failure"] = ep.failure
        return EpisodeFailed(exc)
    err = InfraError.wrap(exc, phase)
    trace.info["infra_error"] = err.to_json()
    return err


@dataclass
class Episode:
    task: str
    source: Path
    backend: str
    max_turns: int
    out: Path | None = None
    sandbox: Sandbox | None = None
    session: TaskSession | None = None
    setup: SetupResult | None = None
    messages: list[dict] = field(default_factory=list)  # the whole conversation, as the evaluator sees it
    status: str | None = None  # Toolathlon's run status, set by the harness when its loop ends
    turns: int = 0
    tool_calls: int = 0
    evaluation: asyncio.Future[EvalResult] | None = None
    released: bool = False
    saved: bool = False
    record: EpisodeRecord | None = None  # result.json, once saved; a failed release is added to it
    folder: Path | None = None
    failure: dict | None = None  # the episode's own failure after the agent acted (see `fail`): scored 0
    held: conflicts.Held | None = None  # the task's conflict group, held from acquire to release
    started: float | None = None
    saas: str = "emulated"  # real: the user's own SaaS accounts, shared across a conflict group's tasks

    async def acquire(self, episode_id: str) -> None:
        """Acquire the sandbox (bounded, and shielded from cancellation), after the task's conflict group:
        with real SaaS accounts, two tasks of one group never hold sandboxes at once in this process (emulated,
        each rollout has its own)."""
        self.started = time.time()
        self.held = await conflicts.take(conflicts.groups_of(str(self.source)), self.task, live=self.saas == "real")
        run_id = os.environ.get("VF_RUN_ID") or _PROCESS_RUN
        spec = SandboxSpec(run_id, episode_id, self.task, self.source, {"decathlon.harness": "verifiers"})
        try:
            self.sandbox = await acquire(make_backend(self.backend), spec)
        except BaseException:
            self.held.release()
            raise
        self.session = TaskSession(self.sandbox)

    def evaluate(self, status: str) -> asyncio.Future[EvalResult]:
        """The evaluator's verdict, computed once however many scoring hooks ask for it."""
        if self.evaluation is None:
            if self.session is None:
                raise errors.InfraError(Kind.NO_SESSION, "nothing to evaluate: the sandbox was never set up", "evaluate")
            self.evaluation = asyncio.ensure_future(self.session.evaluate(self.messages, status))
        return self.evaluation

    def verdict(self) -> EvalResult | None:
        """The evaluation's result if it completed, else None."""
        ev = self.evaluation
        if ev is None or not ev.done() or ev.cancelled() or ev.exception() is not None:
            return None
        return ev.result()

    async def save_artifacts(self, trace: vf.Trace) -> None:
        """Copy the episode's files to <out>/<task>/<trace id>/ while the sandbox still exists, and write
        its result.json (the same model `decathlon run` writes)."""
        if self.out is None or self.saved:
            return
        self.saved = True
        self.folder = self.out / self.task / trace.id
        await save_artifacts(self.folder, None if self.released else self.sandbox, self.messages, self.task)
        verdict = self.verdict()
        # An episode that failed on its own got no evaluation but the FAILED verdict: pass false, as in `run`.
        passed = verdict.passed if verdict else (False if self.failure is not None else None)
        record = EpisodeRecord(
            task=self.task, trace_id=trace.id, ok=trace.ok, status=self.status, turns=self.turns,
            tool_calls=self.tool_calls, passed=passed, metrics=dict(verdict.metrics) if verdict else {},
            reward=trace.reward if trace.ok else None,
            rewards={k: (r.score if r else None) for k, r in trace.rewards.items()},
            infra_error=trace.info.get("infra_error"), failure=self.failure, errors=[e.message for e in trace.errors],
            run={"source": str(self.source), "source_name": self.source.name, "policy": "verifiers",
                 "backend": self.backend, "mode": "live"},
            started=self.started, finished=time.time())
        if self.held is not None and self.held.group is not None:
            record.conflict_group, record.conflict_wait = self.held.group, self.held.waited
        self.record = record
        self._write()

    def _write(self) -> None:
        if self.record is None or self.folder is None:
            return
        try:
            write_result(self.folder, self.record)
        except OSError as exc:
            warn(f"could not write the result of {self.task} under {self.folder}: {exc}")

    async def release(self) -> None:
        """Release the sandbox, then the conflict group; idempotent, bounded, and never raises (the
        rollout's outcome stands). A release that failed is said, and kept in result.json."""
        try:
            if self.released or self.sandbox is None:
                self.released = True
                return
            self.released = True
            if self.evaluation is not None and not self.evaluation.done():
                self.evaluation.cancel()
            error = await release(self.sandbox)
            if error is not None and self.record is not None:
                note_release(self.record, error)
                self._write()
        finally:
            if self.held is not None:
                self.held.release()


class DecathlonState(vf.State):
    """trace.state of a decathlon rollout; the episode is a private attribute, so it is never serialised."""

    _episode: Episode | None = PrivateAttr(default=None)

    @property
    def episode(self) -> Episode | None:
        return self._episode

    def attach(self, episode: Episode) -> None:
        self._episode = episode
