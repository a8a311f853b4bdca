"""The IMAP side: pymap's server on the shared store, set up like Toolathlon's Dovecot.

Toolathlon's Poste.io has plaintext logins allowed on port 143 (its setup turns
`auth_allow_cleartext` on) and the clients connect without TLS, so: no STARTTLS, LOGIN and
AUTHENTICATE PLAIN/LOGIN on the plain connection. Where pymap and Dovecot answer differently
in a way the checkout's clients can see, Dovecot's answer is kept (see `DovecotState`).
"""
from __future__ import annotations

import asyncio
import dataclasses
import socket
from argparse import Namespace
from collections.abc import Callable
from contextlib import AsyncExitStack, closing
from datetime import datetime
from typing import Any

from proxyprotocol.reader import ProxyProtocolReader
from proxyprotocol.sock import SocketInfo
from pymap.backend.dict import Config
from pymap.concurrent import Subsystem
from pymap.context import connection_exit
from pymap.exceptions import ResponseError
from pymap.imap import IMAPConnection, IMAPServer
from pymap.imap.state import ConnectionState
from pymap.parsing.command.auth import AppendCommand, DeleteCommand
from pymap.parsing.command.select import CopyCommand, FetchCommand, MoveCommand, StoreCommand
from pymap.parsing.response import ResponseBad
from pymap.parsing.specials import SequenceSet
from pysasl.hashing import Cleartext

GREETING = b"IMAP server ready."
# Dovecot disconnects a client after 20 invalid commands in a row; pymap's default of 5 would
# cut off a client that Dovecot still serves.
BAD_COMMAND_LIMIT = 20


class MailConfig(Config):
    """pymap's dict-backend config with our clock, limits and greeting, and no TLS."""

    clock: Callable[[], datetime]

    @classmethod
    def build(cls, *, max_message_bytes: int, clock: Callable[[], datetime]) -> MailConfig:
        args = Namespace(passlib_cfg=None, proxy_protocol=None, inherited_sockets=None)
        inline = Subsystem.for_asyncio()
        config = cls(args, host=None, port=0, demo_data=False, demo_user="", demo_password="",
                     tls_enabled=False, hash_context=Cleartext(), cpu_subsystem=inline, subsystem=inline,
                     invalid_user_sleep=0.0, reject_dnsbl=False, max_append_len=max_message_bytes,
                     bad_command_limit=BAD_COMMAND_LIMIT, admin_key=b"unused: no admin service runs")
        config.clock = clock
        return config

    @property
    def greeting(self) -> bytes:
        # pymap's default resolves the host's FQDN on every connection (a DNS lookup in a sandbox).
        return GREETING


class InvalidMessageSet(ResponseError):
    """Dovecot's answer to a sequence number past the last message: BAD, not an empty OK."""

    def __init__(self, command: bytes) -> None:
        super().__init__(command)
        self.command = command

    def get_response(self, tag: bytes) -> ResponseBad:
        return ResponseBad(tag, b"Error in IMAP command " + self.command + b": Invalid messageset")


