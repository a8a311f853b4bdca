"""`task-api teardown` and `task-api status`: light, like execute."""
from __future__ import annotations

import json
import os
import signal
import time

from task_api.client import request
from task_api.errors import InfraError
from task_api.home import Home

STOP_WAIT = 15.0


def _pid(home: Home) -> int | None:
    try:
        return int(home.pidfile.read_text())
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def teardown(home: Home) -> dict:
    pid = _pid(home)
    if pid is None or not _alive(pid):
        home.socket.unlink(missing_ok=True)
        return {"torn_down": False, "note": "no episode daemon was running"}
    try:
        request(home.socket, {"op": "shutdown"}, timeout=STOP_WAIT)
    except InfraError:
        pass  # it is killed below either way
    deadline = time.monotonic() + STOP_WAIT
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    killed = False
    if _alive(pid):
        # The daemon leads its own process group, which holds every MCP server it started.
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        killed = True
    home.socket.unlink(missing_ok=True)
    home.pidfile.unlink(missing_ok=True)
    return {"torn_down": True, "killed": killed}


def status(home: Home) -> dict:
    try:
        session = json.loads(home.session.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"set_up": False}
    out = {"set_up": True, "task": session.get("task"), "launch_time": session.get("launch_time"),
           "workspace": session.get("workspace")}
    try:
        out["daemon"] = request(home.socket, {"op": "status"}, timeout=10)
    except InfraError as exc:
        out["daemon"] = {"alive": False, "reason": exc.message}
    return out
