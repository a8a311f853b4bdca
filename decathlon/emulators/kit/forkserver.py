"""A pre-loaded parent for an episode's emulators: forks one per start instead of starting an interpreter.

Most of an emulator's start is importing (aiohttp and the runtime ~0.35 s with bytecode, a vendor's own modules
more); the emulator itself listens in milliseconds. The front starts this once, beside itself, so an emulator
first needed mid-episode (the first Sheets call) is forked ready-imported: `ready` in tens of milliseconds.

    python -m decathlon.emulators.kit.forkserver --socket PATH [--preload gcp,workspace] [--parent PID]

It imports the runtime and the preloaded emulators, listens on PATH (0600, in the services' control folder: the
agent never reaches it; a peer of another uid is refused) and prints `ready forkserver`. A request is one JSON
line `{"name": N, "argv": [...], "env": {...}}` sent with two file descriptors (SCM_RIGHTS: the child's stdout
and stderr). It forks a child that runs `decathlon.emulators.<N>`'s EMULATOR on the runtime with that command line
and environment, exactly as `python -m decathlon.emulators.<N> ARGV` would, and answers `{"pid": P}` (or
`{"error": why}`) on the same connection, which then stands for the child: a line `{"signal": S}` from the
requester signals it, the child's end is answered `{"exit": CODE}` (Popen's returncode: -S when a signal ended
it), and a requester that hangs up takes its child with it (SIGKILL). The forkserver is single-threaded and never
runs an event loop, so a fork is safe; it exits when PARENT is gone or on SIGTERM, killing what it forked."""
from __future__ import annotations

import argparse
import importlib
import json
import os
import select
import signal
import socket
import struct
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from decathlon.emulators.kit import runtime
from decathlon.emulators.kit.unix_path import bindable

if TYPE_CHECKING:
    from decathlon.emulators.kit.runtime import Emulator

PARENT_POLL = 1.0
REQUEST_LIMIT = 256 * 1024  # an environment and a command line, never more
REQUEST_TIMEOUT = 10.0


class BadRequest(ValueError):
    pass


def load(name: str) -> Emulator:
    """`decathlon.emulators.<name>.__main__`'s EMULATOR (imported as a module: its `__main__` guard stays shut)."""
    if not name.isidentifier():
        raise BadRequest(f"not an emulator name: {name!r}")
    try:
        module = importlib.import_module(f"decathlon.emulators.{name}.__main__")
    except ImportError as exc:
        raise BadRequest(f"no emulator {name!r}: {exc}") from None
    emulator = getattr(module, "EMULATOR", None)
    if not isinstance(emulator, runtime.Emulator):
        raise BadRequest(f"decathlon.emulators.{name} declares no EMULATOR")
    return emulator


def _peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def _read_request(conn: socket.socket) -> tuple[dict, list[int]]:
    conn.settimeout(REQUEST_TIMEOUT)
    data, fds, _, _ = socket.recv_fds(conn, 65536, 2)
    try:
        while not data.endswith(b"\n"):
            if len(data) > REQUEST_LIMIT:
                raise BadRequest(f"a request over {REQUEST_LIMIT} bytes")
            more = conn.recv(65536)
            if not more:
                raise BadRequest("the request ended without its newline")
            data += more
        request = json.loads(data)
        if len(fds) != 2:
            raise BadRequest(f"a request comes with 2 file descriptors (stdout, stderr), not {len(fds)}")
        if not (isinstance(request, dict) and isinstance(request.get("name"), str)
                and isinstance(request.get("argv"), list) and all(isinstance(a, str) for a in request["argv"])
                and isinstance(request.get("env"), dict)
                and all(isinstance(k, str) and isinstance(v, str) for k, v in request["env"].items())):
            raise BadRequest("a request is {\"name\": str, \"argv\": [str], \"env\": {str: str}}")
        return request, fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def _name_process(name: str) -> None:
    """A forked emulator keeps the forkserver's command line; its name (what `ps`, `top` and /proc/PID/comm show) says
    which emulator it is."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):  # not Linux: the name is only a convenience
        pass


def _child(emulator: Emulator, argv: list[str], env: dict[str, str], out: int, err: int) -> None:
    """Never returns: a forked child must not fall back into the forkserver's loop."""
    code = runtime.FAILED
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        for fd in (null, out, err):
            os.close(fd)
        os.environ.clear()
        os.environ.update(env)
        sys.argv = [f"decathlon.emulators.{emulator.name}", *argv]
        _name_process(emulator.name)
        code = runtime.main(emulator, argv)
    except SystemExit as exc:  # argparse's usage error: exit 2, as the spawned command would
        code = exc.code if isinstance(exc.code, int) else runtime.FAILED
    except BaseException:  # noqa: BLE001 - said in its log, as an uncaught exception would be
        try:
            import traceback
            traceback.print_exc()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _send(conn: socket.socket, message: dict) -> None:
    try:
        conn.sendall(json.dumps(message).encode() + b"\n")
    except OSError:  # the requester is gone: its child is killed when its connection is read
        pass


