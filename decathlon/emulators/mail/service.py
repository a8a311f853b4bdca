"""Start and stop one episode's mail service: IMAP and SMTP on one in-memory store."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from ..directory import Directory
from .imap import serve_imap
from .smtp import SMTPEndpoint, serve_smtp
from .store import Clock, MailStore, system_clock

NAME = "mail"
# Where the tasks' configs look for Poste.io: IMAP localhost:1143, SMTP submission localhost:1587.
# smtp-mx: upstream publishes Poste.io's port 25 at 2525 too, and one task's config sends there
# (canvas-submit-late-work); the same server answers both.
DEFAULT_PORTS = {"imap": 1143, "smtp": 1587, "smtp-mx": 2525}
# One limit for SMTP (SIZE, 552) and IMAP APPEND (APPENDLIMIT): Poste.io's own limit is not known
# here, so the common 25 MiB ceiling, above anything a task sends and far below a memory problem.
MAX_MESSAGE_BYTES = 25 * 1024 * 1024
_CLOSE_TIMEOUT = 2.0


@dataclass
class RunningService:
    name: str
    ports: dict[str, int]
    store: MailStore
    smtp: SMTPEndpoint
    smtp_mx: SMTPEndpoint
    _imap_server: asyncio.AbstractServer
    _imap_connections: set[asyncio.StreamWriter] = field(default_factory=set)
    _closed: bool = False

    async def close(self) -> None:
        """Stop listening and end every open session (idempotent)."""
        if self._closed:
            return
        self._closed = True
        servers = (self._imap_server, self.smtp.server, self.smtp_mx.server)
        for server in servers:
            server.close()
        for writer in list(self._imap_connections):
            writer.close()
        for transport in [*self.smtp.connections, *self.smtp_mx.connections]:
            transport.close()
        # Since Python 3.12 wait_closed() also waits for the connections; they are closing above.
        for server in servers:
            try:
                await asyncio.wait_for(server.wait_closed(), _CLOSE_TIMEOUT)
            except asyncio.TimeoutError:
                pass


def _bound_port(server: asyncio.AbstractServer) -> int:
    return int(server.sockets[0].getsockname()[1])  # type: ignore[attr-defined]


async def start(directory: Directory, host: str = "127.0.0.1", ports: dict[str, int] | None = None, *,
                clock: Clock = system_clock, max_message_bytes: int = MAX_MESSAGE_BYTES) -> RunningService:
    """Serve `directory`'s mailboxes, all empty, on IMAP and SMTP.

    `ports` maps "imap"/"smtp" to a port (0: any free one); a missing name gets its fixed upstream port.
    """
    wanted = dict(DEFAULT_PORTS)
    for key, value in (ports or {}).items():
        if key not in DEFAULT_PORTS:
            raise ValueError(f"unknown mail port name {key!r}: the mail service has {', '.join(DEFAULT_PORTS)}")
        wanted[key] = int(value)
    store = await MailStore.open(directory, clock=clock, max_message_bytes=max_message_bytes)
    imap_connections: set[asyncio.StreamWriter] = set()
    imap_server = await serve_imap(store.login, store.config, host, wanted["imap"], imap_connections)
    try:
        smtp = await serve_smtp(store, host, wanted["smtp"], max_message_bytes=max_message_bytes)
    except BaseException:
        imap_server.close()
        raise
    try:
        smtp_mx = await serve_smtp(store, host, wanted["smtp-mx"], max_message_bytes=max_message_bytes)
    except BaseException:
        imap_server.close()
        smtp.server.close()
        raise
    bound = {"imap": _bound_port(imap_server), "smtp": _bound_port(smtp.server), "smtp-mx": _bound_port(smtp_mx.server)}
    return RunningService(NAME, bound, store, smtp, smtp_mx, imap_server, imap_connections)
