"""WP_REST_Server's routing and responses: routes as case-insensitive regexes tried in registration
order, arguments checked before permissions, errors as `{"code","message","data"}`.

A path that matches no route, or a route without a handler for the method, is a 404
`rest_no_route`, as upstream. Handlers return a `Reply` (data, status, headers, pagination); every
route's responses carry an `Allow` header naming its methods, as `rest_send_allow_header` adds.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from .errors import RestError, no_route
from .model import User
from .params import Params, Schema, check
from .site import Site

READABLE = ("GET",)
CREATABLE = ("POST",)
EDITABLE = ("POST", "PUT", "PATCH")
DELETABLE = ("DELETE",)
ALL_ITEM_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]


@dataclass
class Request:
    site: Site
    method: str
    route: str
    params: Params
    query: dict[str, Any]
    body: bytes
    content_type: str
    headers: dict[str, str]
    scheme: str
    user: User | None = None
    key_permissions: str | None = None
    url_params: dict[str, str] = field(default_factory=dict)
    context_default: str = "view"
    files: dict[str, tuple[str, str | None, bytes]] = field(default_factory=dict)

    @property
    def context(self) -> str:
        value = self.params.get("context")
        return value if value in ("view", "edit", "embed") else self.context_default

    def home(self) -> str:
        return self.site.home(self.scheme)

    def rest_url(self, route: str) -> str:
        return f"{self.home()}/wp-json{route}"

    def id_param(self, name: str = "id") -> int:
        from .php import php_int
        return php_int(self.params.get(name, 0))


@dataclass
class Reply:
    data: Any
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)


Handler = Callable[[Request], Reply]
Permission = Callable[[Request], None]


@dataclass
class Endpoint:
    methods: tuple[str, ...]
    handler: Handler
    args: dict[str, Schema]
    permission: Permission | None


@dataclass
class Route:
    pattern: str
    regex: re.Pattern[str]
    endpoints: list[Endpoint] = field(default_factory=list)

    @property
    def allow(self) -> str:
        methods: list[str] = []
        for endpoint in self.endpoints:
            methods.extend(m for m in endpoint.methods if m not in methods)
        return ", ".join(methods)


class Router:
    def __init__(self) -> None:
        self.routes: list[Route] = []
        self._by_pattern: dict[str, Route] = {}

    def add(self, pattern: str, methods: tuple[str, ...], handler: Handler, args: dict[str, Schema] | None = None,
            permission: Permission | None = None) -> None:
        route = self._by_pattern.get(pattern)
        if route is None:
            route = Route(pattern, re.compile("^" + pattern + "$", re.IGNORECASE))
            self._by_pattern[pattern] = route
            self.routes.append(route)
        route.endpoints.append(Endpoint(methods, handler, args or {}, permission))

    def match(self, path: str, method: str) -> tuple[Route, Endpoint, dict[str, str]] | None:
        for route in self.routes:
            found = route.regex.match(path)
            if not found:
                continue
            for endpoint in route.endpoints:
                if method in endpoint.methods or (method == "HEAD" and "GET" in endpoint.methods):
                    return route, endpoint, {k: v for k, v in found.groupdict().items() if v is not None}
        return None

    def namespaces(self) -> list[str]:
        seen: list[str] = []
        for route in self.routes:
            parts = route.pattern.strip("/").split("/")
            if len(parts) >= 2:
                name = "/".join(parts[:2])
                if name not in seen:
                    seen.append(name)
        return seen


def paginate(items: list[Any], request: Request, page: int, per_page: int, base_route: str,
             total: int | None = None) -> tuple[list[Any], list[tuple[str, str]]]:
    """The page of `items`, with X-WP-Total, X-WP-TotalPages and Link headers as the CRUD controllers send."""
    total = len(items) if total is None else total
    per_page = max(per_page, 1)
    pages = -(-total // per_page)
    offset = request.params.get("offset")
    start = int(offset) if offset not in (None, "") else (page - 1) * per_page
    chunk = items[start:start + per_page]
    headers = [("X-WP-Total", str(total)), ("X-WP-TotalPages", str(pages))]
    base = request.rest_url(base_route)
    query = [(key, value) for key, value in request.query.items() if key != "page"]
    if page > 1:
        headers.append(("Link", f'<{_with_query(base, query + [("page", str(min(page - 1, max(pages, 1))))])}>; rel="prev"'))
    if pages > page:
        headers.append(("Link", f'<{_with_query(base, query + [("page", str(page + 1))])}>; rel="next"'))
    return chunk, headers


def _with_query(base: str, pairs: list[tuple[str, Any]]) -> str:
    parts: list[str] = []
    for key, value in pairs:
        if isinstance(value, list):
            parts.extend(f"{quote(key, safe='')}%5B{index}%5D={quote(str(item), safe='')}"
                         for index, item in enumerate(value))
        elif isinstance(value, dict):
            parts.extend(f"{quote(key, safe='')}%5B{quote(str(k), safe='')}%5D={quote(str(v), safe='')}"
                         for k, v in value.items())
        else:
            parts.append(f"{quote(key, safe='')}={quote(str(value), safe='')}")
    return base + ("?" + "&".join(parts) if parts else "")


def self_links(request: Request, route: str, collection: str, allow: list[str] | None = None,
               extra: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """`_links` with WordPress 6.7's targetHints on `self`."""
    links: dict[str, Any] = {
        "self": [{"href": request.rest_url(route), "targetHints": {"allow": allow or ALL_ITEM_METHODS}}],
        "collection": [{"href": request.rest_url(collection)}],
    }
    if extra:
        links.update(extra)
    return links


def filter_fields(data: Any, fields_param: Any) -> Any:
    """`rest_filter_response_fields`: keep only the `_fields` asked for (dotted paths reach inside)."""
    if fields_param in (None, ""):
        return data
    wanted = [part.strip() for part in (fields_param if isinstance(fields_param, list) else str(fields_param).split(","))
              if str(part).strip()]
    if not wanted:
        return data

    def pick(item: Any) -> Any:
        if not isinstance(item, dict):
            return item
        out: dict[str, Any] = {}
        for path in wanted:
            _copy_path(item, out, str(path).split("."))
        return out

    return [pick(item) for item in data] if isinstance(data, list) else pick(data)


def _copy_path(source: dict[str, Any], target: dict[str, Any], path: list[str]) -> None:
    head = path[0]
    if head not in source:
        return
    if len(path) == 1 or not isinstance(source[head], dict):
        target[head] = source[head]
        return
    inner = target.setdefault(head, {})
    if isinstance(inner, dict):
        _copy_path(source[head], inner, path[1:])


def dispatch(router: Router, request: Request) -> Reply:
    found = router.match(request.route, request.method)
    if found is None:
        raise no_route()
    route, endpoint, url_params = found
    request.url_params = url_params
    # URL captures sit below query and body in WordPress' parameter order.
    for key, value in url_params.items():
        if key not in request.params.values:
            request.params.values[key] = value
    defaults = {name: schema["default"] for name, schema in endpoint.args.items()
                if "default" in schema and request.params.values.get(name) is None}
    for name, value in defaults.items():
        request.params.values[name] = value
    check(endpoint.args, request.params)
    if endpoint.permission is not None:
        endpoint.permission(request)
    reply = endpoint.handler(request)
    reply.headers.append(("Allow", route.allow))
    return reply


class Unauthorized(RestError):
    pass


def auth_status(request: Request) -> int:
    """`rest_authorization_required_code`: 401 when nobody is logged in, 403 otherwise."""
    return 403 if request.user is not None else 401
