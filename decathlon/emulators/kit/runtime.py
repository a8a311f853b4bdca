"""One runtime for every emulator process and the SaaS front: the same command line, ready line, signals, control
socket and exit codes, whatever the emulator serves with (aiohttp, grpc.aio, uvicorn/ASGI, raw asyncio protocols).

    python -m decathlon.emulators.<name> --root ROOT [--host H] [--port NAME=N ...] [--control SOCKET] [its own]

- `--port NAME=N` sets one of its ports (0: any free one); an emulator with one port also takes `--port N`. A port
  not named keeps the emulator's default (the fixed ports the checkout's scripts expect, or any free one).
- It prints exactly one line on stdout, `ready <name> {"<port name>": N, ...}`, once every port accepts connections
  (the ports read back from the listening sockets, 0 resolved), then serves until SIGTERM or SIGINT.
- `--control SOCKET` serves the grader's control app on that Unix socket (decathlon.emulators.kit.control: reset,
  snapshot, restore, load_seed), made 0600, never on a TCP port the agent could call.
- Exit codes: 0 stopped by a signal; 1 it could not serve (a busy port, a control socket it cannot make, a failure
  while serving); 2 a bad command line or a seed root it cannot use (the reason on stderr, no traceback).

An emulator declares an `Emulator` (its name, its port names and `start`) and calls `main(EMULATOR)` from its
`__main__`: what it serves with is its own business, what the supervisor and the front see is this."""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterable

if TYPE_CHECKING:
    from aiohttp import web

    from decathlon.emulators.kit.state import State

OK, FAILED, USAGE = 0, 1, 2


class SetupError(Exception):
    """The seed root (or an option) cannot be used: said on stderr, exit 2."""


@dataclass(frozen=True)
class Options:
    root: Path
    host: str
    ports: dict[str, int]  # the ports the command line named; the rest keep the emulator's defaults
    control: Path | None
    extra: argparse.Namespace  # the emulator's own options

    def port(self, name: str, default: int = 0) -> int:
        return self.ports.get(name, default)


@dataclass
class Running:
    """An emulator that listens: its ports as bound, how to stop it, and what the control socket serves."""

    ports: dict[str, int]
    close: Callable[[], Awaitable[None]]
    state: State | None = None
    control_routes: tuple[web.RouteDef, ...] = ()
    # Completes when the emulator stops on its own (its result: the exit code), e.g. a server that failed to load.
    stopped: asyncio.Future[int] | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Emulator:
    name: str
    description: str
    ports: tuple[str, ...]  # the names of its ports, as the ready line gives them
    start: Callable[[Options], Awaitable[Running]]
    arguments: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    root_help: str = "the episode's seed root (configs/users_data.json, ...)"


def parser(emulator: Emulator) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"python -m decathlon.emulators.{emulator.name}", description=emulator.description)
    p.add_argument("--root", type=Path, required=True, help=emulator.root_help)
    p.add_argument("--host", default="127.0.0.1")
    single = " or N (its one port)" if len(emulator.ports) == 1 else ""
    p.add_argument("--port", action="append", default=[], metavar="NAME=N",
                   help=f"NAME one of {', '.join(emulator.ports)}{single}; 0: any free port, said on the ready line")
    p.add_argument("--control", type=Path, help="a Unix socket for the grader's control app (made 0600)")
    emulator.arguments(p)
    return p


def parse_ports(emulator: Emulator, items: Iterable[str]) -> dict[str, int]:
    ports: dict[str, int] = {}
    for item in items:
        name, sep, number = item.rpartition("=")
        if not sep and len(emulator.ports) == 1:
            name = emulator.ports[0]
        if name not in emulator.ports or not number.isdigit() or int(number) > 65535:
            raise SetupError(f"--port takes NAME=N with NAME one of {', '.join(emulator.ports)}"
                             f"{' (or N)' if len(emulator.ports) == 1 else ''} and N a port, not {item!r}")
        ports[name] = int(number)
    return ports


async def _serve(emulator: Emulator, options: Options) -> int:
    try:
        running = await emulator.start(options)
    except SetupError as exc:
        print(f"{emulator.name}: {exc}", file=sys.stderr)
        return USAGE
    except OSError as exc:  # typically a port in use
        print(f"{emulator.name}: cannot listen on {options.host}: {exc}", file=sys.stderr)
        return FAILED
    control = None
    if options.control is not None:
        if running.state is None:
            await running.close()
            print(f"{emulator.name}: has no state to serve on a control socket", file=sys.stderr)
            return USAGE
        from decathlon.emulators.kit import control as kit_control
        try:
            control = await kit_control.serve(running.state, options.control, running.control_routes)
        except OSError as exc:
            await running.close()
            print(f"{emulator.name}: cannot serve the control socket {options.control}: {exc}", file=sys.stderr)
            return FAILED
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"ready {emulator.name} {json.dumps(running.ports)}", flush=True)
    waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(stop.wait())]
    if running.stopped is not None:
        waits.append(running.stopped)
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    waits[0].cancel()
    code = OK
    if running.stopped is not None and running.stopped.done() and not stop.is_set():
        code = running.stopped.result() if running.stopped.exception() is None else FAILED
    if control is not None:
        await control.cleanup()
    await running.close()
    return code


def main(emulator: Emulator, argv: list[str] | None = None) -> int:
    p = parser(emulator)
    args = p.parse_args(argv)  # a bad command line: argparse's usage message, exit 2
    try:
        ports = parse_ports(emulator, args.port)
    except SetupError as exc:
        p.error(str(exc))
    options = Options(args.root, args.host, ports, args.control, args)
    return asyncio.run(_serve(emulator, options))


async def aiohttp_site(app: web.Application, host: str, port: int) -> tuple[web.AppRunner, int]:
    """Serve `app` on host:port with aiohttp; the runner (to clean up) and the port as bound."""
    from aiohttp import web
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port, reuse_address=True).start()
    except OSError:
        await runner.cleanup()
        raise
    bound = [a for a in runner.addresses if isinstance(a, tuple)]
    return runner, int(bound[0][1]) if bound else port
