"""Google's JSON error body for BigQuery and Storage: the kit's Google error family (decathlon.emulators.kit.google),
its Shape bound to the APIs the gcp emulator serves, and the JSON body both read."""
from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from decathlon.emulators.kit.discovery import Method
from decathlon.emulators.kit.errors import ApiError
from decathlon.emulators.kit.google import (STATUS, body, error_item, google_error, internal_error, invalid,
                                            not_found, too_large)
from decathlon.emulators.kit.google import shape as _shape
from decathlon.emulators.kit.google import unknown_path as _unknown_path

__all__ = ["STATUS", "SHAPE", "body", "error_item", "google_error", "internal_error", "invalid", "json_object",
           "not_found", "too_large", "unknown_path"]


def _known() -> tuple[Method, ...]:
    from decathlon.emulators.gcp.apis import known_methods
    return known_methods()


def unknown_path(request: web.Request) -> ApiError:
    return _unknown_path(request, _known)


SHAPE = _shape(_known)


async def json_object(request: web.Request, parse_error: str) -> dict[str, Any]:
    """A request's JSON object body ({} when empty); anything else is the API's 400 `parseError` (its wording
    differs between BigQuery and Storage)."""
    raw = await request.read()
    if not raw:
        return {}
    try:
        body = json.loads(raw)
    except ValueError:
        raise google_error(400, "parseError", parse_error) from None
    if not isinstance(body, dict):
        raise google_error(400, "parseError", parse_error)
    return body