class Server:
    def __init__(self, path: str, parent: int) -> None:
        self.path, self.parent = path, parent
        self.children: dict[int, socket.socket] = {}  # pid -> its requester's connection
        self.buffers: dict[int, bytes] = {}
        self.wake: tuple[int, int] = (-1, -1)

    def serve(self) -> None:
        self.wake = wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        os.set_blocking(wake_r, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # the wakeup fd is what matters
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if os.path.exists(self.path):
            os.unlink(self.path)
        name, folder = bindable(Path(self.path))
        old = os.umask(0o177)
        try:
            srv.bind(name)
        finally:
            os.umask(old)
            if folder is not None:
                os.close(folder)
        srv.listen(64)
        print("ready forkserver", flush=True)
        try:
            while not self.parent or os.getppid() == self.parent:
                conns = {c.fileno(): (pid, c) for pid, c in self.children.items()}
                readable, _, _ = select.select([srv.fileno(), wake_r, *conns], [], [], PARENT_POLL)
                if wake_r in readable:
                    while True:
                        try:
                            if not os.read(wake_r, 512):
                                break
                        except BlockingIOError:
                            break
                self._reap()
                for fd in readable:
                    if fd in conns and conns[fd][0] in self.children:
                        self._command(*conns[fd])
                if srv.fileno() in readable:
                    self._accept(srv)
        finally:
            srv.close()
            if os.path.exists(self.path):
                os.unlink(self.path)
            self._kill_all()

    def _accept(self, srv: socket.socket) -> None:
        conn, _ = srv.accept()
        try:
            if _peer_uid(conn) not in (0, os.geteuid()):
                raise BadRequest("a request from another user")
            request, (out, err) = _read_request(conn)
            try:
                emulator = load(request["name"])
                pid = os.fork()
                if pid == 0:
                    # Nothing of the forkserver's stays open in an emulator: not the other emulators' connections
                    # (their requesters would never see them close), not its socket, not its wakeup pipe.
                    signal.set_wakeup_fd(-1)
                    for other in (conn, srv, *self.children.values()):
                        other.close()
                    for fd in self.wake:
                        os.close(fd)
                    _child(emulator, list(request["argv"]), dict(request["env"]), out, err)
            finally:
                os.close(out)
                os.close(err)
        except (OSError, ValueError) as exc:
            _send(conn, {"error": str(exc) or type(exc).__name__})
            conn.close()
            return
        conn.setblocking(False)
        self.children[pid] = conn
        _send(conn, {"pid": pid})

    def _command(self, pid: int, conn: socket.socket) -> None:
        """A line from a child's requester: a signal to send it; end of file: the requester is gone."""
        try:
            data = conn.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._signal(pid, signal.SIGKILL)
            return
        buffer = self.buffers.get(pid, b"") + data
        *lines, rest = buffer.split(b"\n")
        self.buffers[pid] = rest[-4096:]
        for line in lines:
            try:
                sig = int(json.loads(line)["signal"])
            except (ValueError, KeyError, TypeError):
                continue
            self._signal(pid, sig)

    def _signal(self, pid: int, sig: int) -> None:
        if pid in self.children:  # not yet reaped: the pid is still the child's
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, ValueError, OverflowError):
                pass

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            self.buffers.pop(pid, None)
            if conn is not None:
                conn.setblocking(True)
                conn.settimeout(REQUEST_TIMEOUT)
                _send(conn, {"exit": os.waitstatus_to_exitcode(status)})
                conn.close()

    def _kill_all(self, grace: float = 2.0) -> None:
        for pid in list(self.children):
            self._signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self.children and time.monotonic() < deadline:
            self._reap()
            time.sleep(0.02)
        for pid in list(self.children):
            self._signal(pid, signal.SIGKILL)
        while self.children:
            try:
                pid, _ = os.waitpid(-1, 0)  # each was sent SIGKILL: this cannot wait long
            except ChildProcessError:
                break
            conn = self.children.pop(pid, None)
            if conn is not None:
                conn.close()
        for conn in self.children.values():
            conn.close()
        self.children.clear()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m decathlon.emulators.kit.forkserver", description=__doc__.splitlines()[0])
    p.add_argument("--socket", required=True, help="the Unix socket to listen on (made 0600)")
    p.add_argument("--preload", type=lambda s: [n for n in s.split(",") if n], default=[],
                   help="emulators to import now, before the ready line")
    # Given by the starter, not read here: the starter may have died while this process was importing.
    p.add_argument("--parent", type=int, default=0, help="exit when this process is gone")
    args = p.parse_args(argv)
    import aiohttp.web  # noqa: F401 - every emulator's server, and its largest import
    for name in args.preload:
        try:
            load(name)
        except BadRequest as exc:
            p.error(str(exc))
    Server(args.socket, args.parent).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
