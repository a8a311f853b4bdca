"""Backends by name."""
from __future__ import annotations

from decathlon.backends.base import Backend


def make_backend(name: str) -> Backend:
    if name == "local":
        from decathlon.backends.local import LocalBackend
        return LocalBackend()
    raise ValueError(f"unknown backend {name!r}")
