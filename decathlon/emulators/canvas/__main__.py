"""`python -m decathlon.emulators.canvas --root DIR [--host H] [--port http=N --port https=M] [--access-log]
[--id-floor KIND=N ...] [--control SOCKET]`

Seeds from DIR/configs/users_data.json, prints `ready canvas {"http": N, "https": M}` once both ports
listen, serves until SIGTERM/SIGINT, then exits 0. A directory problem, a busy port or a bad option
exits non-zero with the reason on stderr.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path

# aiohttp builds its *client* TLS contexts when imported, reading the system CA bundle: a sixth of
# the start-up budget. This process makes no outgoing TLS connection (its own certificate is loaded
# directly), so it points OpenSSL at an empty bundle unless the caller chose one.
if "SSL_CERT_FILE" not in os.environ and "SSL_CERT_DIR" not in os.environ:
    os.environ["SSL_CERT_FILE"] = os.devnull


def parse_ports(items: list[str]) -> dict[str, int] | None:
    if not items:
        return None
    ports: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in ("http", "https") or not value.isdigit():
            raise SystemExit(f"canvas: --port expects http=N or https=N, got {item!r}")
        ports[name] = int(value)
    return {"http": 10001, "https": 20001, **ports}


def parse_floors(items: list[str]) -> dict[str, int]:
    floors: dict[str, int] = {}
    for item in items:
        kind, sep, value = item.partition("=")
        if not sep or not value.isdigit():
            raise SystemExit(f"canvas: --id-floor expects KIND=N, got {item!r}")
        floors[kind] = int(value)
    return floors


async def serve(root: Path, host: str, ports: dict[str, int] | None, log_requests: bool = False,
                id_floors: dict[str, int] | None = None, quiz_start_500: bool = True, control: Path | None = None) -> int:
    from decathlon.emulators.canvas import start
    from decathlon.emulators.directory import DirectoryError, load_directory
    try:
        directory = load_directory(root)
    except DirectoryError as exc:
        print(f"canvas: {exc}", file=sys.stderr)
        return 1
    try:
        service = await start(directory, host, ports, log_requests=log_requests, id_floors=id_floors,
                              quiz_start_500=quiz_start_500)
    except OSError as exc:
        print(f"canvas: cannot listen: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"canvas: {exc}", file=sys.stderr)
        return 1
    control_runner = None
    if control is not None:  # the grader's reset/snapshot/restore/seed (decathlon.emulators.kit.control)
        from decathlon.emulators.canvas.clock import system_clock
        from decathlon.emulators.canvas.state import CanvasState, fresh_store
        from decathlon.emulators.kit import control as kit_control
        assert service.store is not None
        state = CanvasState(service.store, lambda: fresh_store(directory, system_clock, 0, id_floors, quiz_start_500))
        try:
            control_runner = await kit_control.serve(state, control)
        except OSError as exc:
            print(f"canvas: cannot serve the control socket {control}: {exc}", file=sys.stderr)
            await service.close()
            return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"ready canvas {json.dumps(service.ports)}", flush=True)
    await stop.wait()
    if control_runner is not None:
        await control_runner.cleanup()
    await service.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m decathlon.emulators.canvas", description=__doc__)
    p.add_argument("--root", type=Path, required=True, help="task root holding configs/users_data.json")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", action="append", default=[], metavar="NAME=N", help="http=N and/or https=N")
    p.add_argument("--access-log", action="store_true", help="log each request's method, path and status to stderr")
    p.add_argument("--id-floor", action="append", default=[], metavar="KIND=N",
                   help="the next id of KIND (course, quiz, assignment, ...) is N+1")
    p.add_argument("--quiz-start-ok", action="store_true",
                   help="answer a quiz start with 200 as Canvas does, not with the 500 of Toolathlon's deployment")
    p.add_argument("--control", type=Path, help="a Unix socket for the grader's control app (made 0600)")
    a = p.parse_args(argv)
    return asyncio.run(serve(a.root, a.host, parse_ports(a.port), a.access_log, parse_floors(a.id_floor),
                             not a.quiz_start_ok, a.control))


if __name__ == "__main__":
    sys.exit(main())
