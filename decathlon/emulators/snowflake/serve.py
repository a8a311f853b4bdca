"""Serving, on the emulators' runtime (decathlon.emulators.kit.runtime): listen, then the ready line; uvicorn until
SIGTERM/SIGINT.

fakesnow (with the connector, DuckDB and pyarrow it imports) takes ~0.4 s to import, more than the whole start-up
budget. It loads on a thread from the first instant while the socket is bound and uvicorn starts; the ready line
goes out as soon as the socket accepts connections, and a request that arrives before the load has finished waits
for it. A load that fails stops the server with exit status 1.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import signal
import socket
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

from decathlon.emulators.kit.runtime import Emulator, Options, Running

NAME = "snowflake"


class _Loader:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        threading.Thread(target=self._load, name="snowflake-load", daemon=True).start()

    def _load(self) -> None:
        try:
            from .lockdown import install

            install(self.root)  # before fakesnow opens its database (on the import of its server module)
            from .app import build

            self.future.set_result(build())
        except BaseException as exc:  # noqa: BLE001 (reported on stderr; the server stops with status 1)
            traceback.print_exc(file=sys.stderr)
            self.future.set_exception(exc)


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY only on sockets that say so, and without it every response
    # waits out the client's delayed ACK (~40 ms a query).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


async def start(options: Options) -> Running:
    loader = _Loader(options.root)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format=f"{NAME}: %(levelname)s %(name)s: %(message)s")
    sock = _listen(options.host, options.port("http"))  # an OSError: the runtime says it cannot listen (exit 1)
    import uvicorn  # type: ignore[import-not-found,import-untyped,unused-ignore]

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            return
        await (await asyncio.wrap_future(loader.future))(scope, receive, send)

    config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False, lifespan="off", ws="none",
                            http="h11", loop="asyncio", timeout_graceful_shutdown=3, server_header=False)
    server = uvicorn.Server(config)
    # uvicorn re-raises a signal it captured once it has shut down; a Python handler makes that a no-op. The runtime's
    # own handlers, installed once this returns, take SIGTERM and SIGINT from then on.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started and not serving.done():
        await asyncio.sleep(0.002)
    if serving.done():
        raise OSError("uvicorn stopped before it served")
    loop = asyncio.get_running_loop()
    stopped: asyncio.Future[int] = loop.create_future()

    def on_load(future: concurrent.futures.Future[Any]) -> None:  # on the loader's thread
        if future.exception() is not None:
            loop.call_soon_threadsafe(_failed)

    def _failed() -> None:
        if not stopped.done():
            stopped.set_result(1)

    loader.future.add_done_callback(on_load)

    async def close() -> None:
        server.should_exit = True
        await serving

    async def app_module() -> Any:
        await asyncio.wrap_future(loader.future)  # the app is loaded on a thread; its state needs it
        from . import app
        return app

    from .state import SnowflakeState
    return Running({"http": sock.getsockname()[1]}, close, SnowflakeState(app_module, loader.root / "snowflake-stage"),
                   stopped=stopped)


EMULATOR = Emulator(NAME, "Serve an emulated Snowflake account until SIGTERM.", ("http",), start,
                    root_help="the episode's seed root: the stage folder and temporary files go under it "
                              "(Snowflake starts empty)")
