"""A Unix socket's name that fits sun_path: an episode's folder can be deeper than its 107 bytes allow."""
from __future__ import annotations

import os
from pathlib import Path

SUN_PATH = 107  # bytes a Unix socket's path may have (sun_path, less its NUL)


def bindable(path: Path) -> tuple[str, int | None]:
    """A name `path` can be bound or reached by: itself, or through its folder's descriptor when it is longer than
    sun_path allows. The descriptor (second) is the caller's to close once bound or connected."""
    if len(os.fsencode(str(path))) <= SUN_PATH:
        return str(path), None
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    return f"/proc/self/fd/{fd}/{path.name}", fd
