"""The four tools: fetch, then hand the body over unchanged, as Markdown, as text or as JSON.

Like the reference's Fetcher, every failure from here on is an ``isError`` result carrying
the error's message: ``Failed to fetch <url>: <reason>`` for the fetch itself, the bare V8
``JSON.parse`` message for a body that is not JSON (``Unexpected token '<', "<!DOCTYPE "...
is not valid JSON``), ``Maximum call stack size exceeded`` for a page nested too deeply to
convert. The JSON text is ``JSON.stringify``'s compact form, as recorded runs show.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import anyio.to_thread

from ..memory.jsonparse import parse as json_parse
from ..memory.jsvalues import JsError, pair_surrogates
from ..memory.stringify import stringify
from .fetching import MAX_BODY_BYTES, Body, FetchFailure, fetch_body
from .plaintext import html_to_text
from .turndown import html_to_markdown
from .validation import Payload

# Ours, not the reference's (it has no limit): said at the end of what was converted.
TRUNCATION_NOTE = f"\n\n[Response body truncated: only the first {MAX_BODY_BYTES} bytes were read.]"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class BodyTooLarge(Exception):
    """A truncated body cannot be parsed as JSON; reported instead of a misleading parse error."""


def _html(body: Body) -> str:
    return body.text + (TRUNCATION_NOTE if body.truncated else "")


def _markdown(body: Body) -> str:
    return html_to_markdown(body.text) + (TRUNCATION_NOTE if body.truncated else "")


def _txt(body: Body) -> str:
    return html_to_text(body.text) + (TRUNCATION_NOTE if body.truncated else "")


def _json(body: Body) -> str:
    if body.truncated:
        raise BodyTooLarge
    return stringify(json_parse(body.text))


CONVERTERS: dict[str, Callable[[Body], str]] = {
    "fetch_html": _html,
    "fetch_markdown": _markdown,
    "fetch_txt": _txt,
    "fetch_json": _json,
}


def _wire_safe(text: str) -> str:
    # A V8 message quoting ten characters of context can cut an emoji in half; the Python SDK
    # cannot send a lone surrogate, so it becomes U+FFFD.
    return _LONE_SURROGATE.sub("\ufffd", pair_surrogates(text))


async def run_tool(name: str, payload: Payload) -> tuple[str, bool]:
    """(result text, is_error) for one of CONVERTERS' tools."""
    try:
        body = await fetch_body(payload.url, payload.parsed, payload.headers)
    except FetchFailure as failure:
        return f"Failed to fetch {payload.url}: {failure.message}", True
    try:
        # Worker thread: converting a multi-megabyte page must not stall the protocol loop.
        return await anyio.to_thread.run_sync(CONVERTERS[name], body), False
    except JsError as error:
        return _wire_safe(error.message), True
    except BodyTooLarge:
        return f"Failed to fetch {payload.url}: response body exceeds {MAX_BODY_BYTES} bytes", True
    except RecursionError:
        return "Maximum call stack size exceeded", True  # V8's RangeError for the same depth problem
