"""`python -m decathlon.emulators.snowflake --root ROOT [--host H] [--port N] [--control SOCKET]`
(decathlon.emulators.kit.runtime)."""
from __future__ import annotations

import sys

from decathlon.emulators.kit.runtime import main

from .serve import EMULATOR

if __name__ == "__main__":
    sys.exit(main(EMULATOR))
