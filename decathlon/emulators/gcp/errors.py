"""Google's JSON error body, shared by BigQuery and Storage: `{"error": {"code", "message", "errors": [{"message",
"domain", "reason"}], "status"}}`. Reasons are the vendors' own (notFound, duplicate, invalidQuery, ...)."""
from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from decathlon.emulators.kit.errors import ApiError, Shape

STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
          405: "METHOD_NOT_ALLOWED", 409: "ALREADY_EXISTS", 412: "FAILED_PRECONDITION", 416: "OUT_OF_RANGE",
          500: "INTERNAL", 501: "UNIMPLEMENTED"}


def error_item(reason: str, message: str, location: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"message": message, "domain": "global", "reason": reason}
    if location:
        item["location"] = location
        item["locationType"] = "other" if location != "query" else "parameter"
    return item


def body(code: int, reason: str, message: str, location: str | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "errors": [error_item(reason, message, location)],
                      "status": STATUS.get(code, "UNKNOWN")}}


def google_error(code: int, reason: str, message: str, location: str | None = None) -> ApiError:
    return ApiError(code, body(code, reason, message, location))


def not_found(message: str) -> ApiError:
    return google_error(404, "notFound", message)


def invalid(message: str) -> ApiError:
    return google_error(400, "invalid", message)


def internal_error(request: web.Request, message: str) -> ApiError:
    # The detail stays in the service log; the client sees Google's generic backend error.
    return google_error(500, "backendError", "Backend error. Please try again.")


def unknown_path(request: web.Request) -> ApiError:
    # The router's verdict: a known path called with a method it does not take is a 405, whose body says so too.
    if isinstance(getattr(request.match_info, "http_exception", None), web.HTTPMethodNotAllowed):
        return google_error(405, "methodNotAllowed", f"Method Not Allowed: {request.method} {request.path}")
    from decathlon.emulators.gcp.apis import known_methods
    from decathlon.emulators.kit.discovery import find
    method = find(known_methods(), request.method, request.path)
    if method is not None:
        # Google has it; the emulator does not answer it. Said so, in Google's shape, rather than as a path that
        # does not exist (which would send an agent looking for another).
        return google_error(501, "notImplemented",
                            f"Method not implemented: {method.id} is not emulated by decathlon")
    return google_error(404, "notFound", f"Not Found: {request.method} {request.path}")


def too_large(request: web.Request) -> ApiError:
    """Google answers a body over its limit with a 400 of its own, not a bare 413."""
    return google_error(400, "badRequest", f"Request payload size exceeds the limit: {request.client_max_size} bytes.")


SHAPE = Shape(unknown=unknown_path, too_large=too_large, internal=internal_error)


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
