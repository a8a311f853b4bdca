"""Host-side infra errors: classified, and kept out of the reward."""
from __future__ import annotations


class InfraError(Exception):
    def __init__(self, kind: str, message: str, phase: str | None = None) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.phase = phase

    def to_json(self) -> dict:
        out = {"kind": self.kind, "message": self.message}
        if self.phase:
            out["phase"] = self.phase
        return out
