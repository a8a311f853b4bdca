"""The `decathlon` command: one module per verb; `main` parses and dispatches (decathlon.cli.main)."""
from __future__ import annotations

from decathlon.cli.main import main

__all__ = ["main"]
