"""The emulators behind the front, each a process of its own, started on first use (or at once when asked), forked
ready-imported by the front's forkserver (decathlon.emulators.kit.forkserver), so a first use waits milliseconds.

An emulator that exits while the episode runs takes the front down with it (exit 3, naming it on stderr):
the supervisor records the front as died and the episode's check names it (`service_died`), rather than
clients getting refused connections the agent would be blamed for."""
from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from decathlon.emulators.kit import forked, spawn
from decathlon.emulators.kit.forked import Forked, ForkServer, ForkServerError

LOG_TAIL = 1500


class BackendError(RuntimeError):
    pass


@dataclass
class Backend:
    name: str
    proc: Forked | None = None
    port: int = 0
    ready: asyncio.Future[int] | None = None
    watcher: asyncio.Task | None = field(default=None, repr=False)


def _tail(path: Path) -> str:
    return spawn.log_tail(path, LOG_TAIL)


class Backends:
    def __init__(self, python: str, root: Path, logs: Path, control: Path | None = None,
                 preload: list[str] | None = None) -> None:
        self.python, self.root, self.logs = python, root, logs
        # Each emulator's control socket (kit.control: the grader's reset, snapshot, restore and seed), beside the
        # local services' (the supervisor's --control): in the services' own folder, which the agent never reaches.
        self.control = control if control is not None else logs.parent / "control"
        # Every emulator is forked by it, ready-imported (PRELOAD: the ones the episode is known to need).
        self.forkserver = ForkServer(python, self.control / "forkserver-front.sock", logs / "forkserver-front.log",
                                     preload)
        self._backends: dict[str, Backend] = {}
        self.stopping = False

    def begin(self) -> None:
        """Starts the forkserver now, so that the first emulator asked for does not wait for its imports."""
        self.forkserver.start()

    def started(self) -> dict[str, int]:
        return {n: b.port for n, b in sorted(self._backends.items()) if b.port}

    async def port(self, name: str) -> int:
        backend = self._backends.get(name)
        if backend is None:
            backend = self._backends[name] = Backend(name)
            backend.ready = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().create_task(self._start(backend))
        assert backend.ready is not None
        return await asyncio.shield(backend.ready)

    async def _start(self, b: Backend) -> None:
        assert b.ready is not None
        log = self.logs / f"{b.name}.log"
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        self.control.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            b.proc = await self.forkserver.fork(b.name, spawn.arguments(b.name, self.root, control=self.control),
                                                log, env)
            ports = await forked.read_ready(b.proc, b.name)
            b.port = ports.get("http") or ports.get("grpc") or 0
            if not b.port:
                raise BackendError(f"reported neither an http nor a grpc port: {ports}")
        except (OSError, ValueError, BackendError, ForkServerError) as exc:
            message = f"the {b.name} emulator did not start: {exc}; log tail: {_tail(log)}"
            print(f"front: {message}", file=sys.stderr, flush=True)
            if b.proc is not None and b.proc.returncode is None:
                b.proc.kill()
            b.ready.set_exception(BackendError(message))
            b.ready.exception()  # retrieved: each waiter gets it through the shield
            return
        print(f"front: the {b.name} emulator is ready on port {b.port} (pid {b.proc.pid})", file=sys.stderr, flush=True)
        b.ready.set_result(b.port)
        b.watcher = asyncio.get_running_loop().create_task(self._watch(b))

    async def _watch(self, b: Backend) -> None:
        assert b.proc is not None
        code = await b.proc.wait()
        if self.stopping:
            return
        how = spawn.how(code)
        # Its log tail first, the verdict last: whoever reads the end of this log (the episode's service check)
        # sees which emulator died.
        print(f"front: log tail of the {b.name} emulator: {_tail(self.logs / f'{b.name}.log')}", file=sys.stderr, flush=True)
        print(f"front: the {b.name} emulator (pid {b.proc.pid}) {how}; the front stops with it", file=sys.stderr,
              flush=True)
        await self.stop()
        os._exit(3)

    async def stop(self, grace: float = 2.0) -> None:
        self.stopping = True
        await forked.stop_all([b.proc for b in self._backends.values() if b.proc is not None], grace)
        await self.forkserver.stop()
