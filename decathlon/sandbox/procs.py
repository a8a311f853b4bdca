"""Whether a process still runs: the one question every part of the sandbox asks of a pid it keeps."""
from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Running, and not merely a zombie waiting for an init that reaps slowly (the daemon is detached)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True
