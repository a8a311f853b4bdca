"""The light side of the task API: talks to the episode daemon over its Unix socket.

Every tool call runs this, so it imports only `json`, `os`, `socket`, `sys` and decathlon.errors, and
reports failures as DaemonError, an InfraError with its kind.
"""
from __future__ import annotations

import json
import os
import socket
import sys

from decathlon.errors import InfraError, Kind

# Generous: the daemon enforces each tool's own timeout and always answers before this.
DEFAULT_TIMEOUT = 1800.0
# What the host accepts of a tool call's reply is far less (decathlon.contract.replies); this only keeps a
# runaway answer from filling the sandbox's memory before the host refuses it.
MAX_REPLY = 64 << 20
MAX_STDIN = 64 << 20  # the daemon's own cap on a request
USAGE = "usage: task-api execute TOOL [ARGS_JSON]  |  task-api execute -  (stdin: {\"tool\": ..., \"args\": ...})"


class DaemonError(InfraError):
    """The daemon could not be asked (gone, silent, too talkative): reported with its kind like any infra error."""


def request(sock_path: str, payload: dict, timeout: float = DEFAULT_TIMEOUT) -> dict:
    if not os.path.exists(sock_path):
        raise DaemonError(Kind.NO_SESSION, "no episode daemon is running here: call `task-api setup` first "
                          "(or the episode was torn down)")
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    try:
        try:
            conn.connect(sock_path)
        except (ConnectionRefusedError, FileNotFoundError) as exc:
            raise DaemonError(Kind.NO_SESSION, f"the episode daemon is not answering ({exc}); "
                              "it was torn down or died: see run/daemon.log") from exc
        conn.sendall(json.dumps(payload).encode() + b"\n")
        conn.shutdown(socket.SHUT_WR)
        chunks, size = [], 0
        while True:
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_REPLY:
                raise DaemonError(Kind.REPLY_TOO_LARGE, f"the episode daemon sent more than {MAX_REPLY} bytes")
            chunks.append(chunk)
    except socket.timeout as exc:
        raise DaemonError(Kind.DAEMON_TIMEOUT, f"no answer from the episode daemon within {timeout:.0f} s") from exc
    finally:
        conn.close()
    raw = b"".join(chunks)
    if not raw:
        raise DaemonError(Kind.DAEMON_DIED, "the episode daemon closed the connection without answering")
    try:
        reply = json.loads(raw)
    except (ValueError, RecursionError):
        reply = None
    if not isinstance(reply, dict):
        raise DaemonError(Kind.BAD_REPLY, f"the episode daemon sent something that is not a JSON object: {raw[:200]!r}")
    return reply


def read_request(stream) -> tuple[str, object]:
    """The tool call of `task-api execute -`: a JSON object {"tool": str, "args": str | object | null} on
    stdin, where argv could not carry it (a NUL, hundreds of KB)."""
    raw = stream.read(MAX_STDIN + 1)
    if len(raw) > MAX_STDIN:
        raise DaemonError(Kind.BAD_REQUEST, f"the request on stdin is larger than {MAX_STDIN} bytes")
    try:
        req = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise DaemonError(Kind.BAD_REQUEST, f"stdin is not a JSON object ({exc}); {USAGE}") from None
    if not isinstance(req, dict) or not isinstance(req.get("tool"), str):
        raise DaemonError(Kind.BAD_REQUEST, f"stdin must be a JSON object with a string \"tool\"; {USAGE}")
    return req["tool"], req.get("args")


def execute_main(argv: list[str], root: str | None = None, stdin=None) -> int:
    """`task-api execute TOOL [ARGS_JSON]` or `task-api execute -` without argparse: the hot path."""
    if not 1 <= len(argv) <= 2:
        print(json.dumps({"error": {"kind": "usage", "message": USAGE}}))
        return 2
    from decathlon.sandbox.sockpath import home_root, socket_path
    try:
        if argv == ["-"]:
            tool, args = read_request(stdin or sys.stdin.buffer)
        else:
            tool, args = argv[0], argv[1] if len(argv) > 1 else "{}"
        reply = request(socket_path(root or home_root()), {"op": "execute", "tool": tool, "args": args})
    except DaemonError as exc:
        reply = {"error": {"kind": exc.kind, "message": exc.message}}
    try:
        line = json.dumps(reply, ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate in the content: escaped, still one JSON line
        line = json.dumps(reply).encode()
    sys.stdout.buffer.write(line + b"\n")
    sys.stdout.flush()
    return 1 if "error" in reply else 0
