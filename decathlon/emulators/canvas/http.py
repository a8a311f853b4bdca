"""The request plumbing every endpoint shares: routes, the per-request context, JSON out.

A handler is `async def h(ctx: Ctx) -> Reply` registered on a `Routes` table with its method and
path (aiohttp's `{name}` syntax). The wrapper authenticates the caller (Bearer header or
`access_token`, like Canvas), merges query and body parameters into one Rails-style dict, applies
`as_user_id` for admins, and turns an `ApiError` into Canvas's error body.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Sequence

from aiohttp import web

from decathlon.emulators.canvas import errors
from decathlon.emulators.canvas.errors import ApiError
from decathlon.emulators.canvas.model import User
from decathlon.emulators.canvas.paging import paginate
from decathlon.emulators.canvas.params import parse_body
from decathlon.emulators.kit.params import as_int, as_list, deep_merge, nest
from decathlon.emulators.canvas.store import Store

STORE_KEY = web.AppKey("canvas_store", Store)
BASE_KEY = web.AppKey("canvas_html_base", list)

JSON_TYPE = "application/json; charset=utf-8"


@dataclass
class Reply:
    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    content_type: str = JSON_TYPE


@dataclass
class Ctx:
    request: web.Request
    store: Store
    user: User
    params: dict
    html_base: str          # Canvas's configured domain: where html_url and file urls point
    real_user: User | None = None

    def param(self, name: str, default: Any = None) -> Any:
        v = self.params.get(name)
        return default if v is None else v

    def list_param(self, name: str) -> list:
        return as_list(self.params.get(name))

    def includes(self) -> set[str]:
        return {str(x) for x in as_list(self.params.get("include")) if not isinstance(x, (dict, list))}

    def id(self, name: str) -> int:
        """A numeric path id; anything else is a resource that does not exist."""
        n = as_int(self.request.match_info.get(name))
        if n is None:
            raise errors.not_found()
        return n

    def api_base(self) -> str:
        return f"{self.html_base}/api/v1"

    def paged(self, items: Sequence, render: Callable[[Any], Any] | None = None, default_per_page: int = 10,
              max_per_page: int = 100) -> Reply:
        page = paginate(self.request, items, default_per_page, max_per_page)
        body = [render(x) for x in page.items] if render else list(page.items)
        return Reply(body, headers={"Link": page.link})


Handler = Callable[[Ctx], Awaitable[Any]]


@dataclass
class Route:
    method: str
    path: str
    handler: Handler
    auth: bool = True


class Routes:
    def __init__(self) -> None:
        self.items: list[Route] = []

    def add(self, method: str, path: str, auth: bool = True) -> Callable[[Handler], Handler]:
        def deco(fn: Handler) -> Handler:
            self.items.append(Route(method, path, fn, auth))
            return fn
        return deco

    def get(self, path: str, auth: bool = True):
        return self.add("GET", path, auth)

    def post(self, path: str, auth: bool = True):
        return self.add("POST", path, auth)

    def put(self, path: str, auth: bool = True):
        return self.add("PUT", path, auth)

    def delete(self, path: str, auth: bool = True):
        return self.add("DELETE", path, auth)


def token_of(request: web.Request, params: dict) -> str | None:
    header = request.headers.get("Authorization", "")
    if header:
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    token = params.get("access_token")
    return str(token) if isinstance(token, (str, int)) and str(token) else None


async def read_params(request: web.Request) -> dict:
    params = nest(request.rel_url.query.items())
    if request.can_read_body and not request.content_type.startswith("multipart/"):
        raw = await request.read()
        deep_merge(params, parse_body(request.headers.get("Content-Type", ""), raw))
    return params


def to_response(reply: Any) -> web.StreamResponse:
    if isinstance(reply, web.StreamResponse):
        return reply
    if not isinstance(reply, Reply):
        reply = Reply(reply)
    if reply.raw is not None:
        return web.Response(body=reply.raw, status=reply.status,
                            headers={**reply.headers, "Content-Type": reply.content_type})
    text = json.dumps(reply.body, ensure_ascii=False, separators=(",", ":"))
    return web.Response(text=text, status=reply.status, headers={**reply.headers, "Content-Type": JSON_TYPE})


def error_response(err: ApiError) -> web.StreamResponse:
    return to_response(Reply(err.body, err.status, dict(err.headers)))


def wrap(route: Route) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def handle(request: web.Request) -> web.StreamResponse:
        store = request.app[STORE_KEY]
        try:
            params = await read_params(request)
            user: User | None = None
            real: User | None = None
            if route.auth:
                token = token_of(request, params)
                if token is None:
                    raise errors.unauthenticated()
                user = store.user_for_token(token)
                if user is None:
                    raise errors.invalid_token()
                as_user = params.get("as_user_id")
                if as_user not in (None, ""):
                    target = store.users.get(as_int(as_user, -1) or -1)
                    if not user.admin:
                        raise errors.unauthorized()
                    if target is None:
                        raise errors.not_found()
                    real, user = user, target
            ctx = Ctx(request, store, user, params, request.app[BASE_KEY][0], real)  # type: ignore[arg-type]
            return to_response(await route.handler(ctx))
        except ApiError as err:
            return error_response(err)
    return handle
