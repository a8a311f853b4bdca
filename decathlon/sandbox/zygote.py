"""A pre-loaded parent for episode daemons: forks one per setup instead of starting an interpreter.

Most of a daemon's start-up is importing the MCP SDK (~0.7 s). Where many episodes run on one host
(the local backend, the regression suite), a zygote imports it once and forks a daemon per setup
in milliseconds (module-level settings read from the environment at import come from the
zygote's, which the local backend starts with its own). The wire: setup connects, sends
`{"home": H, "env": {...}}\\n`, reads `{"pid": N}\\n`, then writes the daemon's spec on the same connection
and closes it, exactly as it would on a daemon's stdin.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import struct
import sys
from pathlib import Path

from decathlon.sandbox import daemon  # noqa: F401 - the point: import once, before any fork
from decathlon.sandbox.home import Home
from decathlon.sandbox import reaper

PARENT_POLL = 1.0


def _child(conn: socket.socket, home: Home, env: dict[str, str]) -> None:
    """Never returns: a forked child must not fall back into the zygote's accept loop."""
    code = 1
    try:
        os.setsid()  # its own process group, like a spawned daemon: teardown kills the group
        # The environment of the setup that asked, as a spawned daemon would have inherited it.
        os.environ.clear()
        os.environ.update(env)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.chdir(home.root)  # gone already (the episode was released meanwhile): nothing to serve
        log = os.open(home.daemon_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(null)
        daemon.run(home, conn.makefile("rb"))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - reported in the daemon's log (or lost with its home)
        try:
            import traceback
            traceback.print_exc()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        os._exit(code)


def _peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def _reap_orphans(daemons: set[int]) -> None:
    """A child that is not one of our daemons is an orphan of a daemon that died (killed, maybe by the
    agent it served): it must not outlive its episode."""
    kids = reaper.children(os.getpid())
    daemons.intersection_update(kids)
    reaper.kill([k for k in kids if k not in daemons])


def serve(path: str, parent: int) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the daemons
    reaper.become_subreaper()
    # Stopped by its starter (SIGTERM at exit): its episodes' processes go with it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    daemons: set[int] = set()
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.exists(path):
        os.unlink(path)
    # Its starter's and root's alone: a request names the daemon's user, home and environment.
    old = os.umask(0o177)
    try:
        srv.bind(path)
    finally:
        os.umask(old)
    srv.listen(64)
    srv.settimeout(PARENT_POLL)
    print(f"zygote ready on {path}", flush=True)
    try:
        while not parent or os.getppid() == parent:  # ends with the process that started it
            try:
                conn, _ = srv.accept()
            except socket.timeout:
                _reap_orphans(daemons)
                continue
            try:
                conn.settimeout(30)
                peer = _peer_uid(conn)
                if peer not in (0, os.geteuid()):  # an agent (its own uid) asking for a daemon of its choosing
                    raise ValueError(f"a request from uid {peer}, neither root nor this zygote's user")
                request = json.loads(conn.makefile("rb").readline())
                home = Home(Path(request["home"]))
                if not home.run.is_dir():  # never re-create the home of an episode already released
                    raise ValueError(f"no episode home at {home.root}")
                pid = os.fork()
                if pid == 0:
                    srv.close()
                    conn.settimeout(None)
                    _child(conn, home, dict(request["env"]))
                daemons.add(pid)
                conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            except (OSError, ValueError, KeyError) as exc:
                print(f"zygote: bad request: {exc!r}", file=sys.stderr, flush=True)
            finally:
                conn.close()
    finally:
        srv.close()
        if os.path.exists(path):
            os.unlink(path)
        reaper.kill_descendants()  # the run that started us is gone: so are its episodes


def main() -> None:
    p = argparse.ArgumentParser(prog="task-api-zygote")
    p.add_argument("--socket", required=True)
    # Given by the starter, not read here: the starter may have died while this process was importing.
    p.add_argument("--parent", type=int, default=0, help="exit when this process is gone (default: run until "
                   "stopped, as in a container)")
    a = p.parse_args()
    serve(a.socket, a.parent)


if __name__ == "__main__":
    main()
