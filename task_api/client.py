"""The light side of the task API: talks to the episode daemon over its Unix socket.

Every tool call runs this, so it imports only `json`, `os` and `socket`, and reports failures as
plain (kind, message) pairs that the caller turns into the verb's error.
"""
from __future__ import annotations

import json
import os
import socket

# Generous: the daemon enforces each tool's own timeout and always answers before this.
DEFAULT_TIMEOUT = 1800.0


class DaemonError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind, self.message = kind, message


def request(sock_path: str, payload: dict, timeout: float = DEFAULT_TIMEOUT) -> dict:
    if not os.path.exists(sock_path):
        raise DaemonError("no_session", "no episode daemon is running here: call `task-api setup` first "
                          "(or the episode was torn down)")
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    try:
        try:
            conn.connect(sock_path)
        except (ConnectionRefusedError, FileNotFoundError) as exc:
            raise DaemonError("no_session", f"the episode daemon is not answering ({exc}); "
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
        raise DaemonError("daemon_timeout", f"no answer from the episode daemon within {timeout:.0f} s") from exc
    finally:
        conn.close()
    raw = b"".join(chunks)
    if not raw:
        raise DaemonError("daemon_died", "the episode daemon closed the connection without answering")
    return json.loads(raw)


def execute_main(argv: list[str], root: str | None = None) -> int:
    """`task-api execute TOOL [ARGS_JSON]` without argparse: the hot path."""
    if not 1 <= len(argv) <= 2:
        print(json.dumps({"error": {"kind": "usage", "message": "usage: task-api execute TOOL [ARGS_JSON]"}}))
        return 2
    from task_api.sockpath import home_root, socket_path
    try:
        reply = request(socket_path(root or home_root()), {"op": "execute", "tool": argv[0],
                                                   "args": argv[1] if len(argv) > 1 else "{}"})
    except DaemonError as exc:
        reply = {"error": {"kind": exc.kind, "message": exc.message}}
    print(json.dumps(reply, ensure_ascii=False), flush=True)
    return 1 if "error" in reply else 0
