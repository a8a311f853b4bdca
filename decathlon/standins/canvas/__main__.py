"""Entry point: ``CANVAS_API_TOKEN=... CANVAS_DOMAIN=host:port python -m decathlon.standins.canvas``.

Like the reference, command-line arguments are ignored and both variables are required (it
exits with status 1 naming them otherwise). Canvas is reached at ``https://<CANVAS_DOMAIN>/api/v1``.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> int:
    token = os.environ.get("CANVAS_API_TOKEN")
    domain = os.environ.get("CANVAS_DOMAIN")
    if not token or not domain:
        print("Missing required environment variables:", file=sys.stderr)
        print("- CANVAS_API_TOKEN: Your Canvas API token", file=sys.stderr)
        print("- CANVAS_DOMAIN: Your Canvas domain (e.g., school.instructure.com)", file=sys.stderr)
        return 1
    # Imported only now: the SDK import dominates start-up time.
    import anyio

    from .server import serve

    anyio.run(serve, token, domain)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
