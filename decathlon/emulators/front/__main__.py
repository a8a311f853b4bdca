"""`python -m decathlon.emulators.front --root ROOT --home HOME --logs DIR [--eager gcp,snowflake] [--port N]`
(decathlon.emulators.kit.runtime)

Makes the episode's CA, writes HOME/saas/ca-bundle.pem, listens on 127.0.0.1 (a free port) and prints
`ready front {"http": PORT}`; serves until SIGTERM/SIGINT, stopping the emulators it started. The
emulators run on DECATHLON_SAAS_PYTHON (the saas virtualenv, ci/servers/saas.txt, which imports this project
through a .pth: ci/install_servers.py)."""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from decathlon.emulators.front import ca, routes
from decathlon.emulators.front.backends import Backends
from decathlon.emulators.front.proxy import Front
from decathlon.emulators.kit.runtime import Emulator, Options, Running, SetupError, main


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--home", type=Path, required=True, help="the episode's folder: the CA bundle goes to HOME/saas")
    p.add_argument("--logs", type=Path, required=True, help="where each emulator's log goes")
    p.add_argument("--eager", type=lambda s: [n for n in s.split(",") if n],
                   default=[n for n in os.environ.get("DECATHLON_FRONT_EAGER", "").split(",") if n],
                   help=f"emulators to start at once, of: {', '.join(routes.services())}")


async def start(options: Options) -> Running:
    args = options.extra
    unknown = sorted(set(args.eager) - set(routes.services()))
    if unknown:
        raise SetupError(f"unknown emulator(s) {', '.join(unknown)}; known: {', '.join(routes.services())}")
    python = os.environ.get("DECATHLON_SAAS_PYTHON") or sys.executable
    certs = ca.make(routes.certificate_names())
    ca.write_bundle(certs, args.home / "saas")
    backends = Backends(python, options.root, args.logs, preload=args.eager)
    backends.begin()
    front = Front(certs, backends)
    server = await asyncio.start_server(front.handle, options.host, options.port("http"), limit=64 * 1024)
    port = server.sockets[0].getsockname()[1]
    loop = asyncio.get_running_loop()
    for name in args.eager:
        # Started now, waited for by whoever connects first: the front is ready before they are.
        task = loop.create_task(backends.port(name))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def close() -> None:
        server.close()
        await backends.stop()

    return Running({"http": port}, close)


EMULATOR = Emulator("front", "The episode's SaaS front: vendors' host names over TLS, relayed to their emulators.",
                    ("http",), start, _arguments, root_help="the episode's seed root, handed to the emulators")

if __name__ == "__main__":
    sys.exit(main(EMULATOR))
