"""Getting a page's text the way the reference's ``fetch`` (Node 22's undici) does, within bounds.

The reference sends ``fetch(url, {headers: {"User-Agent": <Chrome 120>, ...headers}})``,
treats any status outside 200-299 as ``HTTP error: <status>`` and decodes the body as UTF-8
(invalid bytes become U+FFFD, a BOM is dropped, the charset parameter is ignored). Every
network-level failure reads ``fetch failed`` (DNS, refused, TLS, timeouts, too many
redirects, unsupported schemes such as ``file:``); a few argument problems fail earlier with
undici's own TypeError text. The caller prefixes ``Failed to fetch <url>: ``.

Requests go through httpx, which the HTTP record/replay shim (vcrpy) intercepts, so a recorded
episode replays offline. Unlike the reference, time and size are bounded: a connection must
open within 10 s, each read must progress within 30 s and the whole fetch must finish within
60 s (under the client's 100 s tool timeout), all reported as ``fetch failed``; the body is
read up to 10 MiB and the rest dropped (``Body.truncated``). DECATHLON_FETCH_TIMEOUT (seconds)
and DECATHLON_FETCH_MAX_BYTES lower those two limits.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

import anyio
import httpx

from ..memory.jsvalues import utf16_units
from ..memory.stringify import own_keys
from .urls import ParsedUrl
from ..jsvalues import MessageError

USER_AGENT = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36"
)
# The limits can be lowered through the environment (tests do, to check them without waiting).
MAX_BODY_BYTES = int(os.environ.get("DECATHLON_FETCH_MAX_BYTES") or 10 * 1024 * 1024)
TOTAL_TIMEOUT = float(os.environ.get("DECATHLON_FETCH_TIMEOUT") or 60.0)
CONNECT_TIMEOUT = min(10.0, TOTAL_TIMEOUT)
READ_TIMEOUT = min(30.0, TOTAL_TIMEOUT)
MAX_REDIRECTS = 20  # undici's limit

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HTTP_WHITESPACE = "\t\n\r "
_NETWORK_ERROR = "fetch failed"


class FetchFailure(MessageError):
    """The fetch threw; ``message`` is the error's text (what follows ``Failed to fetch <url>: ``)."""


@dataclass(frozen=True)
class Body:
    text: str
    truncated: bool  # more than MAX_BODY_BYTES arrived; the rest was not read


def _header_object(user_headers: dict[str, str] | None) -> dict[str, str]:
    """``{"User-Agent": <default>, ...headers}``, after webidl's record<ByteString, ByteString> check.

    The object literal keeps one "User-Agent" key (a user's exact "User-Agent" replaces the
    default in place) and orders integer-like keys first, as JavaScript objects do.
    """
    merged: dict[str, str] = {"User-Agent": USER_AGENT}
    merged.update(user_headers or {})
    for name in own_keys(merged):
        for text in (name, merged[name]):
            for index, char in enumerate(utf16_units(text)):  # charCodeAt: UTF-16 code units
                if ord(char) > 255:
                    raise FetchFailure(
                        "Cannot convert argument to a ByteString because the character at index "
                        f"{index} has a value of {ord(char)} which is greater than 255."
                    )
    return merged


def _header_list(merged: dict[str, str]) -> list[tuple[str, str]]:
    """What ``new Headers(object)`` makes of it: validated, names differing in case comma-joined."""
    combined: dict[str, tuple[str, str]] = {}
    for name in own_keys(merged):
        value = merged[name].strip(_HTTP_WHITESPACE)
        if not _TOKEN.fullmatch(name):
            raise FetchFailure(f'Headers.append: "{name}" is an invalid header name.')
        if any(char in value for char in "\x00\r\n"):
            raise FetchFailure(f'Headers.append: "{value}" is an invalid header value.')
        key = name.lower()
        if key in combined:
            combined[key] = (combined[key][0], combined[key][1] + ", " + value)
        else:
            combined[key] = (name, value)
    # What undici adds when the caller did not set them.
    for name, value in (("accept", "*/*"), ("accept-language", "*"), ("sec-fetch-mode", "cors")):
        combined.setdefault(name, (name, value))
    return list(combined.values())


def _decode(data: bytes) -> str:
    # Response.text(): UTF-8 decode, replacing invalid sequences and dropping one leading BOM.
    return data.decode("utf-8", "replace").removeprefix("\ufeff")


def _data_url(url: str) -> bytes:
    """fetch of a data: URL (undici supports them): the decoded payload, or a network error."""
    after_scheme = url.split(":", 1)[1].split("#", 1)[0]
    media_type, comma, payload = after_scheme.partition(",")
    if not comma:
        raise FetchFailure(_NETWORK_ERROR)
    data = unquote_to_bytes(payload)
    if not re.search(r";[\x20]*base64[\x20]*$", media_type, re.I):
        return data
    # WHATWG forgiving-base64: whitespace ignored, padding optional, anything else fails.
    compact = re.sub(rb"[\t\n\f\r ]", b"", data)
    if len(compact) % 4 == 0:
        compact = compact.removesuffix(b"=").removesuffix(b"=")
    if len(compact) % 4 == 1 or not re.fullmatch(rb"[A-Za-z0-9+/]*", compact):
        raise FetchFailure(_NETWORK_ERROR)
    try:
        return base64.b64decode(compact + b"=" * (-len(compact) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise FetchFailure(_NETWORK_ERROR) from None


async def _http_get(url: str, headers: list[tuple[str, str]]) -> Body:
    timeout = httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT)
    chunks: list[bytes] = []
    size = 0
    truncated = False
    async with httpx.AsyncClient(follow_redirects=True, max_redirects=MAX_REDIRECTS, timeout=timeout) as client:
        async with client.stream("GET", url, headers=headers) as response:
            if not 200 <= response.status_code <= 299:
                raise FetchFailure(f"HTTP error: {response.status_code}")
            async for chunk in response.aiter_bytes():
                room = MAX_BODY_BYTES - size
                if len(chunk) > room:
                    chunks.append(chunk[:room])
                    truncated = True
                    break
                chunks.append(chunk)
                size += len(chunk)
    return Body(_decode(b"".join(chunks)), truncated)


async def fetch_body(raw_url: str, parsed: ParsedUrl, user_headers: dict[str, str] | None) -> Body:
    """The page's text, or FetchFailure with the message the reference's fetch would throw."""
    # undici's order: convert the init's headers, check the URL, then fill the Headers object.
    merged = _header_object(user_headers)
    if parsed.has_credentials:
        raise FetchFailure(f"Request cannot be constructed from a URL that includes credentials: {raw_url}")
    headers = _header_list(merged)
    if parsed.scheme == "data":
        data = _data_url(parsed.request_url)
        return Body(_decode(data[:MAX_BODY_BYTES]), len(data) > MAX_BODY_BYTES)
    if parsed.scheme not in ("http", "https"):
        raise FetchFailure(_NETWORK_ERROR)  # undici: file:, ftp:, about:, blob: ... are network errors
    try:
        with anyio.fail_after(TOTAL_TIMEOUT):
            return await _http_get(parsed.request_url, headers)
    except FetchFailure:
        raise
    except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError, OSError, ValueError, TimeoutError):
        # Whatever went wrong on the wire, undici reports the same TypeError.
        raise FetchFailure(_NETWORK_ERROR) from None
