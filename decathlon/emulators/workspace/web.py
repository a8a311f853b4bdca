"""What every API of the emulator reads from a request the same way: its JSON body, its `fields` selection, and the
answer written as Google writes JSON."""
from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from decathlon.emulators.kit.errors import ApiError
from decathlon.emulators.kit.google import google_error, parameter_error, status_error
from decathlon.emulators.workspace import fields

BAD_JSON = status_error(400, "Invalid JSON payload received.")  # Sheets' and Forms' answer to a body that is no JSON


async def json_body(request: web.Request, on_error: ApiError | None = None) -> dict[str, Any]:
    """The request's JSON object ({} when empty); anything else is a 400 (`on_error`, or Drive's parseError)."""
    raw = await request.read()
    if not raw.strip():
        return {}
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise on_error or google_error(400, "parseError", "Parse Error") from None
    if not isinstance(doc, dict):
        raise on_error or google_error(400, "parseError", "Parse Error")
    return doc


def bad(message: str) -> ApiError:
    """Sheets' and Forms' 400 (the newer APIs' shape: a status, no list of errors)."""
    return status_error(400, message)


def selection(request: web.Request) -> fields.Tree | None:
    try:
        return fields.parse(request.query.get("fields", ""))
    except fields.FieldsError:
        raise parameter_error(400, "invalidParameter",
                              f"Invalid field selection {request.query.get('fields', '')}", "fields") from None


def answer(doc: Any, request: web.Request | None = None, status: int = 200) -> web.Response:
    if request is not None:
        doc = fields.select(doc, selection(request))
    # Compact: the C encoder (an indented dump is pure Python, several times slower); clients parse either.
    return web.Response(status=status, text=json.dumps(doc, ensure_ascii=False),
                        content_type="application/json", charset="UTF-8")


def flag(request: web.Request, name: str, default: bool = False) -> bool:
    value = request.query.get(name)
    return default if value is None else value.lower() == "true"
