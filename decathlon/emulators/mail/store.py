"""Every account's mailboxes for one episode, in memory, on pymap's dict backend.

Both protocols share it: IMAP sessions read and change it through pymap, SMTP delivery appends to
a recipient's INBOX here. Accounts are Poste.io's: each `Directory.mail_accounts` entry logs in
with its full address and password, and starts with the folders Poste (Dovecot) gives a new
mailbox (INBOX, Sent, Drafts, Trash, Junk), all empty.

An account's folders are made the first time it is used (its first login or delivery), not at
start: Toolathlon's directory has 500+ accounts and a task touches a handful, and making them all
would be most of the start-up time.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from pymap.backend.dict import Identity, Login
from pymap.backend.dict.filter import FilterSet
from pymap.backend.dict.mailbox import MailboxSet
from pymap.parsing.message import AppendMessage
from pymap.parsing.specials import FetchRequirement
from pymap.user import UserMetadata
from pysasl.creds.server import ServerCredentials

from ..directory import Directory
from . import search
from .imap import MailConfig

# Besides INBOX. emails-mcp saves sent mail to "Sent" (and its folder tools know Sent, Drafts,
# Trash); the checkout's cleanup scripts walk INBOX, Sent, Trash, Junk and Drafts.
DEFAULT_FOLDERS = ("Sent", "Drafts", "Trash", "Junk")

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    # UTC, as in the Poste.io container: internal dates and the dates the MTA writes read "+0000".
    return datetime.now(timezone.utc)


class MailLogin(Login):
    """The dict backend's login, making the account's folders before its session opens."""

    def __init__(self, config: MailConfig, prepare: Callable[[str], Awaitable[object]]) -> None:
        super().__init__(config)
        self._prepare = prepare

    async def authenticate(self, credentials: ServerCredentials) -> Identity:
        identity = await super().authenticate(credentials)
        await self._prepare(identity.name)
        return identity


@dataclass
class MailStore:
    domain: str
    config: MailConfig
    clock: Clock
    login: MailLogin = field(init=False)
    # lower-cased address -> the address as the directory spells it (the IMAP login name)
    _addresses: dict[str, str] = field(default_factory=dict)
    _passwords: dict[str, str] = field(default_factory=dict)
    _making_folders: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        self.login = MailLogin(self.config, self._folders)

    @classmethod
    async def open(cls, directory: Directory, *, clock: Clock = system_clock,
                   max_message_bytes: int) -> MailStore:
        search.install()
        config = MailConfig.build(max_message_bytes=max_message_bytes, clock=clock)
        store = cls(domain=directory.domain.lower(), config=config, clock=clock)
        for account in directory.mail_accounts:
            store._add_account(account.email, account.password)
        return store

    def _add_account(self, address: str, password: str) -> None:
        key = address.lower()
        if key in self._addresses:  # the same mailbox listed twice: Poste keeps the first
            return
        self._addresses[key] = address
        self._passwords[address] = password
        self.login.users_dict[address] = UserMetadata(self.config, address, password=password)

    async def _folders(self, address: str) -> MailboxSet:
        """The account's folders, made (empty, as for a new Poste mailbox) on first use."""
        async with self._making_folders:
            made = self.config.set_cache.get(address)
            if made is None:
                mailboxes = MailboxSet()
                for name in DEFAULT_FOLDERS:
                    await mailboxes.add_mailbox(name)
                    await mailboxes.set_subscribed(name, True)  # Dovecot's auto = subscribe
                made = self.config.set_cache[address] = (mailboxes, FilterSet())
        return made[0]

    def is_local(self, address: str) -> bool:
        return address.rpartition("@")[2].lower() == self.domain

    def account(self, address: str) -> str | None:
        """The mailbox an address delivers to (addresses are case-insensitive), or None."""
        return self._addresses.get(address.lower())

    def check_password(self, login: str, password: str) -> str | None:
        """The account a login/password pair authenticates, or None.

        Logins are full addresses spelled as in the directory, as for IMAP (pymap's check)."""
        if login not in self._passwords or self._passwords[login] != password:
            return None
        return login

    async def deliver(self, address: str, message: bytes) -> None:
        """Append a message to an account's INBOX, as the MTA's local delivery does."""
        inbox = await (await self._folders(address)).get_mailbox("INBOX")
        await inbox.append(AppendMessage(message, self.clock(), frozenset()), recent=True)

    async def messages(self, address: str, folder: str = "INBOX") -> list[bytes]:
        """The raw messages of one folder, oldest first (for inspection and tests)."""
        mailbox = await (await self._folders(address)).get_mailbox(folder)
        return [bytes(await msg.load_content(FetchRequirement.CONTENT)) async for msg in mailbox.messages()]
