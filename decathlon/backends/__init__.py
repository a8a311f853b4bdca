"""Backends by name: local (a temp dir per episode), compose (a Docker container per episode), prime
(Prime Intellect sandboxes)."""
from __future__ import annotations

from decathlon.backends.base import Backend

NAMES = ("local", "compose", "prime")


def make_backend(name: str) -> Backend:
    if name == "local":
        from decathlon.backends.local import LocalBackend
        return LocalBackend()
    if name == "compose":
        from decathlon.backends.compose import shared_backend
        return shared_backend()
    if name == "prime":
        from decathlon.backends.prime import PrimeBackend
        return PrimeBackend.from_env()
    raise ValueError(f"unknown backend {name!r}: one of {', '.join(NAMES)}")
