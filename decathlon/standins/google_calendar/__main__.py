"""Entry point: `python -m decathlon.standins.google_calendar` (the reference's `auth` subcommand, a browser sign-in,
has no place offline and is refused)."""
from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from ..google_api import missing_client
    from .credentials import CredentialsError, from_environment

    why = missing_client()
    if why is not None:
        print(why, file=sys.stderr)
        return 1
    try:
        user = from_environment()
    except CredentialsError as exc:
        print(exc, file=sys.stderr)
        return 1
    if argv[:1] == ["auth"]:
        print("Error: `auth` opens a browser to sign in to Google; offline, write the credentials file instead",
              file=sys.stderr)
        return 2
    # Imported only now: the SDK and Google's client dominate start-up time.
    import anyio

    from .server import run

    anyio.run(run, user)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
