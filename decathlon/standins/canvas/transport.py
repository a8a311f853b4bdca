"""HTTP exchanges with Canvas, failing the way Node 22 + axios 1.12 report failures.

The reference's requests go through axios (follow-redirects, at most 5 hops; TLS not verified,
as NODE_TLS_REJECT_UNAUTHORIZED=0 makes Node do). When no response arrives, what it shows is
the Node error's message: ``connect ECONNREFUSED 127.0.0.1:20001`` for a host name that resolves
to one address, an empty message for one that resolves to several (Node 22 tries them all and
throws an AggregateError, whose message axios 1.12 passes on empty: ``localhost`` with both
127.0.0.1 and ::1), ``getaddrinfo ENOTFOUND <host>``, ``socket hang up``, ``timeout of 30000ms
exceeded``, ``Maximum number of redirects exceeded``, ``maxContentLength size of N exceeded``.

Deliberate differences: every exchange is bounded (the reference's own 30 s inactivity timeout
applies to each read here, and a whole exchange may take at most four times that; its uploads
and user listing had none); a body larger than DECATHLON_CANVAS_MAX_BYTES (64 MiB) is refused
with axios's maxContentLength error instead of being held in memory; proxy variables from the
environment are ignored, since Canvas is always the episode's own emulator.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from ..jsvalues import MessageError

if TYPE_CHECKING:
    import httpx


def _setting(name: str, default: float) -> float:
    """A positive number from the environment; anything else leaves the default (never a crash at start)."""
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 and value == value and value != float("inf") else default


TIMEOUT_SECONDS = _setting("DECATHLON_CANVAS_TIMEOUT", 30.0)
MAX_BYTES = int(_setting("DECATHLON_CANVAS_MAX_BYTES", 64 * 1024 * 1024))
MAX_REDIRECTS = 5
USER_AGENT = "axios/1.12.2"
ACCEPT = "application/json, text/plain, */*"


class NoResponse(MessageError):
    """The exchange ended without an HTTP response; ``message`` is what Node/axios would say."""


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]  # lower-case names; repeated headers joined with ", " as Node does
    body: bytes


def timeout_message() -> str:
    ms = TIMEOUT_SECONDS * 1000
    return f"timeout of {int(ms) if ms == int(ms) else ms}ms exceeded"


def size_message() -> str:
    return f"maxContentLength size of {MAX_BYTES} exceeded"


_ERRNO_NAMES = {
    errno.ECONNREFUSED: "ECONNREFUSED",
    errno.ETIMEDOUT: "ETIMEDOUT",
    errno.EHOSTUNREACH: "EHOSTUNREACH",
    errno.ENETUNREACH: "ENETUNREACH",
    errno.ECONNRESET: "ECONNRESET",
    errno.EADDRNOTAVAIL: "EADDRNOTAVAIL",
}


class Transport:
    """One pooled httpx client for the server's life; created lazily (httpx's import is slow)."""

    def __init__(self) -> None:
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx

            limit = TIMEOUT_SECONDS
            self._client = httpx.AsyncClient(
                verify=False,
                trust_env=False,
                follow_redirects=True,
                max_redirects=MAX_REDIRECTS,
                timeout=httpx.Timeout(limit, connect=limit, read=limit, write=limit, pool=limit),
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()

    async def send(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None = None,
        files: list[tuple[str, Any]] | None = None,
        data: dict[str, str] | None = None,
    ) -> RawResponse:
        import httpx

        try:
            parsed = httpx.URL(url)
            if parsed.scheme not in ("http", "https") or not parsed.host:
                raise NoResponse("Invalid URL")
        except (httpx.InvalidURL, ValueError, TypeError):
            raise NoResponse("Invalid URL") from None
        request_headers = {"Accept": ACCEPT, "User-Agent": USER_AGENT, **headers}
        try:
            with anyio.fail_after(TIMEOUT_SECONDS * 4):
                async with self._http().stream(
                    method, parsed, headers=request_headers, content=content, files=files, data=data
                ) as response:
                    body = bytearray()
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) > MAX_BYTES:
                            raise NoResponse(size_message())
                    joined: dict[str, str] = {}
                    for name, value in response.headers.multi_items():
                        key = name.lower()
                        joined[key] = f"{joined[key]}, {value}" if key in joined else value
                    return RawResponse(response.status_code, joined, bytes(body))
        except TimeoutError:
            raise NoResponse(timeout_message()) from None
        except httpx.TimeoutException as exc:
            if isinstance(exc, httpx.ConnectTimeout):
                raise NoResponse(await _connect_failure(parsed, exc)) from None
            raise NoResponse(timeout_message()) from None
        except httpx.TooManyRedirects:
            raise NoResponse("Maximum number of redirects exceeded") from None
        except httpx.ConnectError as exc:
            tls = _tls_failure(exc)
            raise NoResponse(tls if tls is not None else await _connect_failure(parsed, exc)) from None
        except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError, httpx.CloseError):
            raise NoResponse("socket hang up") from None
        except (httpx.UnsupportedProtocol, httpx.InvalidURL, httpx.LocalProtocolError):
            raise NoResponse("Invalid URL") from None
        except httpx.DecodingError as exc:
            raise NoResponse(str(exc) or "incorrect header check") from None


async def _connect_failure(url: httpx.URL, exc: BaseException) -> str:
    """Node's message for a connection that could not be made to ``url``'s host."""
    host = url.host
    port = url.port or (443 if url.scheme == "https" else 80)
    code = _errno_name(exc)
    try:
        ipaddress.ip_address(host)
        addresses = [host]
    except ValueError:
        try:
            infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as resolve_error:
            reason = "EAI_AGAIN" if getattr(resolve_error, "errno", None) == socket.EAI_AGAIN else "ENOTFOUND"
            return f"getaddrinfo {reason} {host}"
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if len(addresses) > 1:
        # Node tries each address and throws an AggregateError; its message is empty.
        return ""
    return f"connect {code} {addresses[0] if addresses else host}:{port}"


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop()
        if current is None or any(current is known for known in seen):
            continue
        seen.append(current)
        pending.extend([current.__cause__, current.__context__, *getattr(current, "exceptions", ())])
    return seen


def _tls_failure(exc: BaseException) -> str | None:
    """Node's words for a handshake that failed (say, plain HTTP on the HTTPS port): ``write EPROTO ...``."""
    for current in _chain(exc):
        if isinstance(current, ssl.SSLError):
            return f"write EPROTO {current.reason or current}".rstrip()
    return None


def _errno_name(exc: BaseException) -> str:
    for current in _chain(exc):
        if isinstance(current, TimeoutError) or "timed out" in str(current).lower():
            return "ETIMEDOUT"
        number = getattr(current, "errno", None)
        if isinstance(number, int) and number in _ERRNO_NAMES:
            return _ERRNO_NAMES[number]
    return "ECONNREFUSED"
