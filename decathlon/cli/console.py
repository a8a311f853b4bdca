"""Rich consoles that stay readable in logs: a non-terminal gets wide lines instead of 80-column wrapping, unless
COLUMNS says how wide (a CI log viewer, `COLUMNS=100 decathlon run … | less`)."""
from __future__ import annotations

import os
import sys

from rich.console import Console

LOG_WIDTH = 200
NARROW = 120  # below this many columns, tables take their compact layout


def width(stream_is_tty: bool) -> int | None:
    """COLUMNS when it is a number (honoured piped or not), else the terminal's own (None), else LOG_WIDTH."""
    raw = os.environ.get("COLUMNS", "")
    if raw.isdigit() and int(raw) >= 20:
        return int(raw)
    return None if stream_is_tty else LOG_WIDTH


def console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=width(stream.isatty()))
