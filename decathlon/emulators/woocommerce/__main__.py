"""`python -m decathlon.emulators.woocommerce --root DIR [--host H] [--port http=N] [--control SOCKET]`: serve until
SIGTERM/SIGINT.

Prints exactly one line, `ready woocommerce {"http": N}`, once listening.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from pathlib import Path


def _ports(values: list[str]) -> dict[str, int]:
    ports: dict[str, int] = {}
    for value in values:
        name, sep, number = value.partition("=")
        if not sep or name != "http" or not number.isdigit():
            raise argparse.ArgumentTypeError(f"--port takes http=N, not {value!r}")
        ports[name] = int(number)
    return ports


async def _serve(root: Path, host: str, ports: dict[str, int] | None, site_host: str, control: Path | None = None) -> int:
    from ..directory import DirectoryError, load_directory
    from .service import start

    try:
        directory = load_directory(root)
    except DirectoryError as exc:
        print(f"woocommerce: {exc}", file=sys.stderr)
        return 2
    try:
        running = await start(directory, host, ports, site_host=site_host)
    except OSError as exc:
        print(f"woocommerce: cannot listen on {host}: {exc}", file=sys.stderr)
        return 1
    control_runner = None
    if control is not None:  # the grader's reset/snapshot/restore/seed (decathlon.emulators.kit.control)
        from ..kit import control as kit_control
        from .clock import system_clock
        from .site import Network
        from .state import WooCommerceState

        state = WooCommerceState(running.network, lambda: Network(directory, system_clock, site_host))
        try:
            control_runner = await kit_control.serve(state, control)
        except OSError as exc:
            print(f"woocommerce: cannot serve the control socket {control}: {exc}", file=sys.stderr)
            await running.close()
            return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    print(f"ready woocommerce {json.dumps(running.ports)}", flush=True)
    await stop.wait()
    if control_runner is not None:
        await control_runner.cleanup()
    await running.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m decathlon.emulators.woocommerce", description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True, type=Path, help="task root whose configs/users_data.json seeds the stores")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", action="append", default=[], help="http=N (default 10003; 0 picks a free port)")
    parser.add_argument("--site-host", default="localhost:10003", help="the host WordPress believes it has (its siteurl)")
    parser.add_argument("--control", type=Path, help="a Unix socket for the grader's control app (made 0600)")
    args = parser.parse_args(argv)
    try:
        ports = _ports(args.port) or None
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    return asyncio.run(_serve(args.root, args.host, ports, args.site_host, args.control))


if __name__ == "__main__":
    sys.exit(main())
