"""Which of Google's hosts serves which path (as decathlon.emulators.gcp.hosts does for Cloud): a request the front
relays for one host whose path belongs to another gets that host's own 404 page (the kit's); a request to the emulator
by address (the tests, a client pointed at it) is routed by path alone. The APIs want a Bearer token; the public pages
do not."""
from __future__ import annotations

from typing import Awaitable, Callable

from aiohttp import web

from decathlon.emulators.kit.errors import ApiError
from decathlon.emulators.kit.google import not_found_page
from decathlon.emulators.workspace.vendor import VENDOR

WWW, SHEETS, FORMS, DOCS, SHORT = (h.pattern for h in VENDOR.hosts)
PREFIXES: tuple[tuple[str, str], ...] = (
    ("/drive/", WWW), ("/upload/drive/", WWW), ("/calendar/", WWW), ("/v4/", SHEETS), ("/v1/forms", FORMS),
    ("/forms/", DOCS), ("/spreadsheets/", DOCS),
)
API_HOSTS = frozenset((WWW, SHEETS, FORMS))
HOSTS = frozenset(h.pattern for h in VENDOR.hosts)
LOGIN_REQUIRED = ("Request is missing required authentication credential. Expected OAuth 2 access token, login cookie "
                  "or other valid authentication credential. See "
                  "https://developers.google.com/identity/sign-in/web/devconsole-project.")


def host_of(path: str) -> str:
    for prefix, host in PREFIXES:
        if path == prefix.rstrip("/") or path.startswith(prefix):
            return host
    return SHORT


def unauthenticated() -> ApiError:
    return ApiError(401, {"error": {"code": 401, "message": LOGIN_REQUIRED, "errors": [
        {"message": "Login Required.", "domain": "global", "reason": "required", "location": "Authorization",
         "locationType": "header"}], "status": "UNAUTHENTICATED"}})


def _token(request: web.Request) -> str:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return request.query.get("access_token", "")


@web.middleware
async def by_host(request: web.Request,
                  handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
    host = (request.host or "").rsplit(":", 1)[0].strip("[]").lower().rstrip(".")
    owner = host_of(request.path)
    if host in HOSTS and owner != host:
        return not_found_page(request.path)
    if owner in API_HOSTS and not _token(request):
        raise unauthenticated()
    return await handler(request)
