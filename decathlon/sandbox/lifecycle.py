"""`task-api teardown` and `task-api status`: light, like execute."""
from __future__ import annotations

import json
import os
import signal
import time

from decathlon.sandbox.client import DaemonError, request
from decathlon.sandbox import services
from decathlon.sandbox.home import Home
from decathlon.sandbox.procs import alive

STOP_WAIT = 15.0


def stop_leftovers(home: Home) -> None:
    """What the preprocess left running in its process group (Home.preprocess_pgid)."""
    try:
        pgid = int(home.preprocess_pgid.read_text())
        os.killpg(pgid, signal.SIGKILL)
    except (OSError, ValueError):
        pass


def teardown(home: Home) -> dict:
    services.stop(home)
    stop_leftovers(home)
    pid = home.daemon_pid()
    if pid is None or not alive(pid):
        home.socket.unlink(missing_ok=True)
        return {"torn_down": False, "note": "no episode daemon was running"}
    try:
        request(str(home.socket), {"op": "shutdown"}, timeout=STOP_WAIT)
    except DaemonError:
        pass  # it is killed below either way
    deadline = time.monotonic() + STOP_WAIT
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    killed = False
    if alive(pid):
        # The daemon leads its own process group, which holds every MCP server it started.
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        killed = True
    home.socket.unlink(missing_ok=True)
    home.daemon_record.unlink(missing_ok=True)
    return {"torn_down": True, "killed": killed}


def status(home: Home) -> dict:
    try:
        session = json.loads(home.session.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"set_up": False}
    out = {"set_up": True, "task": session.get("task"), "launch_time": session.get("launch_time"),
           "workspace": session.get("workspace")}
    try:
        out["daemon"] = request(str(home.socket), {"op": "status"}, timeout=10)
    except DaemonError as exc:
        out["daemon"] = {"alive": False, "reason": exc.message}
    return out
