"""A cancelled episode (a run's Ctrl-C or SIGTERM) leaves no sandbox behind, even one still being made: by the time
whoever cancelled it has awaited it, the sandbox is released."""
from __future__ import annotations

import asyncio
from pathlib import Path

from decathlon.backends.base import SandboxSpec
from decathlon.core import lifecycle


class _Box:
    def __init__(self, released: list[str]) -> None:
        self.released = released

    async def release(self) -> None:
        await asyncio.sleep(0.05)  # a release that itself waits, as a real one does
        self.released.append("box")


class _SlowBackend:
    def __init__(self, fail: bool = False) -> None:
        self.released: list[str] = []
        self.fail = fail

    async def acquire(self, spec: SandboxSpec) -> _Box:
        await asyncio.sleep(0.3)
        if self.fail:
            raise RuntimeError("no sandbox")
        return _Box(self.released)


def _cancel_mid_acquire(backend: _SlowBackend) -> None:
    async def go() -> None:
        spec = SandboxSpec("run", "e" * 32, "task", Path("."))
        episode = asyncio.ensure_future(lifecycle.acquire(backend, spec))  # type: ignore[arg-type]
        await asyncio.sleep(0.1)
        episode.cancel()
        done = await asyncio.gather(episode, return_exceptions=True)
        assert isinstance(done[0], asyncio.CancelledError)
    asyncio.run(go())


def test_a_sandbox_being_made_when_its_episode_is_cancelled_is_released_before_the_episode_ends():
    backend = _SlowBackend()
    _cancel_mid_acquire(backend)
    assert backend.released == ["box"]


def test_an_acquire_that_fails_after_its_cancellation_ends_it_quietly():
    backend = _SlowBackend(fail=True)
    _cancel_mid_acquire(backend)
    assert backend.released == []
