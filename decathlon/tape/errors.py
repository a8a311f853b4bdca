"""Cassette problems, each with a kind the task API reports as an infra error."""
from __future__ import annotations


class CassetteError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
