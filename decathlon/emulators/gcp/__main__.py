"""`python -m decathlon.emulators.gcp --root ROOT [--host H] [--port N] [--control SOCKET]`
(decathlon.emulators.kit.runtime)."""
import sys

from decathlon.emulators.gcp.app import EMULATOR
from decathlon.emulators.kit.runtime import main

if __name__ == "__main__":
    sys.exit(main(EMULATOR))
