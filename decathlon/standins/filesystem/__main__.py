"""Entry point: ``python -m decathlon.standins.filesystem ROOT [ROOT...]``."""

from __future__ import annotations

import sys

from .paths import Sandbox


def main(argv: list[str]) -> int:
    if not argv:
        print(
            "Usage: python -m decathlon.standins.filesystem <allowed-directory> [additional-directories...]",
            file=sys.stderr,
        )
        return 1
    try:
        sandbox = Sandbox.from_arguments(argv)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 1
    # Imported only after the arguments are known to be usable: the SDK import dominates start-up time.
    import anyio

    from .server import serve

    anyio.run(serve, sandbox)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
