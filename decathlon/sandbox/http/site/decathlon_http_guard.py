"""Replay's refusals: the connection error a miss raises, and the socket-level guard.

Loaded only inside a replaying (or recording) process, from decathlon_http_shim.
"""
from __future__ import annotations

import errno
import ipaddress
import socket
import sys
from typing import Any, Protocol


class MissLog(Protocol):
    def log_miss(self, method: str, url: str, body: bytes | None, reason: str) -> None: ...


_MISS_TYPES: dict[tuple[type, ...], type] = {}


def miss_error(message: str) -> BaseException:
    """One exception that is the connection error of every client library loaded in this process.

    vcrpy's stubs sit at different layers (httpx transport, http.client connection, aiohttp
    session), so whichever one asks, the client sees the error it handles for a refused connection:
    httpx/httpx2 ConnectError, aiohttp ClientConnectionError, and an OSError that urllib3, requests
    and urllib turn into their own connection errors.
    """
    bases: list[type] = []
    for module, name in (("httpx", "ConnectError"), ("httpx2", "ConnectError"), ("aiohttp", "ClientConnectionError")):
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type) and issubclass(cls, Exception):
            bases.append(cls)
    bases.append(ConnectionRefusedError)
    key = tuple(bases)
    if key not in _MISS_TYPES:
        try:
            _MISS_TYPES[key] = type("DecathlonReplayMiss", key, {"__module__": __name__})
        except TypeError:  # an incompatible layout in some library version: the OSError still works
            _MISS_TYPES[key] = type("DecathlonReplayMiss", (ConnectionRefusedError,), {"__module__": __name__})
    return _MISS_TYPES[key](f"decathlon HTTP replay miss: {message}")


class SocketGuard:
    """In replay, refuse TCP/UDP connects the HTTP stubs did not catch, so nothing reaches the network.

    Loopback stays allowed (a task's local database, say) unless the shim could not be installed,
    when even loopback HTTP would bypass the recording.
    """

    def __init__(self, core: MissLog) -> None:
        self.core, self.strict = core, False

    def allowed(self, sock: socket.socket, address: Any) -> bool:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return True
        if self.strict:
            return False
        host = str(address[0]) if isinstance(address, tuple) and address else ""
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
        except ValueError:
            return False

    def install(self) -> None:
        guard = self
        real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

        def refuse(sock: socket.socket, address: Any) -> None:
            target = f"{address[0]}:{address[1]}" if isinstance(address, tuple) and len(address) > 1 else str(address)
            guard.core.log_miss("CONNECT", f"tcp://{target}", None,
                                "network blocked in replay" + (" (shim unavailable)" if guard.strict else ""))

        def connect(sock: socket.socket, address: Any) -> None:
            if not guard.allowed(sock, address):
                refuse(sock, address)
                raise miss_error(f"connect to {address!r} blocked")
            return real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            if not guard.allowed(sock, address):
                refuse(sock, address)
                return errno.ECONNREFUSED
            return real_connect_ex(sock, address)

        socket.socket.connect = connect  # type: ignore[method-assign,assignment]
        socket.socket.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
