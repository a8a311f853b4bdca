"""Infra errors: the verb could not do its job. Kept apart from a tool's own failure (a result)."""
from __future__ import annotations

import json
import sys
from typing import NoReturn


class InfraError(Exception):
    """An error of the environment, not of the agent: reported as {"error": {"kind", "message"}}."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message

    def to_json(self) -> dict:
        return {"error": {"kind": self.kind, "message": self.message}}


def emit(obj: dict) -> None:
    """Print exactly one JSON object: the whole output of a verb."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def fail(err: InfraError, code: int = 1) -> NoReturn:
    emit(err.to_json())
    raise SystemExit(code)


def tail(text: str, limit: int = 2000) -> str:
    """The end of a long output: where the cause of a failure usually is."""
    return text if len(text) <= limit else "…" + text[-limit:]
