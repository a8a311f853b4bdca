"""The SMTP side: aiosmtpd on the submission port, delivering into the shared store.

How Toolathlon's Poste.io answers on its submission port (1587 -> 587), as its setup script
leaves it: plaintext AUTH allowed without TLS, the submission auth plugin switched off, and
relaying allowed from every local and private network. So:

- AUTH PLAIN/LOGIN is offered on the plain connection and checks the password (535 when wrong),
  but mail is accepted with or without it. emails-mcp in fact never authenticates: it looks for
  AUTH in the EHLO features before it has sent EHLO.
- A recipient that is not local@domain.tld is 501 5.1.3. One on the local domain must be an
  existing mailbox, otherwise 550 5.1.1 at RCPT (a real MTA's answer for an unknown local user).
- A recipient on another domain is accepted and dropped: there is no outside world offline, and
  upstream it is queued and its delivery fails out of sight of the task. The recorded runs show
  exactly that: emails-mcp's sends to @company.com, @kkf.com or @test.com report success.
- A message over the size limit is 552 (the SIZE extension is advertised).
- Every accepted message is delivered to each local recipient's INBOX once, with the trace
  headers a delivery adds (Return-Path, Delivered-To, Received), and with the Date and Message-ID
  the MTA adds when the client sent none (Haraka does: the recorded course-assistant run lists
  its preprocess mail, sent by smtplib without a Date, with the MTA's "+0000" date). The
  sender's Sent copy is the client's business: emails-mcp APPENDs it itself, without a Date.
"""
from __future__ import annotations

import asyncio
import itertools
import logging
import re
from dataclasses import dataclass, field
from datetime import timezone
from email.utils import format_datetime
from typing import Any

from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

from .store import MailStore

log = logging.getLogger(__name__)


def _not_login_data_deprecation(record: logging.LogRecord) -> bool:
    # aiosmtpd itself sets its deprecated Session.login_data on every successful AUTH, and warns.
    return "login_data is deprecated" not in record.getMessage()


logging.getLogger("mail.log").addFilter(_not_login_data_deprecation)

IDENT = "ESMTP"
# Haraka (Poste's MTA) accepts long message lines; aiosmtpd's default rejects lines over 1000
# bytes, which a plain-text body written without wrapping easily has.
LINE_LENGTH_LIMIT = 1 << 20


# local@domain.tld: aiosmtpd accepts any <...> in RCPT TO, where an MTA wants a routable address.
_MAILBOX = re.compile(r"[^@\s<>]+@[^@\s<>.]+(\.[^@\s<>.]+)+")


@dataclass
class Submission:
    """aiosmtpd handler: recipient policy and local delivery."""

    store: MailStore
    dropped: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (mail from, outside rcpts)
    _queue_ids: Any = field(default_factory=lambda: itertools.count(1))

    async def handle_RCPT(self, server: SMTP, session: Session, envelope: Envelope, address: str,
                          rcpt_options: list[str]) -> str:
        if not _MAILBOX.fullmatch(address):
            return f"501 5.1.3 <{address}>: Bad recipient address syntax"
        if self.store.is_local(address):
            if self.store.account(address) is None:
                return f"550 5.1.1 <{address}>: Recipient address rejected: User unknown in virtual mailbox table"
        if address.lower() not in {a.lower() for a in envelope.rcpt_tos}:
            envelope.rcpt_tos.append(address)
        return "250 2.1.5 Ok"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        queue_id = f"{next(self._queue_ids):08X}"
        content = envelope.original_content or b""
        raw = self._missing_headers(content, queue_id) + content
        local = [self.store.account(a) for a in envelope.rcpt_tos if self.store.is_local(a)]
        outside = tuple(a for a in envelope.rcpt_tos if not self.store.is_local(a))
        try:
            for address in local:
                if address is not None:
                    await self.store.deliver(address, self._trace(session, envelope, address, queue_id) + raw)
        except Exception:  # a failed delivery is this transaction's problem, never the server's
            log.exception("delivery of queue id %s failed", queue_id)
            return "451 4.3.0 Error: queue file write error"
        if outside:
            self.dropped.append((envelope.mail_from or "", outside))
        return f"250 2.0.0 Ok: queued as {queue_id}"

    def _missing_headers(self, raw: bytes, queue_id: str) -> bytes:
        present = _header_names(raw)
        added = []
        if b"date" not in present:
            added.append(f"Date: {format_datetime(self.store.clock().astimezone(timezone.utc))}")
        if b"message-id" not in present:
            added.append(f"Message-ID: <{queue_id}@{self.store.domain}>")
        return "".join(line + "\r\n" for line in added).encode("ascii")

    def _trace(self, session: Session, envelope: Envelope, address: str, queue_id: str) -> bytes:
        peer = session.peer[0] if isinstance(session.peer, tuple) else str(session.peer or "unknown")
        helo = session.host_name or peer
        protocol = ("ESMTPA" if session.authenticated else "ESMTP") if session.extended_smtp else "SMTP"
        when = format_datetime(self.store.clock())
        lines = (f"Return-Path: <{envelope.mail_from or ''}>",
                 f"Delivered-To: {address}",
                 f"Received: from {helo} ([{peer}])\r\n\tby {self.store.domain} with {protocol} id {queue_id}\r\n"
                 f"\tfor <{address}>; {when}")
        return ("\r\n".join(lines) + "\r\n").encode("utf-8", errors="replace")


def _header_names(raw: bytes) -> set[bytes]:
    """The lower-cased field names of a message's header block (up to the first empty line)."""
    names = set()
    for line in raw.split(b"\n"):
        line = line.rstrip(b"\r")
        if not line:
            break
        if line[:1] not in (b" ", b"\t") and b":" in line:
            names.add(line.split(b":", 1)[0].strip().lower())
    return names


def _authenticator(store: MailStore) -> Any:
    def authenticate(server: SMTP, session: Session, envelope: Envelope, mechanism: str,
                     auth_data: Any) -> AuthResult:
        if not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        login = auth_data.login.decode("utf-8", errors="replace")
        password = auth_data.password.decode("utf-8", errors="replace")
        account = store.check_password(login, password)
        return AuthResult(success=account is not None, handled=False, auth_data=account)
    return authenticate


class _SubmissionSMTP(SMTP):
    """aiosmtpd's protocol with Haraka's tolerance for long lines, remembering its connection so
    that closing the service can end every session."""

    line_length_limit = LINE_LENGTH_LIMIT
    tracked: set[asyncio.BaseTransport]
    _own_transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._own_transport = transport
        self.tracked.add(transport)
        super().connection_made(transport)

    def connection_lost(self, error: Exception | None) -> None:
        if self._own_transport is not None:
            self.tracked.discard(self._own_transport)
        super().connection_lost(error)


@dataclass
class SMTPEndpoint:
    server: asyncio.AbstractServer
    handler: Submission
    connections: set[asyncio.BaseTransport]


async def serve_smtp(store: MailStore, host: str, port: int, *, max_message_bytes: int) -> SMTPEndpoint:
    loop = asyncio.get_running_loop()
    handler = Submission(store)
    authenticator = _authenticator(store)
    connections: set[asyncio.BaseTransport] = set()

    def protocol() -> SMTP:
        smtp = _SubmissionSMTP(handler, hostname=store.domain, ident=IDENT, data_size_limit=max_message_bytes,
                               enable_SMTPUTF8=True, auth_require_tls=False, authenticator=authenticator,
                               loop=loop)
        smtp.tracked = connections
        return smtp

    server = await loop.create_server(protocol, host, port)
    return SMTPEndpoint(server, handler, connections)
