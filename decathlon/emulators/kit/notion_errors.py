"""Notion's error body, for the Notion emulator to come: `{"object": "error", "status", "code", "message",
"request_id"}` with Notion's own codes (its API reference, "Status codes"). The SDKs (notion-client, @notionhq/client)
read `code` and `message` from it; an emulator raises `notion_error(...)` and hands `SHAPE` to kit.errors.middleware,
which answers what no handler does: an unknown path as Notion does (400 `invalid_request_url`, not a 404: a 404 from
Notion means an object the token cannot see), a body over the cap as a validation error, its own bug as Notion's
500."""
from __future__ import annotations

import uuid

from aiohttp import web

from decathlon.emulators.kit.errors import ApiError, Shape

CODES = {"invalid_json": 400, "invalid_request_url": 400, "invalid_request": 400, "validation_error": 400,
         "missing_version": 400, "unauthorized": 401, "restricted_resource": 403, "object_not_found": 404,
         "conflict_error": 409, "rate_limited": 429, "internal_server_error": 500, "service_unavailable": 503}


def notion_error(code: str, message: str) -> ApiError:
    if code not in CODES:
        raise ValueError(f"not one of Notion's error codes: {code!r}")
    status = CODES[code]
    return ApiError(status, {"object": "error", "status": status, "code": code, "message": message,
                             "request_id": str(uuid.uuid4())})


def not_found(object_id: str) -> ApiError:
    return notion_error("object_not_found", f"Could not find object with ID: {object_id}. Make sure the relevant "
                                            "pages and databases are shared with your integration.")


def _unknown(request: web.Request) -> ApiError:
    return notion_error("invalid_request_url", "Invalid request URL.")


def _too_large(request: web.Request) -> ApiError:
    return notion_error("validation_error", f"Request body too large: the limit is {request.client_max_size} bytes.")


def _internal(request: web.Request, detail: str) -> ApiError:
    # The detail stays in the emulator's log: Notion never says more than this.
    return notion_error("internal_server_error", "Unexpected error occurred.")


SHAPE = Shape(unknown=_unknown, too_large=_too_large, internal=_internal)
