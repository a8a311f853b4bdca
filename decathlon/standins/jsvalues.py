"""What the stand-ins share of their Node.js references: an error that carries the text the model is shown,
and how zod names a JSON value's type in a validation issue."""
from __future__ import annotations

from typing import Any


class MessageError(Exception):
    """A failure whose `message` is exactly what the reference server would say."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def zod_type(value: Any, nan: str = "number") -> str:
    """zod's name for a parsed JSON value's type ("received" in an issue); NaN is `nan` (zod 3 says "nan"
    where a schema checks numbers, "number" elsewhere)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return nan if value != value else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
