"""`python -m decathlon.standins.google_cloud --project-id P …`: google-cloud-mcp's own command line and server
(module `src.server` of the PyPI package), run on its virtualenv, its allowed names read as upstream's commit reads
them (decathlon/standins/google_cloud/__init__.py).

Under `--saas real` the `--service-account-path` value is a token of the episode's key broker, not a path
(decathlon/standins/keyclaim.py): the key is fetched first of all, and the package, which opens the path it is given
four times while it sets up (google-auth, the Storage client), is given `/proc/self/fd/N` of a memfd holding it.
Only this process can open that (it is not dumpable), and the memfd is closed once the package is set up: the key
then lives in the credentials objects in memory, never in a file."""
from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from decathlon.standins.google_cloud import ALLOWED_GLOBALS, AllowedNames
from decathlon.standins.keyclaim import BROKERED_FLAGS, claim_or_exit, with_value

KEY_FLAG = BROKERED_FLAGS["decathlon.standins.google_cloud"]


def _in_memory(key: bytes) -> int:
    fd = os.memfd_create("service-account", os.MFD_CLOEXEC)
    view = memoryview(key)
    while view:
        view = view[os.write(fd, view):]
    return fd


def main() -> Any:
    claimed = claim_or_exit(sys.argv[1:], KEY_FLAG)
    memfd = None
    if claimed is not None:
        index, key = claimed
        memfd = _in_memory(key)
        sys.argv[1:] = with_value(sys.argv[1:], index, KEY_FLAG, f"/proc/self/fd/{memfd}")
    server: Any = importlib.import_module("src.server")  # google-cloud-mcp 1.0.0's module, as its console script runs it
    setup = server.setup_server

    def setup_server(*args: Any, **kwargs: Any) -> None:
        try:
            setup(*args, **kwargs)
        finally:
            if memfd is not None:
                os.close(memfd)
        for name in ALLOWED_GLOBALS:
            setattr(server, name, AllowedNames(getattr(server, name)))

    server.setup_server = setup_server  # main() looks it up in its module
    return server.main()


if __name__ == "__main__":
    sys.exit(main())
