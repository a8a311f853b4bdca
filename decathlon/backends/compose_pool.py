"""A warm pool for the compose backend: containers started ahead of need, each used by one episode only.

A container's start-up (create, start, the zygote importing the MCP SDK) is most of a fresh
episode's setup; a pooled one has done all of it. Every container still serves exactly one episode
and is removed after it: the pool trades idle containers for setup latency, never isolation.

A background thread keeps `size` containers ready (it works with any event loop, and across them).
Pooled containers carry the run's label, so `decathlon gc --run` finds them if the runner is killed;
their episode label is `pooled` (Docker cannot relabel a container).
"""
from __future__ import annotations

import atexit
import queue
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

POOLED_EPISODE = "pooled"


@dataclass
class Warm:
    container: Any
    channel: Path | None


class WarmPool:
    def __init__(self, size: int, make: Callable[[], Warm], discard: Callable[[Warm], None],
                 healthy: Callable[[Warm], bool]) -> None:
        self.size = size
        self._make, self._discard, self._healthy = make, discard, healthy
        self._items: queue.Queue[Warm] = queue.Queue()
        self._wake = threading.Event()
        self._closed = False
        self._errors = 0
        self._thread = threading.Thread(target=self._fill, name="decathlon-warm-pool", daemon=True)
        self._thread.start()
        atexit.register(self.close)

    def _fill(self) -> None:
        while not self._closed:
            if self._items.qsize() >= self.size:
                self._wake.wait(1.0)
                self._wake.clear()
                continue
            try:
                item = self._make()
            except Exception as exc:  # noqa: BLE001 - acquire falls back to a fresh container
                self._errors += 1
                print(f"decathlon: warm pool could not start a container ({exc}); retrying", file=sys.stderr)
                self._wake.wait(min(30.0, 2.0 ** min(self._errors, 5)))
                self._wake.clear()
                continue
            self._errors = 0
            if self._closed:
                self._discard(item)
                return
            self._items.put(item)

    def ready(self) -> int:
        """How many containers are ready now."""
        return self._items.qsize()

    def take(self) -> Warm | None:
        """A ready container, or None (the caller starts a fresh one). Never blocks on the engine's work."""
        while True:
            try:
                item = self._items.get_nowait()
            except queue.Empty:
                return None
            finally:
                self._wake.set()
            if self._healthy(item):
                return item
            self._discard(item)  # died while waiting: never handed out

    def close(self) -> None:
        """Stop filling and remove every container not handed out. Idempotent."""
        self._closed = True
        self._wake.set()
        self._thread.join(timeout=120)
        while True:
            try:
                self._discard(self._items.get_nowait())
            except queue.Empty:
                return
