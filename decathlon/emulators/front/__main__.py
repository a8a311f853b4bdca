"""`python -m decathlon.emulators.front --root ROOT --home HOME --logs DIR [--eager gcp,snowflake]`

Makes the episode's CA, writes HOME/saas/ca-bundle.pem, listens on 127.0.0.1 (a free port) and prints
`ready front {"http": PORT}`; serves until SIGTERM/SIGINT, stopping the emulators it started. The
emulators run on DECATHLON_SAAS_PYTHON (the saas virtualenv, ci/servers/saas.txt, which imports this project
through a .pth: ci/install_servers.py)."""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from decathlon.emulators.front import ca, routes
from decathlon.emulators.front.backends import Backends
from decathlon.emulators.front.proxy import Front


async def serve(args: argparse.Namespace) -> int:
    python = os.environ.get("DECATHLON_SAAS_PYTHON") or sys.executable
    folder = args.home / "saas"
    certs = ca.make(routes.certificate_names())
    ca.write_bundle(certs, folder)
    backends = Backends(python, args.root, args.logs)
    front = Front(certs, backends)
    server = await asyncio.start_server(front.handle, args.host, 0, limit=64 * 1024)
    port = server.sockets[0].getsockname()[1]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    for name in args.eager:
        # Started now, waited for by whoever connects first: the front is ready before they are.
        task = loop.create_task(backends.port(name))
        task.add_done_callback(lambda t: t.exception())
    print(f"ready front {json.dumps({'http': port})}", flush=True)
    await stop.wait()
    server.close()
    await backends.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m decathlon.emulators.front", description=__doc__.split("\n\n")[0])
    p.add_argument("--root", type=Path, required=True, help="the episode's seed root, handed to the emulators")
    p.add_argument("--home", type=Path, required=True, help="the episode's folder: the CA bundle goes to HOME/saas")
    p.add_argument("--logs", type=Path, required=True, help="where each emulator's log goes")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--eager", type=lambda s: [n for n in s.split(",") if n],
                   default=[n for n in os.environ.get("DECATHLON_FRONT_EAGER", "").split(",") if n],
                   help=f"emulators to start at once, of: {', '.join(routes.services())}")
    args = p.parse_args(argv)
    unknown = sorted(set(args.eager) - set(routes.services()))
    if unknown:
        p.error(f"unknown emulator(s) {', '.join(unknown)}; known: {', '.join(routes.services())}")
    return asyncio.run(serve(args))


if __name__ == "__main__":
    sys.exit(main())