class DovecotState(ConnectionState):
    """pymap's command handling, with Dovecot's answers where clients see a difference.

    - FETCH/STORE/COPY/MOVE by sequence number with a number past the mailbox's last message
      (or any number in an empty mailbox) is BAD "Invalid messageset" in Dovecot; pymap quietly
      does nothing. emails-mcp's read_email of a wrong id and the checkout's
      `STORE 1:* +FLAGS (\\Deleted)` on an empty folder depend on this.
    - DELETE of the mailbox this session has selected closes it first and succeeds, as Dovecot
      does; pymap would answer BYE and drop the connection.
    - APPEND without a date gets the store's clock as its internal date, not pymap's naive now().
    """

    config: MailConfig

    def _check_sequence_set(self, command: bytes, sequence_set: SequenceSet) -> None:
        if sequence_set.uid:
            return  # UIDs that do not exist just match nothing, in Dovecot too
        exists = self.selected.messages.exists
        if exists == 0 or any(n > exists for n in _numbers(sequence_set)):
            raise InvalidMessageSet(command)

    async def do_fetch(self, cmd: FetchCommand) -> Any:
        self._check_sequence_set(b"FETCH", cmd.sequence_set)
        return await super().do_fetch(cmd)

    async def do_store(self, cmd: StoreCommand) -> Any:
        self._check_sequence_set(b"STORE", cmd.sequence_set)
        return await super().do_store(cmd)

    async def do_copy(self, cmd: CopyCommand) -> Any:
        self._check_sequence_set(b"COPY", cmd.sequence_set)
        return await super().do_copy(cmd)

    async def do_move(self, cmd: MoveCommand) -> Any:
        self._check_sequence_set(b"MOVE", cmd.sequence_set)
        return await super().do_move(cmd)

    async def do_delete(self, cmd: DeleteCommand) -> Any:
        if self._selected is not None and self._selected.lookup == cmd.mailbox:
            self._selected = None
        return await super().do_delete(cmd)

    async def do_append(self, cmd: AppendCommand) -> Any:
        now = self.config.clock()
        cmd.messages = [m if m.when is not None else dataclasses.replace(m, when=now) for m in cmd.messages]
        return await super().do_append(cmd)


def _numbers(sequence_set: SequenceSet) -> list[int]:
    """The explicit numbers of a sequence set (`*` is never past the end, so it is left out)."""
    out: list[int] = []
    for elem in sequence_set.value:
        for part in (elem if isinstance(elem, tuple) else (elem,)):
            if isinstance(part, int):
                out.append(part)
    return out


class DovecotIMAPServer(IMAPServer):
    """pymap's per-connection entry point, running `DovecotState` and remembering open connections."""

    def __init__(self, login: Any, config: MailConfig, connections: set[asyncio.StreamWriter]) -> None:
        super().__init__(login, config)
        self._connections = connections

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       sock_info: SocketInfo) -> None:
        self._connections.add(writer)
        try:
            conn = IMAPConnection(self.commands, self._config, reader, writer, sock_info)
            state = DovecotState(self._login, self._config)
            async with AsyncExitStack() as stack:
                connection_exit.set(stack)
                stack.enter_context(closing(conn))
                await conn.run(state)
        finally:
            self._connections.discard(writer)


_TCP_QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)  # Linux only


class _QuickAckProtocol(asyncio.StreamReaderProtocol):
    """Acknowledges each segment at once. A client with Nagle's algorithm on (imaplib's) sends an APPEND's literal
    and its closing CRLF as two writes, the second held until the literal is acknowledged, and Linux delays that
    acknowledgement by 40 ms: every appended message cost 45 ms (a preprocess importing 18 messages, 0.8 s)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._sock = transport.get_extra_info("socket")
        super().connection_made(transport)

    def data_received(self, data: bytes) -> None:
        # The kernel leaves quick-ack mode by itself, so it is asked for again after every read. Where it cannot
        # be (not Linux, a closing socket), the client only waits for the delayed acknowledgement, as before.
        if self._sock is not None and _TCP_QUICKACK is not None:
            try:
                self._sock.setsockopt(socket.IPPROTO_TCP, _TCP_QUICKACK, 1)
            except OSError:
                pass
        super().data_received(data)


async def serve_imap(login: Any, config: MailConfig, host: str, port: int,
                     connections: set[asyncio.StreamWriter]) -> asyncio.AbstractServer:
    server = DovecotIMAPServer(login, config, connections)
    callback = ProxyProtocolReader(config.proxy_protocol).get_callback(server)
    loop = asyncio.get_running_loop()

    def protocol() -> _QuickAckProtocol:  # what asyncio.start_server makes, quick-acking
        return _QuickAckProtocol(asyncio.StreamReader(loop=loop), callback, loop=loop)

    return await loop.create_server(protocol, host, port)
