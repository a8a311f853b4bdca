"""Google's JSON error body, shared by every Google REST API an emulator serves (BigQuery, Cloud Storage, Drive,
Sheets, Forms, Calendar): `{"error": {"code", "message", "errors": [{"message", "domain", "reason"}], "status"}}`.
Reasons are the APIs' own (notFound, duplicate, invalidQuery, insufficientFilePermissions, ...).

`shape(known)` is the kit Shape of such an emulator: `known` gives the methods of the APIs it serves (from Google's
discovery documents, decathlon.emulators.kit.discovery), so that a method Google has and the emulator lacks is a 501
in Google's shape, never taken for a path that does not exist."""
from __future__ import annotations

import html
from typing import Any, Callable

from aiohttp import web

from decathlon.emulators.kit.discovery import Method, find
from decathlon.emulators.kit.errors import ApiError, Shape

STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
          405: "METHOD_NOT_ALLOWED", 409: "ALREADY_EXISTS", 412: "FAILED_PRECONDITION", 416: "OUT_OF_RANGE",
          429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 501: "UNIMPLEMENTED"}

KnownMethods = Callable[[], tuple[Method, ...]]


def error_item(reason: str, message: str, location: str | None = None,
               location_type: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"message": message, "domain": "global", "reason": reason}
    if location:
        item["location"] = location
        item["locationType"] = location_type or ("other" if location != "query" else "parameter")
    return item


def body(code: int, reason: str, message: str, location: str | None = None,
         location_type: str | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message,
                      "errors": [error_item(reason, message, location, location_type)],
                      "status": STATUS.get(code, "UNKNOWN")}}


def google_error(code: int, reason: str, message: str, location: str | None = None,
                 location_type: str | None = None) -> ApiError:
    return ApiError(code, body(code, reason, message, location, location_type))


def status_error(code: int, message: str) -> ApiError:
    """The newer APIs' shape (Sheets v4, Forms v1): no `errors` list, the status names the kind."""
    return ApiError(code, {"error": {"code": code, "message": message, "status": STATUS.get(code, "UNKNOWN")}})


def parameter_error(code: int, reason: str, message: str, parameter: str) -> ApiError:
    """A request parameter refused (Drive's `q`, a `pageToken`): located as a parameter, as Drive and Calendar do."""
    return google_error(code, reason, message, parameter, "parameter")


def not_found(message: str) -> ApiError:
    return google_error(404, "notFound", message)


def invalid(message: str) -> ApiError:
    return google_error(400, "invalid", message)


def internal_error(request: web.Request, message: str) -> ApiError:
    # The detail stays in the service log; the client sees Google's generic backend error.
    return google_error(500, "backendError", "Backend error. Please try again.")


def unknown_path(request: web.Request, known: KnownMethods) -> ApiError:
    """The router's verdict on a request no route answered, for an emulator of the APIs whose methods `known` gives:
    a known path called with a method it does not take is a 405; a method Google has, a 501; else a 404."""
    if isinstance(getattr(request.match_info, "http_exception", None), web.HTTPMethodNotAllowed):
        return google_error(405, "methodNotAllowed", f"Method Not Allowed: {request.method} {request.path}")
    method = find(known(), request.method, request.path)
    if method is not None:
        # Said so, in Google's shape, rather than as a path that does not exist (which would send an agent looking
        # for another).
        return google_error(501, "notImplemented",
                            f"Method not implemented: {method.id} is not emulated by decathlon")
    return google_error(404, "notFound", f"Not Found: {request.method} {request.path}")


def too_large(request: web.Request) -> ApiError:
    """Google answers a body over its limit with a 400 of its own, not a bare 413."""
    return google_error(400, "badRequest", f"Request payload size exceeds the limit: {request.client_max_size} bytes.")


def shape(known: KnownMethods) -> Shape:
    return Shape(unknown=lambda request: unknown_path(request, known), too_large=too_large, internal=internal_error)


def not_found_page(path: str) -> web.Response:
    """Google's front end's 404 for a URL no service of that host has."""
    page = ("<!DOCTYPE html>\n<html lang=en>\n  <meta charset=utf-8>\n  <title>Error 404 (Not Found)!!1</title>\n"
            "  <p><b>404.</b> <ins>That\u2019s an error.</ins>\n"
            f"  <p>The requested URL <code>{html.escape(path[:2000])}</code> was not found on this server.  "
            "<ins>That\u2019s all we know.</ins>\n")
    return web.Response(status=404, text=page, content_type="text/html", charset="utf-8")
