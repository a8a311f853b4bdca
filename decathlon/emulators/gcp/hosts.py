"""Which of Google's hosts serves which path, as Google routes them: a request the front relays for one host whose
path belongs to another (BigQuery's on storage.googleapis.com) gets that host's own 404 page, not the other API's
answer. A request to the emulator by address (a client pointed at it directly, the tests) is routed by path alone."""
from __future__ import annotations

import html
from typing import Awaitable, Callable

from aiohttp import web

from decathlon.emulators.gcp.vendor import VENDOR

BIGQUERY, STORAGE, OAUTH2, RESOURCE_MANAGER = (h.pattern for h in VENDOR.hosts)
# First match wins; a path no prefix names is Storage's (its XML API serves /BUCKET/OBJECT).
PREFIXES: tuple[tuple[str, str], ...] = (
    ("/bigquery/", BIGQUERY), ("/upload/bigquery/", BIGQUERY),
    ("/storage/", STORAGE), ("/upload/storage/", STORAGE), ("/download/storage/", STORAGE),
    ("/token", OAUTH2), ("/oauth2/", OAUTH2),
    ("/v1/projects", RESOURCE_MANAGER), ("/v3/projects", RESOURCE_MANAGER),
)
HOSTS = frozenset(h.pattern for h in VENDOR.hosts)


def host_of(path: str) -> str:
    for prefix, host in PREFIXES:
        if path == prefix.rstrip("/") or path.startswith(prefix):
            return host
    return STORAGE


def not_found_page(path: str) -> web.Response:
    """Google's front end's 404 for a URL no service of that host has."""
    body = ("<!DOCTYPE html>\n<html lang=en>\n  <meta charset=utf-8>\n  <title>Error 404 (Not Found)!!1</title>\n"
            "  <p><b>404.</b> <ins>That\u2019s an error.</ins>\n"
            f"  <p>The requested URL <code>{html.escape(path[:2000])}</code> was not found on this server.  "
            "<ins>That\u2019s all we know.</ins>\n")
    return web.Response(status=404, text=body, content_type="text/html", charset="utf-8")


@web.middleware
async def by_host(request: web.Request,
                  handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
    host = (request.host or "").rsplit(":", 1)[0].strip("[]").lower().rstrip(".")
    if host in HOSTS and host_of(request.path) != host:
        return not_found_page(request.path)
    return await handler(request)
