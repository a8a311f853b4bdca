"""`python -m decathlon.emulators.mail --root DIR [--host H] [--port imap=N] [--port smtp=N] [--control SOCKET]`.

Seeds the accounts from DIR/configs/users_data.json, prints `ready mail {"imap":N,"smtp":N}` once
both ports listen, and serves until SIGTERM or SIGINT (then exits 0).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from pathlib import Path

from ..directory import DirectoryError, load_directory
from .service import DEFAULT_PORTS, NAME, start


def _port(text: str) -> tuple[str, int]:
    name, sep, number = text.partition("=")
    if not sep or name not in DEFAULT_PORTS or not number.isdigit() or int(number) > 65535:
        names = ", ".join(DEFAULT_PORTS)
        raise argparse.ArgumentTypeError(f"expected NAME=PORT with NAME one of {names}, got {text!r}")
    return name, int(number)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m decathlon.emulators.mail", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, required=True, help="task root holding configs/users_data.json")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=_port, action="append", default=[], metavar="NAME=N",
                        help=f"override a port (defaults: {DEFAULT_PORTS}; 0 picks a free one)")
    parser.add_argument("--control", type=Path, help="a Unix socket for the grader's control app (made 0600)")
    return parser


async def _serve(args: argparse.Namespace) -> int:
    directory = load_directory(args.root)
    service = await start(directory, args.host, dict(args.port))
    control_runner = None
    if args.control is not None:  # the grader's reset/snapshot/restore/seed (decathlon.emulators.kit.control)
        from ..kit import control as kit_control
        from .state import MailState
        try:
            control_runner = await kit_control.serve(MailState(service.store), args.control)
        except OSError as exc:
            await service.close()
            raise OSError(f"the control socket {args.control}: {exc}") from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"ready {NAME} {json.dumps(service.ports, separators=(',', ':'))}", flush=True)
    await stop.wait()
    if control_runner is not None:
        await control_runner.cleanup()
    await service.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return asyncio.run(_serve(args))
    except DirectoryError as exc:
        print(f"mail: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # typically the port is taken
        print(f"mail: cannot listen on {args.host}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
