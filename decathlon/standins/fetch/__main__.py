"""Entry point: ``python -m decathlon.standins.fetch`` (arguments are ignored, as upstream ignores them)."""

from __future__ import annotations

import sys

# turndown recurses once per level of HTML nesting (three frames a level); V8's stack allows a
# few thousand levels, Python's default limit only about three hundred.
RECURSION_LIMIT = 12_000


def main(argv: list[str]) -> int:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    # Imported only now: the SDK import dominates start-up time.
    import anyio

    from .server import serve

    anyio.run(serve)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
