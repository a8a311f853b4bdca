"""The task's MCP servers, each started once and its session held for the whole episode."""
from __future__ import annotations

import asyncio
import importlib
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.memory import create_client_server_memory_streams

from decathlon.errors import InfraError, Kind
from decathlon.sandbox.output import tail
from decathlon.sandbox.servers_config import START_TIMEOUT, ServerSpec

STOP_TIMEOUT = 10.0


@dataclass
class HeldServer:
    spec: ServerSpec
    errlog: Path
    # Served in this process (a replay, or one of our stand-ins) instead of spawned.
    factory: Callable[[], Any] | None = None
    session: ClientSession | None = None
    tools: list[Any] = field(default_factory=list)
    startup_ms: float = 0.0
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task | None = None

    def stderr_tail(self) -> str:
        try:
            return tail(self.errlog.read_text(encoding="utf-8", errors="replace").strip(), 1500)
        except OSError:
            return ""

    async def _serve_session(self, read, write, ready: asyncio.Future) -> None:
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools, cursor = [], None
            while True:
                page = await session.list_tools(params=_page(cursor))
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
            self.session, self.tools = session, tools
            ready.set_result(None)
            await self._stop.wait()

    async def _hold(self, ready: asyncio.Future) -> None:
        try:
            factory = self.factory or inprocess_factory(self.spec)
            if factory is not None:
                await self._hold_inprocess(factory, ready)
                return
            params = StdioServerParameters(command=self.spec.command, args=self.spec.args, env=self.spec.env or None,
                                           cwd=self.spec.cwd)
            with open(self.errlog, "w", encoding="utf-8") as err:
                async with stdio_client(params, errlog=err) as (read, write):
                    await self._serve_session(read, write, ready)
        except BaseException as exc:  # noqa: BLE001 - reported through the future, re-raised if cancelled
            if not ready.done():
                ready.set_exception(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.session = None

    async def _hold_inprocess(self, factory: Callable[[], Any], ready: asyncio.Future) -> None:
        """A server of ours, served in this process over in-memory JSON-RPC (the real protocol, no spawn)."""
        try:
            server = factory()
        except Exception as exc:
            self.errlog.write_text(f"{type(exc).__name__}: {exc}\n", encoding="utf-8")
            raise
        async with create_client_server_memory_streams() as (client, srv):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: server.run(srv[0], srv[1], server.create_initialization_options()))
                try:
                    await self._serve_session(client[0], client[1], ready)
                finally:
                    tg.cancel_scope.cancel()

    async def start(self, timeout: float = START_TIMEOUT) -> None:
        began = time.monotonic()
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._hold(ready), name=f"mcp-{self.spec.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout)
        except asyncio.TimeoutError:
            await self.stop()
            raise InfraError(Kind.SERVER_START, f"MCP server {self.spec.name!r} did not start within {timeout:.0f} s; "
                             f"stderr tail: {self.stderr_tail() or '(empty)'}") from None
        except Exception as exc:  # noqa: BLE001 - any failure to start is the server's, said with its stderr
            await self.stop()
            raise InfraError(Kind.SERVER_START, f"MCP server {self.spec.name!r} failed to start "
                             f"({self.spec.command}): {_describe(exc)}; stderr tail: "
                             f"{self.stderr_tail() or '(empty)'}") from None
        self.startup_ms = (time.monotonic() - began) * 1000

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None and not self._task.done():
            try:
                await asyncio.wait_for(self._task, STOP_TIMEOUT)
            except (asyncio.TimeoutError, asyncio.CancelledError, Exception):  # noqa: BLE001 - stopping anyway
                self._task.cancel()


def inprocess_factory(spec: ServerSpec) -> Callable[[], Any] | None:
    """The stand-in's `inprocess_server(argv)` when the spec runs one of ours with this interpreter.

    Same code, same JSON-RPC, no interpreter start per server (most of a stdio server's start-up is
    importing the SDK, which the daemon already has). DECATHLON_INPROCESS_STANDINS=0 spawns them instead.
    """
    if os.environ.get("DECATHLON_INPROCESS_STANDINS", "1") == "0" or "FAKETIME" in spec.env:
        return None  # a frozen clock is a process's own (LD_PRELOAD), so that stand-in runs as one
    args = spec.args
    if spec.command != sys.executable or len(args) < 2 or args[0] != "-m" or not args[1].startswith("decathlon.standins."):
        return None
    try:
        module = importlib.import_module(args[1])
    except ImportError:
        return None
    build = getattr(module, "inprocess_server", None)
    return None if build is None else (lambda: build(args[2:]))


def _page(cursor: str | None):
    if cursor is None:
        return None
    from mcp.types import PaginatedRequestParams
    return PaginatedRequestParams(cursor=cursor)


def _describe(exc: BaseException) -> str:
    """Unwrap anyio's exception groups down to the first real cause."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


async def start_all(specs: list[ServerSpec], logs: Path,
                    factories: dict[str, Callable[[], Any]] | None = None) -> dict[str, HeldServer]:
    logs.mkdir(parents=True, exist_ok=True)
    held = {s.name: HeldServer(s, logs / f"{s.name}.stderr", (factories or {}).get(s.name)) for s in specs}
    results = await asyncio.gather(*(h.start() for h in held.values()), return_exceptions=True)
    failures = [r for r in results if isinstance(r, BaseException)]
    if failures:
        await stop_all(held)
        first = failures[0]
        raise first if isinstance(first, InfraError) else InfraError(Kind.SERVER_START, _describe(first))
    return held


async def stop_all(held: dict[str, HeldServer]) -> None:
    await asyncio.gather(*(h.stop() for h in held.values()), return_exceptions=True)
