"""The one-shot key broker: how `--saas real` gets the user's private keys into the agent-side servers that need them
(our snowflake and google-cloud stand-ins) without a file or a variable the agent's uid can read.

Setup runs it (as root where users are separated) for the few seconds the daemon takes to start the servers: no
process of the agent exists then, so nothing can race the servers for it. Each key is offered under a random token
that goes into its server's command line instead of the key file's path; the server (decathlon/standins/keyclaim.py)
makes itself non-dumpable, connects, and gets the bytes. A key is handed out once, and only to a peer that
- runs as the agent's uid (SO_PEERCRED), and
- is non-dumpable (its /proc/<pid>/mem, environ, fd… then belong to root): the agent's later processes, of that
  same uid, can neither ptrace it nor read its memory, environment or descriptors.
Setup closes the broker (the socket and its folder go) once the daemon is ready, or fails.

Why not a file of the server's own, or a variable: anything of the agent's uid on disk, or in a dumpable process,
is the agent's to read once it runs.
"""
from __future__ import annotations

import os
import secrets
import socket
import struct
import tempfile
import threading
from pathlib import Path

from decathlon.standins.keyclaim import MAX_REQUEST, TOKEN_PREFIX, KeyReply, KeyRequest

READ_TIMEOUT = 2.0  # per connection: a peer that sends nothing holds the broker no longer than this
_MAX_SOCKET_PATH = 100  # sun_path is 108 bytes on Linux


def _peer(conn: socket.socket) -> tuple[int, int]:
    """pid and uid of the connected process, as the kernel saw them at connect()."""
    pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid, uid


def _dumpable(pid: int) -> bool:
    """The kernel gives a non-dumpable process's /proc/<pid>/mem (and environ, fd…) to root, whoever it runs as
    (not /proc/<pid> itself, which keeps the owner's uid for `ps`)."""
    try:
        return os.stat(f"/proc/{pid}/mem").st_uid != 0
    except OSError:
        return True  # gone already: nothing to hand to


class KeyBroker:
    """Serves the keys offered to it on a Unix socket in a folder of its own (0711: reachable, not listable)."""

    def __init__(self, peer_uid: int, base: Path | None = None) -> None:
        self.peer_uid = peer_uid
        self._keys: dict[str, bytes] = {}
        self._handed: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.folder = Path(tempfile.mkdtemp(prefix="keys-", dir=self._base(base)))
        os.chmod(self.folder, 0o711)
        self.path = self.folder / "broker.sock"
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(self.path))
        # Only the agent's uid (and root) may connect: another episode's agent, on the same host, may not.
        if os.geteuid() == 0:
            os.chown(self.path, peer_uid, -1)
        os.chmod(self.path, 0o600)
        self._sock.listen(16)
        self._sock.settimeout(0.1)
        self._thread = threading.Thread(target=self._serve, name="decathlon-key-broker", daemon=True)
        self._thread.start()

    @staticmethod
    def _base(base: Path | None) -> str:
        """The episode's own folder when the socket's path fits there, else the system's temporary folder."""
        if base is not None and len(str(base)) + len("/keys-xxxxxxxx/broker.sock") <= _MAX_SOCKET_PATH:
            return str(base)
        return tempfile.gettempdir()

    def offer(self, secret: bytes) -> str:
        """The value a server's command line carries instead of the key file's path."""
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._keys[token] = secret
        return TOKEN_PREFIX + token

    def unclaimed(self) -> int:
        with self._lock:
            return len(self._keys)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return  # closed
            with conn:
                try:
                    conn.settimeout(READ_TIMEOUT)
                    conn.sendall(self._answer(conn).encode())
                except (OSError, ValueError, struct.error):
                    continue  # the peer went away, or sent nonsense: its server fails and says so

    def _read(self, conn: socket.socket) -> bytes:
        data = b""
        while not data.endswith(b"\n") and len(data) <= MAX_REQUEST:
            chunk = conn.recv(MAX_REQUEST)
            if not chunk:
                break
            data += chunk
        return data

    def _answer(self, conn: socket.socket) -> KeyReply:
        # The request is read whatever the answer: a peer still sending when its refusal came would see a broken
        # pipe instead of why.
        raw = self._read(conn)
        pid, uid = _peer(conn)
        if uid != self.peer_uid:
            return self._refuse(f"pid {pid} runs as uid {uid}, not the agent's ({self.peer_uid})")
        # Root's /proc files are root's either way: the check means something only for another uid.
        if self.peer_uid != 0 and _dumpable(pid):
            return self._refuse(f"pid {pid} is dumpable (its memory would be the agent's to read)")
        try:
            token = KeyRequest.decode(raw).token
        except (ValueError, UnicodeDecodeError) as exc:
            return self._refuse(f"malformed request from pid {pid}: {exc}")
        with self._lock:
            secret = self._keys.pop(token, None)
            if secret is not None:
                self._handed.add(token)
        if secret is None:
            why = "was handed out already" if token in self._handed else "is not one of this episode's"
            return self._refuse(f"pid {pid} asked for a key that {why}")
        return KeyReply(secret=secret)

    @staticmethod
    def _refuse(why: str) -> KeyReply:
        # Said to the peer: a server of ours prints it on stderr, which setup's server_start error quotes.
        return KeyReply(error=why)

    def close(self) -> None:
        """No more keys: the socket and its folder go, and what was not claimed is forgotten."""
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()
        with self._lock:
            self._keys.clear()
        self.path.unlink(missing_ok=True)
        try:
            self.folder.rmdir()
        except OSError:
            pass

    def __enter__(self) -> "KeyBroker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
