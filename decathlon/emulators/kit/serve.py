"""The entry point of an aiohttp emulator: `python -m decathlon.emulators.<name> --root ROOT [--host H] [--port N]
[--control SOCKET]`.

Listens on H:N (N=0: a free port), prints `ready <name> {"http": PORT}` once it accepts connections, serves
until SIGTERM/SIGINT, then exits 0. A bad option or a busy port exits non-zero with the reason on stderr.

`--control SOCKET` also serves the emulator's control app (reset, snapshot, restore, seed: the grader's alone;
decathlon.emulators.kit.control) on a Unix socket made 0600 for the service's user, its folder the state root:
never on a TCP port the agent could call.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Awaitable, Callable

from aiohttp import web

from decathlon.emulators.kit.control import listen


@dataclass(frozen=True)
class Options:
    root: Path
    host: str
    port: int
    control: Path | None


AppFactory = Callable[[Options], Awaitable[tuple[web.Application, web.Application | None]]]


def parse(name: str, argv: list[str] | None, doc: str | None = None) -> Options:
    p = argparse.ArgumentParser(prog=f"python -m decathlon.emulators.{name}", description=doc)
    p.add_argument("--root", type=Path, required=True, help="the episode's seed root (configs/users_data.json …)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 (the default): any free port, reported on the ready line")
    p.add_argument("--control", type=Path, help="a Unix socket for the grader's control app")
    a = p.parse_args(argv)
    return Options(a.root, a.host, a.port, a.control)


async def _serve(name: str, options: Options, factory: AppFactory) -> int:
    try:
        app, control = await factory(options)
    except (OSError, ValueError) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 1
    runners = []
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    runners.append(runner)
    site = web.TCPSite(runner, options.host, options.port, reuse_address=True)
    try:
        await site.start()
    except OSError as exc:
        print(f"{name}: cannot listen on {options.host}:{options.port}: {exc}", file=sys.stderr)
        await runner.cleanup()
        return 1
    port = int(runner.addresses[0][1]) if runner.addresses else options.port
    if control is not None and options.control is not None:
        try:
            runners.append(await listen(control, options.control))
        except OSError as exc:
            print(f"{name}: cannot serve the control socket {options.control}: {exc}", file=sys.stderr)
            for r in reversed(runners):
                await r.cleanup()
            return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"ready {name} {json.dumps({'http': port})}", flush=True)
    await stop.wait()
    for r in reversed(runners):
        await r.cleanup()
    return 0


def run(name: str, factory: AppFactory, argv: list[str] | None = None, doc: str | None = None) -> int:
    return asyncio.run(_serve(name, parse(name, argv, doc), factory))
