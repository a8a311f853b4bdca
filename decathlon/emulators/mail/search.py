"""IMAP TEXT/BODY search over decoded message text, as Dovecot does it.

pymap matches TEXT and BODY against the raw bytes of each part. Real clients send mail whose
text is base64 or quoted-printable (Python's `MIMEText(..., "utf-8")` always base64-encodes) and
whose headers are RFC 2047 encoded, so a raw match misses words Dovecot finds: emails-mcp's
`search_emails` sends `SEARCH CHARSET UTF-8 TEXT "<query>"` and would come back empty. Here a
message also matches when the needle occurs, case-folded, in a decoded header value or in the
decoded text of any text/* part.
"""
from __future__ import annotations

from collections.abc import Iterator
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

from pymap.backend.dict import mailbox as dict_mailbox

_PARSER = BytesParser(policy=policy.default)


def decoded_text_contains(raw: bytes, needle: str) -> bool:
    """True when `needle` (case-insensitively) is in a decoded header or text part of `raw`."""
    folded = needle.casefold()
    if not folded:
        return True
    return any(folded in chunk.casefold() for chunk in _searchable_chunks(raw))


def _searchable_chunks(raw: bytes) -> Iterator[str]:
    try:
        message = _PARSER.parsebytes(raw)
    except Exception:  # noqa: BLE001 - the stdlib parser is lenient; anything else is not text we can search
        return
    for part in message.walk():
        yield from _header_values(part)
        if part.get_content_maintype() == "text" and not part.is_multipart():
            text = _part_text(part)
            if text:
                yield text


def _header_values(part: EmailMessage) -> Iterator[str]:
    for name in part.keys():
        try:
            values = part.get_all(name) or []
        except Exception:  # noqa: BLE001 - a header the policy cannot parse keeps its raw form below
            values = []
        for value in values:
            yield f"{name}: {value}"


def _part_text(part: EmailMessage) -> str:
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    charset = part.get_content_charset() or "utf-8"
    try:
        return payload.decode(charset, errors="replace")
    except LookupError:  # an unknown charset name: the bytes are most likely UTF-8 or ASCII anyway
        return payload.decode("utf-8", errors="replace")


class DecodingLoadedMessage(dict_mailbox.LoadedMessage):
    """The dict backend's loaded message, whose `contains` (TEXT/BODY search) also sees decoded text."""

    def contains(self, value: bytes) -> bool:
        if super().contains(value):
            return True
        try:
            raw = bytes(self.content)
        except Exception:  # noqa: BLE001 - pymap raises its private _NoContent when content was not loaded
            return False
        return decoded_text_contains(raw, value.decode("utf-8", errors="replace"))


def install() -> None:
    """Make the dict backend hand out `DecodingLoadedMessage`s.

    Its `Message.load_content` builds the module-level `LoadedMessage` class, and its mailboxes copy
    and move messages through that module's own `Message` class, so the module attribute is the one
    place that reaches every message (pymap is pinned, ci/servers and the sandbox extra say which).
    """
    dict_mailbox.LoadedMessage = DecodingLoadedMessage  # type: ignore[misc]
