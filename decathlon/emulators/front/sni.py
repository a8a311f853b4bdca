"""A leaf per host: the front answers the server name of each ClientHello with a certificate for exactly it.

Routing accepts every name under `*.snowflakecomputing.com`, but a wildcard covers one label only, so no one
leaf names `xy12345.us-east-1.snowflakecomputing.com` (a region-qualified account, as real Snowflake accounts
often are). So the SNI callback swaps in a context whose leaf names the host the client asked for, minted on
first use and kept in a bounded LRU: a client sending endless names cannot grow the front's memory. A name the
front does not route gets no leaf at all: the handshake fails (with `unrecognized_name`, though asyncio closes a
failed handshake without sending the alert, so the client sees the connection end). That takes a tunnel to a routed
host whose ClientHello names another; a CONNECT to an unrouted host is refused before TLS, naming it (proxy.py).
A client that names no host keeps the default leaf."""
from __future__ import annotations

import re
import ssl
import sys
from collections import OrderedDict
from typing import Callable

from decathlon.emulators.front.ca import Certificates
from decathlon.emulators.front.routes import route_for

MAX_LEAVES = 256  # far more hosts than any episode's clients name; a context is a few kB
HOST_LIMIT = 253
# Letters, digits, hyphens, and underscores (some Snowflake account names have them); no `*`: a minted leaf
# names one host, never a wildcard.
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\Z")

SniCallback = Callable[[ssl.SSLObject, "str | None", ssl.SSLContext], "int | None"]


def host_name(name: str) -> str | None:
    """`name` as a certificate names it (lower case, no final dot), or None when it is not a DNS host name."""
    host = name.lower().rstrip(".")
    if not host or len(host) > HOST_LIMIT or not all(_LABEL.match(label) for label in host.split(".")):
        return None
    return host


class Leaves:
    """Server contexts by (host, ALPN protocol), each with a leaf for exactly that host, least recently used
    dropped beyond `limit`. Used from the event loop's thread only (the SNI callback runs inside the handshake
    there), so it needs no lock. A connection holds its own context: dropping one here ends nothing."""

    def __init__(self, certs: Certificates, limit: int = MAX_LEAVES) -> None:
        self._certs = certs
        self._limit = limit
        self._contexts: OrderedDict[tuple[str, str], ssl.SSLContext] = OrderedDict()

    def __len__(self) -> int:
        return len(self._contexts)

    def context(self, name: str, alpn: str) -> ssl.SSLContext | None:
        """The context whose leaf names `name`, or None when the front does not route it."""
        host = host_name(name)
        if host is None or route_for(host) is None:
            return None
        key = (host, alpn)
        ctx = self._contexts.get(key)
        if ctx is not None:
            self._contexts.move_to_end(key)
            return ctx
        ctx = self._contexts[key] = self._certs.server_context(alpn, self._certs.mint(host))
        while len(self._contexts) > self._limit:
            self._contexts.popitem(last=False)
        return ctx

    def callback(self, alpn: str) -> SniCallback:
        """The SNI callback of the default context for `alpn`: the minted context keeps the protocol the CONNECT's
        route chose (OpenSSL negotiates ALPN with the context set here, after the server name)."""
        def select(conn: ssl.SSLObject, server_name: str | None, _default: ssl.SSLContext) -> int | None:
            if server_name is None:
                return None  # no SNI: the default leaf
            try:
                ctx = self.context(server_name, alpn)
            except (ValueError, OSError, ssl.SSLError) as exc:
                # Raised inside the handshake, it would only surface as an unraisable-exception report.
                print(f"front: no leaf for {server_name[:HOST_LIMIT]!r}: {exc}", file=sys.stderr, flush=True)
                return ssl.ALERT_DESCRIPTION_INTERNAL_ERROR
            if ctx is None:
                return ssl.ALERT_DESCRIPTION_UNRECOGNIZED_NAME
            conn.context = ctx
            return None
        return select
