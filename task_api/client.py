"""The light side of the task API: talks to the episode daemon over its Unix socket.

Every tool call runs this, so it imports only the standard library's basics.
"""
from __future__ import annotations

import json
import socket
from pathlib import Path

from task_api.errors import InfraError

# Generous: the daemon enforces each tool's own timeout and always answers before this.
DEFAULT_TIMEOUT = 1800.0


def request(sock_path: Path, payload: dict, timeout: float = DEFAULT_TIMEOUT) -> dict:
    if not sock_path.exists():
        raise InfraError("no_session", "no episode daemon is running here: call `task-api setup` first "
                         "(or the episode was torn down)")
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    try:
        try:
            conn.connect(str(sock_path))
        except (ConnectionRefusedError, FileNotFoundError) as exc:
            raise InfraError("no_session", f"the episode daemon is not answering ({exc}); "
                             "it was torn down or died: see run/daemon.log") from exc
        conn.sendall(json.dumps(payload).encode() + b"\n")
        conn.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    except socket.timeout as exc:
        raise InfraError("daemon_timeout", f"no answer from the episode daemon within {timeout:.0f} s") from exc
    finally:
        conn.close()
    raw = b"".join(chunks)
    if not raw:
        raise InfraError("daemon_died", "the episode daemon closed the connection without answering")
    return json.loads(raw)
