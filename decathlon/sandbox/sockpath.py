"""Where the episode daemon listens. Standard library `os` only: on every tool call's path."""
from __future__ import annotations

import os

# A Unix socket path must fit in sun_path (108 bytes on Linux).
_MAX_SOCKET_PATH = 100


def home_root(explicit: str | None = None) -> str:
    raw = explicit or os.environ.get("TASK_API_HOME") or os.path.expanduser("~/.task-api")
    return os.path.abspath(raw)


def socket_path(root: str) -> str:
    # Set by a backend that reaches the daemon from outside the sandbox (compose: a folder it mounts).
    explicit = os.environ.get("TASK_API_SOCKET")
    if explicit:
        return explicit
    path = os.path.join(root, "run", "daemon.sock")
    if len(path) <= _MAX_SOCKET_PATH:
        return path
    import hashlib
    return os.path.join("/tmp", f"task-api-{hashlib.sha256(root.encode()).hexdigest()[:16]}.sock")
