"""The mail service's state as a folder (decathlon.emulators.kit.state): every account whose folders exist (an
account is made on its first login or delivery), each folder with its messages as .eml files.

    mail/<address>/folders.json         [{"name", "subscribed", "uid_validity", "next_uid",
                                          "messages": [{"uid", "file", "flags", "internal_date", "recent"}]}]
    mail/<address>/<folder>/<uid>.eml   a message's bytes, as delivered or appended

Addresses and folder names are %-quoted into one path component each. UIDs, UIDVALIDITY and the next UID are kept,
so a client that remembered them finds the same messages after a restore. A seed may hold any accounts of the
task's directory (another address is refused) and leave `uid_validity`/`next_uid` out.

The store is pymap's dict backend: a restore rebuilds each account's folders and puts each message in with its UID,
as pymap's own append does. IMAP sessions open across a restore keep the folders they had selected: clients
reconnect.
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pymap.backend.dict.filter import FilterSet
from pymap.backend.dict.mailbox import MailboxData, MailboxSet, Message
from pymap.mime import MessageContent
from pymap.parsing.specials import FetchRequirement
from pymap.parsing.specials.flag import Flag

from ..kit.state import FolderState, StateError, part, read_json, write_json
from .store import MailStore

NAME = "mail"
FOLDERS = "folders.json"


def _component(name: str) -> str:
    quoted = quote(name, safe="@+-_")
    return quoted.replace(".", "%2E") if quoted in (".", "..") else quoted


class MailState(FolderState):
    name = NAME

    def __init__(self, store: MailStore) -> None:
        self.store = store

    async def _fresh(self) -> None:
        self.store.config.set_cache.clear()  # every account's folders are made again, empty, on first use

    async def _dump(self, folder: Path) -> None:
        for address in sorted(self.store.config.set_cache):
            mailboxes = self.store.config.set_cache[address][0]
            base = folder / "mail" / _component(address)
            # In the order they were made (LIST shows them so), as pymap's dict backend holds them.
            subscribed = {n for n, on in mailboxes._subscribed.items() if on}
            docs = []
            for name in ["INBOX", *mailboxes._set]:
                box = await mailboxes.get_mailbox(name)
                messages = []
                async for msg in box.messages():
                    rel = f"{_component(name)}/{msg.uid}.eml"
                    data = bytes(await msg.load_content(FetchRequirement.CONTENT))
                    (base / rel).parent.mkdir(parents=True, exist_ok=True)
                    (base / rel).write_bytes(data)
                    messages.append({"uid": msg.uid, "file": rel,
                                     "flags": sorted(str(f) for f in msg.permanent_flags),
                                     "internal_date": msg.internal_date.isoformat(), "recent": msg.recent})
                docs.append({"name": name, "subscribed": name in subscribed, "uid_validity": box.uid_validity,
                             "next_uid": box._max_uid + 1, "messages": messages})
            write_json(base / FOLDERS, docs)

    async def _load(self, folder: Path, seed: bool) -> None:
        root = part(folder, "mail", seed)
        if root is None:
            return
        for account in sorted(p for p in root.iterdir() if p.is_dir()):
            docs = read_json(account / FOLDERS)
            address = self._address(account, docs)
            self.store.config.set_cache[address] = (await self._mailboxes(account, docs), FilterSet())

    def _address(self, account: Path, docs: Any) -> str:
        from urllib.parse import unquote

        address = self.store.account(unquote(account.name))
        if address is None:
            raise StateError(f"{account}: {unquote(account.name)!r} is no account of this task's directory", "bad_file")
        if not isinstance(docs, list) or not all(isinstance(d, dict) and isinstance(d.get("name"), str) for d in docs):
            raise StateError(f"{account / FOLDERS} must be a list of folders, each with its \"name\"", "bad_file")
        return address

    async def _mailboxes(self, account: Path, docs: list[dict[str, Any]]) -> MailboxSet:
        mailboxes = MailboxSet()
        for doc in docs:
            name = doc["name"]
            if name.upper() != "INBOX":
                await mailboxes.add_mailbox(name)
            if doc.get("subscribed"):
                await mailboxes.set_subscribed(name, True)
            self._fill(await mailboxes.get_mailbox(name), account, doc)
        return mailboxes

    def _fill(self, box: MailboxData, account: Path, doc: dict[str, Any]) -> None:
        where = f"{account / FOLDERS}, folder {doc['name']!r}"
        uids = []
        for i, m in enumerate(doc.get("messages") or []):
            try:
                uid = int(m.get("uid") or box._max_uid + 1)
                rel = m["file"]
                if not isinstance(rel, str) or rel.startswith("/") or ".." in Path(rel).parts:
                    raise ValueError(f"{rel!r} is not a path inside the account's folder")
                literal = (account / rel).read_bytes()
                when = datetime.fromisoformat(m["internal_date"]) if m.get("internal_date") else self.store.clock()
                flags = frozenset(Flag(f) for f in m.get("flags") or [])
            except (KeyError, TypeError, ValueError, OSError, AttributeError) as exc:
                raise StateError(f"{where}, message {i}: {exc}", "bad_file") from None
            if uid in box._messages or uid <= 0:
                raise StateError(f"{where}, message {i}: UID {uid} is taken or not positive", "bad_file")
            content = MessageContent.parse(literal)
            box._messages[uid] = Message(uid, when, flags, email_id=box._content_cache.add(content),
                                         thread_id=box._thread_cache.add(content), recent=bool(m.get("recent")),
                                         content=content)
            box._max_uid = max(box._max_uid, uid)
            uids.append(uid)
        if isinstance(doc.get("uid_validity"), int):
            box._uid_validity = doc["uid_validity"]
        if isinstance(doc.get("next_uid"), int):
            box._max_uid = max(box._max_uid, doc["next_uid"] - 1)
        box._messages = dict(sorted(box._messages.items()))
        box._mod_sequences.update(uids)
