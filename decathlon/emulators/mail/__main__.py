"""`python -m decathlon.emulators.mail --root DIR [--host H] [--port imap=N] [--port smtp=N] [--port smtp-mx=N]
[--control SOCKET]` (decathlon.emulators.kit.runtime).

Seeds the accounts from DIR/configs/users_data.json, prints `ready mail {"imap": N, "smtp": N, "smtp-mx": N}` once
every port listens, and serves until SIGTERM or SIGINT (then exits 0).
"""
from __future__ import annotations

import sys

from ..directory import DirectoryError, load_directory
from ..kit.runtime import Emulator, Options, Running, SetupError, main
from .service import DEFAULT_PORTS, NAME, start


async def _start(options: Options) -> Running:
    try:
        directory = load_directory(options.root)
    except DirectoryError as exc:
        raise SetupError(str(exc)) from None
    service = await start(directory, options.host, options.ports)
    from .state import MailState
    return Running(service.ports, service.close, MailState(service.store))


EMULATOR = Emulator(NAME, (__doc__ or "").split("\n\n")[1].split("\n")[0], tuple(DEFAULT_PORTS), _start,
                    root_help="task root holding configs/users_data.json")

if __name__ == "__main__":
    sys.exit(main(EMULATOR))
