"""`python -m decathlon.emulators.canvas --root DIR [--host H] [--port http=N --port https=M] [--access-log]
[--id-floor KIND=N ...] [--quiz-start-ok] [--control SOCKET]` (decathlon.emulators.kit.runtime)

Seeds from DIR/configs/users_data.json, prints `ready canvas {"http": N, "https": M}` once both ports
listen, serves until SIGTERM/SIGINT, then exits 0. A directory problem or a bad option exits 2, a busy port 1, with
the reason on stderr.
"""
from __future__ import annotations

import argparse
import os
import sys

# aiohttp builds its *client* TLS contexts when imported, reading the system CA bundle: a sixth of
# the start-up budget. This process makes no outgoing TLS connection (its own certificate is loaded
# directly), so it points OpenSSL at an empty bundle unless the caller chose one.
if "SSL_CERT_FILE" not in os.environ and "SSL_CERT_DIR" not in os.environ:
    os.environ["SSL_CERT_FILE"] = os.devnull

from decathlon.emulators.kit.runtime import Emulator, Options, Running, SetupError, main  # noqa: E402

PORTS = {"http": 10001, "https": 20001}


def parse_floors(items: list[str]) -> dict[str, int]:
    floors: dict[str, int] = {}
    for item in items:
        kind, sep, value = item.partition("=")
        if not sep or not value.isdigit():
            raise SetupError(f"--id-floor expects KIND=N, got {item!r}")
        floors[kind] = int(value)
    return floors


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--access-log", action="store_true", help="log each request's method, path and status to stderr")
    p.add_argument("--id-floor", action="append", default=[], metavar="KIND=N",
                   help="the next id of KIND (course, quiz, assignment, ...) is N+1")
    p.add_argument("--quiz-start-ok", action="store_true",
                   help="answer a quiz start with 200 as Canvas does, not with the 500 of Toolathlon's deployment")


async def _start(options: Options) -> Running:
    from decathlon.emulators.canvas import start
    from decathlon.emulators.canvas.clock import system_clock
    from decathlon.emulators.canvas.state import CanvasState, fresh_store
    from decathlon.emulators.directory import DirectoryError, load_directory
    extra = options.extra
    floors = parse_floors(extra.id_floor)
    try:
        directory = load_directory(options.root)
    except DirectoryError as exc:
        raise SetupError(str(exc)) from None
    quiz_start_500 = not extra.quiz_start_ok
    try:
        service = await start(directory, options.host, {**PORTS, **options.ports}, log_requests=extra.access_log,
                              id_floors=floors, quiz_start_500=quiz_start_500)
    except ValueError as exc:
        raise SetupError(str(exc)) from None
    assert service.store is not None
    state = CanvasState(service.store, lambda: fresh_store(directory, system_clock, 0, floors, quiz_start_500))
    return Running(service.ports, service.close, state)


EMULATOR = Emulator("canvas", "Serve an emulated Canvas LMS (REST /api/v1, HTTP and HTTPS) until SIGTERM.",
                    tuple(PORTS), _start, _arguments, root_help="task root holding configs/users_data.json")

if __name__ == "__main__":
    sys.exit(main(EMULATOR))
