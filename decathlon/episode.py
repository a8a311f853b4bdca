"""One episode: acquire → setup → (policy → execute)* → evaluate → release, each phase timed and bounded."""
from __future__ import annotations

import asyncio
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from decathlon.backends.base import Backend, Sandbox, SandboxSpec
from decathlon.errors import InfraError
from decathlon.policies import Policy
from decathlon.task_session import EvalResult, TaskSession, Timeouts

STOP_TOOL = "local-claim_done"
ACQUIRE_TIMEOUT = 600.0
RELEASE_TIMEOUT = 120.0
ARTIFACTS = ("traj_log.json", "eval_res.json", "eval_output.txt")


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


@dataclass
class EpisodeResult:
    task: str
    reward: float = 0.0
    passed: bool | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    infra_error: dict | None = None
    timings: dict[str, float] = field(default_factory=dict)
    turns: int = 0
    tool_calls: int = 0
    status: str | None = None

    def to_json(self) -> dict:
        d = asdict(self)
        d["pass"] = d.pop("passed")
        return d


def apply_context(messages: list[dict], keep_last_turns: int) -> list[dict]:
    """Honour manage_context: keep the system and task messages plus the last N assistant turns."""
    head = [m for m in messages[:2] if m.get("role") in ("system", "user")]
    starts = [i for i, m in enumerate(messages) if m.get("role") == "assistant" and i >= len(head)]
    if keep_last_turns >= len(starts):
        return messages
    cut = starts[len(starts) - keep_last_turns] if keep_last_turns else len(messages)
    return head + messages[cut:]


class _Timer:
    def __init__(self, timings: dict[str, float], phase: str) -> None:
        self.timings, self.phase = timings, phase

    def __enter__(self) -> None:
        self.start = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        self.timings[self.phase] = round(self.timings.get(self.phase, 0.0) + time.monotonic() - self.start, 4)


async def _bounded(coro, timeout: float, phase: str):
    try:
        return await asyncio.wait_for(coro, timeout)
    except asyncio.TimeoutError:
        raise InfraError(f"{phase}_timeout", f"the {phase} phase ran over {timeout:.0f} s", phase) from None


async def run_episode(cfg: EpisodeConfig, backend: Backend, policy: Policy) -> EpisodeResult:
    result = EpisodeResult(cfg.task)
    sandbox: Sandbox | None = None
    messages: list[dict] = []
    try:
        with _Timer(result.timings, "acquire"):
            spec = SandboxSpec(cfg.run_id, cfg.episode_id, cfg.task, cfg.source)
            sandbox = await _bounded(backend.acquire(spec), ACQUIRE_TIMEOUT, "acquire")
        session = TaskSession(sandbox, cfg.timeouts)
        with _Timer(result.timings, "setup"):
            setup = await session.setup(cfg.task, cfg.launch_time, cfg.mode)
        messages = [{"role": "system", "content": setup.system_prompt}, {"role": "user", "content": setup.prompt}]
        actor = policy.start(cfg.task, setup)
        status, sent = "max_turns_reached", list(messages)
        with _Timer(result.timings, "agent"):
            for _ in range(cfg.max_turns):
                reply = await actor.act(sent, setup.tools)
                messages.append(reply)
                sent.append(reply)
                result.turns += 1
                calls = reply.get("tool_calls") or []
                if not calls:
                    status = "success"
                    break
                done = False
                for call in calls:
                    name = call["function"]["name"]
                    res = await session.execute(name, call["function"].get("arguments") or "")
                    result.tool_calls += 1
                    tool_msg = {"role": "tool", "tool_call_id": call["id"], "content": res.content}
                    messages.append(tool_msg)
                    sent.append(tool_msg)
                    if res.context and "keep_last_turns" in res.context:
                        sent = apply_context(sent, int(res.context["keep_last_turns"]))
                    done = done or name == STOP_TOOL
                if done:
                    status = "success"
                    break
        result.status = status
        with _Timer(result.timings, "evaluate"):
            ev: EvalResult = await session.evaluate(messages, status)
        result.passed = ev.passed
        result.metrics = ev.metrics
        result.reward = 1.0 if ev.passed else 0.0
    except InfraError as exc:
        result.infra_error = exc.to_json()
        result.reward = 0.0
    except asyncio.CancelledError:
        result.infra_error = {"kind": "cancelled", "message": "the episode was cancelled"}
        raise
    finally:
        if sandbox is not None:
            await _save_artifacts(cfg, sandbox, messages)
            with _Timer(result.timings, "release"):
                try:
                    await asyncio.wait_for(asyncio.shield(sandbox.release()), RELEASE_TIMEOUT)
                except (asyncio.TimeoutError, Exception) as exc:  # noqa: BLE001 - never mask the episode's outcome
                    if result.infra_error is None:
                        result.infra_error = {"kind": "release_failed", "message": repr(exc), "phase": "release"}
        if cfg.out_dir is not None:
            folder = cfg.out_dir / cfg.task
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "result.json").write_text(json.dumps(result.to_json(), indent=2), encoding="utf-8")
    return result


async def _save_artifacts(cfg: EpisodeConfig, sandbox: Sandbox, messages: list[dict]) -> None:
    if cfg.out_dir is None:
        return
    folder = cfg.out_dir / cfg.task
    folder.mkdir(parents=True, exist_ok=True)
    for name in ARTIFACTS:
        try:
            (folder / name).write_bytes(await sandbox.get_file(name))
        except InfraError:
            continue
    (folder / "messages.json").write_text(json.dumps(messages, ensure_ascii=False, indent=2), encoding="utf-8")
