"""The local backend under the conformance suite."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from decathlon.backends.local import LocalBackend

NAME = "local"
MARKS: list = []


def unavailable() -> str | None:
    return None


@contextmanager
def backend(tmp: Path) -> Iterator[LocalBackend]:
    yield LocalBackend()
