"""`python -m decathlon.emulators.snowflake --root ROOT [--host H] [--port N] [--control SOCKET]`."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .serve import run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m decathlon.emulators.snowflake",
                                description="Serve an emulated Snowflake account until SIGTERM.")
    p.add_argument("--root", type=Path, required=True,
                   help="the episode's seed root: the stage folder and temporary files go under it "
                        "(Snowflake starts empty)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 (the default): any free port, reported on the ready line")
    p.add_argument("--control", type=Path, help="a Unix socket for the grader's control app (made 0600)")
    args = p.parse_args(argv)
    return run(args.host, args.port, args.root, args.control)


if __name__ == "__main__":
    sys.exit(main())
