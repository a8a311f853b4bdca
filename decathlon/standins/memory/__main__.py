"""Entry point: ``MEMORY_FILE_PATH=/abs/memory.json python -m decathlon.standins.memory``."""

from __future__ import annotations

import os
import sys

from .storage import MemoryFile, resolve_memory_path


def main(argv: list[str]) -> int:
    # Like upstream, command-line arguments are ignored; the file comes from the environment.
    store = MemoryFile(resolve_memory_path(os.environ.get("MEMORY_FILE_PATH"), os.getcwd()))
    # Imported only now: the SDK import dominates start-up time.
    import anyio

    from .server import serve

    anyio.run(serve, store)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
