"""`python -m decathlon.emulators.gcplogging --root ROOT [--host H] [--port N] [--control SOCKET]`: serve until SIGTERM
(exit 0)."""
from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m decathlon.emulators.gcplogging",
                                description="Serve an emulated Google Cloud Logging v2 (gRPC, h2c) until SIGTERM.")
    p.add_argument("--root", type=Path, required=True, help="the episode's seed root (unused: Logging starts empty)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 (the default): any free port, reported on the ready line")
    p.add_argument("--control", type=Path, help="a Unix socket for the grader's control app (made 0600)")
    args = p.parse_args(argv)
    from .server import serve  # after parsing: `--help` and a bad option need neither grpc nor the types

    return asyncio.run(serve(args.host, args.port, control=args.control))


if __name__ == "__main__":
    sys.exit(main())
