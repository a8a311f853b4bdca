"""The front's HTTPS proxy: CONNECT to an emulated host is answered 200, TLS terminated with a leaf for the host
the client names (sni.py), the plain bytes relayed to the emulator; anything else gets a 502 that names the host."""
from __future__ import annotations

import asyncio
import socket
import ssl
import sys
from typing import Callable

from decathlon.emulators.front.backends import BackendError, Backends
from decathlon.emulators.front.ca import Certificates
from decathlon.emulators.front.routes import Route, route_for
from decathlon.emulators.front.sni import Leaves

HEAD_LIMIT = 16 * 1024
HEAD_TIMEOUT = 30.0
TLS_TIMEOUT = 30.0
CHUNK = 64 * 1024


class Front:
    def __init__(self, certs: Certificates, backends: Backends) -> None:
        self.backends = backends
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._certs = certs
        self._leaves = Leaves(certs)

    def _context(self, alpn: str) -> ssl.SSLContext:
        """The default leaf's context for `alpn`; its SNI callback swaps in the leaf of the host the client names."""
        if alpn not in self._contexts:
            ctx = self._certs.server_context(alpn)
            ctx.sni_callback = self._leaves.callback(alpn)
            self._contexts[alpn] = ctx
        return self._contexts[alpn]

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ssl.SSLError, TimeoutError):
            pass  # a client that went away or spoke nonsense: its connection ends, nothing else does
        finally:
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT)
        if len(head) > HEAD_LIMIT:
            return await _refuse(writer, 431, "request head too large")
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        if len(parts) != 3:
            return await _refuse(writer, 400, f"not an HTTP request line: {line[:100]!r}")
        method, target, _version = parts
        if method.upper() != "CONNECT":
            # Plain http:// through the proxy: no vendor API the tasks use is plain HTTP.
            return await _refuse(writer, 502, f"decathlon's SaaS front relays only HTTPS (CONNECT); {target[:200]} "
                                              "is not reachable from this episode")
        host, _, port = target.rpartition(":")
        host = host.strip("[]")
        route = route_for(host) if port == "443" else None
        if route is None:
            return await _refuse(writer, 502, f"{target[:200]} is not emulated in this episode, and the episode has no "
                                              "network: nothing answers there (decathlon.emulators.front.routes lists "
                                              "what is emulated)")
        try:
            backend_port = await self.backends.port(route.service)
        except BackendError as exc:
            return await _refuse(writer, 503, str(exc))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        await asyncio.wait_for(writer.start_tls(self._context(route.alpn)), TLS_TIMEOUT)
        await self._relay(reader, writer, route, backend_port)

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, route: Route, port: int) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError as exc:
            print(f"front: {route.service} on port {port} refused a connection: {exc}", file=sys.stderr, flush=True)
            return
        try:
            await asyncio.gather(_pump(reader, up_writer, _quickack(writer)), _pump(up_reader, writer))
        finally:
            up_writer.close()


def _quickack(writer: asyncio.StreamWriter) -> Callable[[], None]:
    """Acknowledge what the client sent at once. Through a proxy, urllib3 turns Nagle's algorithm back on, and the
    clients write a request's head and body apart: the body waits for the head's ACK, which a delayed ACK holds
    back ~40 ms (every BigQuery job, token and Snowflake query POST). The kernel clears the flag again by itself,
    so it is set after every read."""
    sock = writer.get_extra_info("socket")
    option = getattr(socket, "TCP_QUICKACK", None)
    if sock is None or option is None:
        return lambda: None

    def ack() -> None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, option, 1)
        except OSError:
            pass
    ack()
    return ack


async def _pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, after_read: Callable[[], None] | None = None) -> None:
    try:
        while True:
            data = await src.read(CHUNK)
            if after_read is not None:
                after_read()
            if not data:
                break
            dst.write(data)
            await dst.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        # Half-close where the transport allows it (a TLS one does not): the peer sees the end of the stream.
        try:
            if dst.can_write_eof():
                dst.write_eof()
            else:
                dst.close()
        except (OSError, RuntimeError):
            pass


async def _refuse(writer: asyncio.StreamWriter, status: int, message: str) -> None:
    reason = {400: "Bad Request", 431: "Request Header Fields Too Large", 502: "Bad Gateway",
              503: "Service Unavailable"}[status]
    body = (message + "\n").encode("utf-8", "replace")
    writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                 f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("ascii") + body)
    await writer.drain()
