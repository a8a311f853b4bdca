"""What a task-api verb prints: exactly one JSON object, its result or its error (decathlon.errors)."""
from __future__ import annotations

import json
import sys
from typing import NoReturn

from decathlon.errors import InfraError


def emit(obj: dict) -> None:
    """Print exactly one JSON object: the whole output of a verb."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def fail(err: InfraError, code: int = 1) -> NoReturn:
    emit(err.reply())
    raise SystemExit(code)


def tail(text: str, limit: int = 2000) -> str:
    """The end of a long output: where the cause of a failure usually is."""
    return text if len(text) <= limit else "…" + text[-limit:]
