"""Entry point: `GOOGLE_CLIENT_ID=… GOOGLE_CLIENT_SECRET=… GOOGLE_REFRESH_TOKEN=… python -m
decathlon.standins.google_forms`."""
from __future__ import annotations

import os
import sys

REQUIRED = ("GOOGLE_CLIENT_ID", "GOOGLE_CLIENT_SECRET", "GOOGLE_REFRESH_TOKEN")


def main(argv: list[str]) -> int:
    if not all(os.environ.get(name) for name in REQUIRED):
        # The reference's own words (it throws them at start-up).
        print("Error: GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET, and GOOGLE_REFRESH_TOKEN environment variables are "
              "required", file=sys.stderr)
        return 1
    from ..google_api import UserCredentials, missing_client

    why = missing_client()
    if why is not None:
        print(why, file=sys.stderr)
        return 1
    # Imported only now: the SDK dominates start-up time.
    import anyio

    from .server import run

    anyio.run(run, UserCredentials(client_id=os.environ["GOOGLE_CLIENT_ID"],
                                   client_secret=os.environ["GOOGLE_CLIENT_SECRET"],
                                   refresh_token=os.environ["GOOGLE_REFRESH_TOKEN"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
