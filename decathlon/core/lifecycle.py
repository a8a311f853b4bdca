"""The phases every episode shares, whichever harness drives it (`decathlon run` or a verifiers rollout):
acquire a sandbox, copy its artifacts out, release it, each bounded and none losing a sandbox or an outcome.

decathlon.core.episode strings them together for the CLI; decathlon.training.vf_episode calls them from
verifiers' hooks. Both write the same result.json (decathlon.contract.result).
"""
from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from decathlon.backends import leases
from decathlon.backends.base import Backend, Sandbox, SandboxSpec
from decathlon.errors import InfraError, Kind

ACQUIRE_TIMEOUT = 600.0
RELEASE_TIMEOUT = 120.0
# What the sandbox leaves in the episode's home for --out: Toolathlon's own trajectory log and verdict.
ARTIFACTS = ("traj_log.json", "eval_res.json", "eval_output.txt")


async def acquire(backend: Backend, spec: SandboxSpec, timeout: float = ACQUIRE_TIMEOUT) -> Sandbox:
    """A sandbox, bounded in time; shielded, so a cancellation cannot lose one being created (it is
    released as soon as it exists)."""
    leases.hold(spec.run_id)  # `decathlon gc` leaves this run's sandboxes alone while we live
    pending = asyncio.ensure_future(asyncio.wait_for(backend.acquire(spec), timeout))
    try:
        return await asyncio.shield(pending)
    except asyncio.CancelledError:
        await _release_when_made(pending)
        raise
    except asyncio.TimeoutError:
        raise InfraError(Kind.ACQUIRE_TIMEOUT, f"no sandbox within {timeout:.0f} s", "acquire") from None


async def _release_when_made(pending: asyncio.Future[Sandbox]) -> None:
    """A cancelled acquire waits for the sandbox being made and releases it before the cancellation goes on:
    whoever awaits the cancelled episode (a run's Ctrl-C or SIGTERM) then knows it left nothing. Cancelled once
    more meanwhile (asyncio.run's last sweep), it leaves the release to a callback, the best it can still do."""
    try:
        sandbox = await asyncio.shield(pending)
    except asyncio.CancelledError:
        pending.add_done_callback(_release_orphan)
        raise
    except Exception:  # noqa: BLE001 - no sandbox was made: nothing to release
        return
    await release(sandbox)


def _release_orphan(fut: asyncio.Future[Sandbox]) -> None:
    if not fut.cancelled() and fut.exception() is None:
        asyncio.ensure_future(fut.result().release())


async def release(sandbox: Sandbox, timeout: float = RELEASE_TIMEOUT) -> dict[str, Any] | None:
    """Release the sandbox, bounded; never raises (the episode's outcome stands). What went wrong, as an
    error record ({kind: release_failed, message, phase}), or None; `decathlon gc` collects what is left
    by its labels."""
    try:
        await asyncio.wait_for(asyncio.shield(sandbox.release()), timeout)
    except asyncio.TimeoutError:
        return _release_failed(f"the sandbox was not released within {timeout:.0f} s")
    except Exception as exc:  # noqa: BLE001 - whatever the backend raised, the outcome is kept
        return _release_failed(f"{type(exc).__name__}: {exc}")
    return None


def _release_failed(message: str) -> dict[str, Any]:
    warn(f"{message}; `decathlon gc` removes what is left")
    return {"kind": str(Kind.RELEASE_FAILED), "message": message, "phase": "release"}


async def save_artifacts(folder: Path, sandbox: Sandbox | None, messages: list[dict[str, Any]], task: str) -> None:
    """The sandbox's files (while it still exists) and the conversation, into `folder`. Never raises: a
    failure to save is reported, and the sandbox is released all the same."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if sandbox is not None:
            for name in ARTIFACTS:
                try:
                    data = await sandbox.get_file(name)
                except InfraError:
                    continue  # not every episode gets far enough to write every file
                (folder / name).write_bytes(data)
        (folder / "messages.json").write_bytes(json_bytes(messages))
    except Exception as exc:  # noqa: BLE001 - a disk full or a broken reply: reported, never in release's way
        warn(f"could not save the artifacts of {task} to {folder}: {exc}")


def json_bytes(obj: object) -> bytes:
    """Indented UTF-8 JSON; escaped instead where a string holds a lone surrogate (not UTF-8)."""
    try:
        return json.dumps(obj, ensure_ascii=False, indent=2).encode()
    except UnicodeEncodeError:
        return json.dumps(obj, indent=2).encode()


def warn(text: str) -> None:
    print(f"decathlon: warning: {text}", file=sys.stderr)
