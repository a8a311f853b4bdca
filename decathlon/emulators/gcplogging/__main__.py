"""`python -m decathlon.emulators.gcplogging --root ROOT [--host H] [--port N] [--control SOCKET]`
(decathlon.emulators.kit.runtime): serve until SIGTERM (exit 0)."""
from __future__ import annotations

import sys

from decathlon.emulators.gcplogging.server import EMULATOR
from decathlon.emulators.kit.runtime import main

if __name__ == "__main__":
    sys.exit(main(EMULATOR))
