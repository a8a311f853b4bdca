"""Rich consoles that stay readable in logs: a non-terminal gets wide lines instead of 80-column wrapping."""
from __future__ import annotations

import sys

from rich.console import Console

LOG_WIDTH = 200


def console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else LOG_WIDTH)
