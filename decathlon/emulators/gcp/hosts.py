"""Which of Google's hosts serves which path, as Google routes them: a request the front relays for one host whose
path belongs to another (BigQuery's on storage.googleapis.com) gets that host's own 404 page, not the other API's
answer. A request to the emulator by address (a client pointed at it directly, the tests) is routed by path alone."""
from __future__ import annotations

from typing import Awaitable, Callable

from aiohttp import web

from decathlon.emulators.gcp.vendor import VENDOR
from decathlon.emulators.kit.google import not_found_page

BIGQUERY, STORAGE, OAUTH2, RESOURCE_MANAGER = (h.pattern for h in VENDOR.hosts)
# First match wins; a path no prefix names is Storage's (its XML API serves /BUCKET/OBJECT).
PREFIXES: tuple[tuple[str, str], ...] = (
    ("/bigquery/", BIGQUERY), ("/upload/bigquery/", BIGQUERY),
    ("/storage/", STORAGE), ("/upload/storage/", STORAGE), ("/download/storage/", STORAGE),
    ("/token", OAUTH2), ("/oauth2/", OAUTH2),
    ("/v1/projects", RESOURCE_MANAGER), ("/v3/projects", RESOURCE_MANAGER),
)
HOSTS = frozenset(h.pattern for h in VENDOR.hosts)
__all__ = ["HOSTS", "PREFIXES", "by_host", "host_of", "not_found_page"]


def host_of(path: str) -> str:
    for prefix, host in PREFIXES:
        if path == prefix.rstrip("/") or path.startswith(prefix):
            return host
    return STORAGE


@web.middleware
async def by_host(request: web.Request,
                  handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
    host = (request.host or "").rsplit(":", 1)[0].strip("[]").lower().rstrip(".")
    if host in HOSTS and host_of(request.path) != host:
        return not_found_page(request.path)
    return await handler(request)
