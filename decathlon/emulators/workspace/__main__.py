"""`python -m decathlon.emulators.workspace --root ROOT [--host H] [--port N] [--control SOCKET]`
(decathlon.emulators.kit.runtime)."""
import sys

from decathlon.emulators.kit.runtime import main
from decathlon.emulators.workspace.app import EMULATOR

if __name__ == "__main__":
    sys.exit(main(EMULATOR))
