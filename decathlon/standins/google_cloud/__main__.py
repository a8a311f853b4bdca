"""`python -m decathlon.standins.google_cloud --project-id P …`: google-cloud-mcp's own command line and server
(module `src.server` of the PyPI package), run on its virtualenv, its allowed names read as upstream's commit reads
them (decathlon/standins/google_cloud/__init__.py)."""
from __future__ import annotations

import importlib
import sys
from typing import Any

from decathlon.standins.google_cloud import ALLOWED_GLOBALS, AllowedNames


def main() -> Any:
    server: Any = importlib.import_module("src.server")  # google-cloud-mcp 1.0.0's module, as its console script runs it
    setup = server.setup_server

    def setup_server(*args: Any, **kwargs: Any) -> None:
        setup(*args, **kwargs)
        for name in ALLOWED_GLOBALS:
            setattr(server, name, AllowedNames(getattr(server, name)))

    server.setup_server = setup_server  # main() looks it up in its module
    return server.main()


if __name__ == "__main__":
    sys.exit(main())
