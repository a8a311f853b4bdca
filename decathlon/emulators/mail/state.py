"""The mail service's state as a folder (decathlon.emulators.kit.state): every account whose folders exist (an
account is made on its first login or delivery), each folder with its messages as .eml files.

    mail/<address>/folders.json     [{"name", "subscribed", "uid_validity", "next_uid", "mbox",
                                      "messages": [{"uid", "flags", "internal_date", "recent"}]}]
    mail/<address>/<folder>.mbox    the folder's messages in that order, mboxrd (a `From ` line before each, a
                                    blank line after, body lines `From `/`>From ` quoted with one more `>`)

One file per folder, not per message: creating files is what a snapshot would spend its time on. Addresses and
folder names are %-quoted into one path component each. UIDs, UIDVALIDITY and the next UID are kept,
so a client that remembered them finds the same messages after a restore. A seed may hold any accounts of the
task's directory (another address is refused) and leave `uid_validity`/`next_uid` out.

The store is pymap's dict backend: a restore rebuilds each account's folders and puts each message in with its UID,
as pymap's own append does. IMAP sessions open across a restore keep the folders they had selected: clients
reconnect.
"""
from __future__ import annotations

import re
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


_FROM_LINE = b"From MAILER-DAEMON Thu Jan  1 00:00:00 1970\n"
_QUOTED = re.compile(rb"^(>*From )", re.MULTILINE)
_UNQUOTE = re.compile(rb"^>(>*From )", re.MULTILINE)
_SEPARATOR = re.compile(rb"^From [^\n]*\n", re.MULTILINE)


def _mbox_entry(message: bytes) -> bytes:
    return _FROM_LINE + _QUOTED.sub(rb">\1", message) + b"\n"


def _mbox_messages(data: bytes) -> list[bytes]:
    """The messages of an mboxrd file as `_mbox_entry` writes them (a `From ` line opens each; quoted lines are not)."""
    starts = [m for m in _SEPARATOR.finditer(data)]
    out = []
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(data)
        body = data[m.end():end]
        out.append(_UNQUOTE.sub(rb"\1", body[:-1] if body.endswith(b"\n") else body))
    return out


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
            base.mkdir(parents=True, exist_ok=True)
            for name in ["INBOX", *mailboxes._set]:
                box = await mailboxes.get_mailbox(name)
                messages, mbox = [], []
                async for msg in box.messages():
                    mbox.append(_mbox_entry(bytes(await msg.load_content(FetchRequirement.CONTENT))))
                    messages.append({"uid": msg.uid, "flags": sorted(str(f) for f in msg.permanent_flags),
                                     "internal_date": msg.internal_date.isoformat(), "recent": msg.recent})
                rel = f"{_component(name)}.mbox"
                (base / rel).write_bytes(b"".join(mbox))
                docs.append({"name": name, "subscribed": name in subscribed, "uid_validity": box.uid_validity,
                             "next_uid": box._max_uid + 1, "mbox": rel, "messages": messages})
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
        listed = doc.get("messages") or []
        rel = doc.get("mbox")
        if rel is None and not listed:
            return
        if not isinstance(rel, str) or rel.startswith("/") or ".." in Path(rel).parts or not isinstance(listed, list):
            raise StateError(f"{where}: \"mbox\" must name a file in the account's folder, \"messages\" list them",
                             "bad_file")
        try:
            literals = _mbox_messages((account / rel).read_bytes())
        except OSError as exc:
            raise StateError(f"{where}: {exc}", "bad_file") from None
        if len(literals) != len(listed):
            raise StateError(f"{where}: {rel} holds {len(literals)} messages, \"messages\" lists {len(listed)}",
                             "bad_file")
        uids = []
        for i, (m, literal) in enumerate(zip(listed, literals)):
            try:
                uid = int(m.get("uid") or box._max_uid + 1)
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
