"""`python -m decathlon.emulators.woocommerce --root DIR [--host H] [--port http=N] [--site-host H:P]
[--control SOCKET]` (decathlon.emulators.kit.runtime): serve until SIGTERM/SIGINT.

Prints exactly one line, `ready woocommerce {"http": N}`, once listening.
"""
from __future__ import annotations

import argparse
import sys

from ..kit.runtime import Emulator, Options, Running, SetupError, main


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--site-host", default="localhost:10003", help="the host WordPress believes it has (its siteurl)")


async def _start(options: Options) -> Running:
    from ..directory import DirectoryError, load_directory
    from .clock import system_clock
    from .service import DEFAULT_PORTS, start
    from .site import Network
    from .state import WooCommerceState

    try:
        directory = load_directory(options.root)
    except DirectoryError as exc:
        raise SetupError(str(exc)) from None
    site_host = options.extra.site_host
    running = await start(directory, options.host, {**DEFAULT_PORTS, **options.ports}, site_host=site_host)
    state = WooCommerceState(running.network, lambda: Network(directory, system_clock, site_host))
    return Running(running.ports, running.close, state)


EMULATOR = Emulator("woocommerce", "Serve an emulated WordPress multisite with WooCommerce (REST wc/v3, wp/v2) until "
                    "SIGTERM.", ("http",), _start, _arguments,
                    root_help="task root whose configs/users_data.json seeds the stores")

if __name__ == "__main__":
    sys.exit(main(EMULATOR))
