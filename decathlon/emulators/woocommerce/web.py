"""The HTTP front: which site a path belongs to, REST versus pages, parameters, JSON as PHP writes it.

`/storeN/...` is store N's site and anything else the main site, as in a subfolder multisite.
REST requests arrive as `/wp-json/<route>` or `/?rest_route=<route>`; the rest is WordPress' pages:
`wp-login.php` (the login form and its cookie), `wp-admin/` (the dashboard, or a redirect to the
login), `wp-admin/admin-ajax.php?action=rest-nonce` (the REST nonce of the logged-in user) and
uploaded files under `wp-content/uploads/`. Query strings are read as PHP reads them (`a[]=x`,
`a[b]=y`), bodies as JSON, form fields, multipart files or raw bytes. JSON is written as
`wp_json_encode` writes it: ASCII only, slashes escaped. An exception inside a handler becomes
WordPress' own "critical error" response (500), never a traceback.
"""
from __future__ import annotations

import json
import re
from typing import Any, Awaitable, Callable
from urllib.parse import quote, unquote

from aiohttp import web

from decathlon.emulators.kit.errors import ApiError, Shape
from decathlon.emulators.kit.params import nest, parse_query

from . import auth, php
from .errors import RestError
from .params import merge
from .rest import Reply, Request, Router, dispatch, filter_fields
from .site import Network, Site

JSON_TYPE = "application/json; charset=UTF-8"
MAX_BODY = 64 * 1024 * 1024
CRITICAL = ("<p>There has been a critical error on this website.</p><p><a href=\"https://wordpress.org/documentation/"
            "article/faq-troubleshooting/\">Learn more about troubleshooting WordPress.</a></p>")
_MIME_BY_EXT = {"jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif",
                "webp": "image/webp", "pdf": "application/pdf", "txt": "text/plain", "csv": "text/csv",
                "json": "application/json", "svg": "image/svg+xml"}


def encode_json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=True, separators=(",", ":")).replace("/", "\\/").encode("ascii")


@web.middleware
async def apache_headers(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) \
        -> web.StreamResponse:
    response = await handler(request)
    # Upstream's Apache and PHP name themselves; aiohttp's own Server header would give us away.
    response.headers["Server"] = "Apache/2.4.62 (Debian)"
    response.headers["X-Powered-By"] = "PHP/8.2.29"
    return response


class Front:
    """The aiohttp handler for one network."""

    def __init__(self, network: Network, router: Router) -> None:
        self.network = network
        self.router = router

    def shape(self) -> Shape:
        """What WordPress answers where no handler does: its router takes every path (a 404 page or
        `rest_no_route`), so only a body over the cap and our own bug reach the kit's middleware."""
        return Shape(unknown=lambda request: ApiError(404, {"code": "rest_no_route", "data": {"status": 404},
                                                            "message": "No route was found matching the URL and "
                                                                       "request method."}),
                     too_large=lambda request: ApiError(413, {"code": "rest_upload_file_too_big",
                                                              "message": "The uploaded file is too large.",
                                                              "data": {"status": 413}}),
                     # a bug must look like WordPress' fatal-error page, not a traceback
                     internal=lambda request, message: ApiError(500, {"code": "internal_server_error",
                                                                      "message": CRITICAL, "data": {"status": 500},
                                                                      "additional_errors": []}),
                     respond=lambda exc: self._json(exc.body, exc.status))

    def _resolve_site(self, path: str) -> tuple[Site, str]:
        segments = path.lstrip("/").split("/", 1)
        if segments[0].startswith("store"):
            site = self.network.site_by_slug(segments[0])
            if site is not None:
                return site, "/" + (segments[1] if len(segments) > 1 else "")
        return self.network.root(), path or "/"

    async def handle(self, request: web.Request) -> web.StreamResponse:
        site, path = self._resolve_site(request.path)
        query = parse_query(request.query_string, "php")
        if path.startswith("/wp-json"):
            rest = path[len("/wp-json"):]
            if rest and not rest.startswith("/"):
                return self._page(404, "Page not found")
            return await self._rest(request, site, rest.rstrip("/") or "/", query)
        if "rest_route" in query and path in ("/", "/index.php"):
            route = php.php_string(query.pop("rest_route"))
            return await self._rest(request, site, route.rstrip("/") or "/", query)
        if path == "/wp-login.php":
            return await self._login(request, site, query)
        if path.startswith("/wp-admin"):
            return await self._admin(request, site, path, query)
        if path.startswith("/wp-content/uploads/") and request.method in ("GET", "HEAD"):
            data = site.uploads.get(path[len("/wp-content/uploads/"):])
            if data is None:
                return self._page(404, "Page not found")
            ext = path.rsplit(".", 1)[-1].lower()
            return web.Response(body=data, content_type=_MIME_BY_EXT.get(ext, "application/octet-stream"))
        if path in ("/", "/index.php"):
            return self._page(200, site.title)
        return self._page(404, "Page not found")

    # --- REST ----------------------------------------------------------------------------

    async def _rest(self, request: web.Request, site: Site, route: str, query: dict[str, Any]) -> web.StreamResponse:
        headers = {key.lower(): value for key, value in request.headers.items()}
        method = request.method.upper()
        override = query.get("_method") or headers.get("x-http-method-override")
        if isinstance(override, str) and override:
            method = override.upper()
        body = await request.read() if request.can_read_body else b""
        content_type = headers.get("content-type", "")
        json_params: dict[str, Any] = {}
        form_params: dict[str, Any] = {}
        files: dict[str, tuple[str, str | None, bytes]] = {}
        mime = content_type.split(";", 1)[0].strip().lower()
        if mime == "application/json" and body.strip():
            try:
                parsed = json.loads(body)
            except (ValueError, UnicodeDecodeError):
                return self._error(RestError("rest_invalid_json", "Invalid JSON body passed.", 400,
                                             json_error_code=4, json_error_message="Syntax error"), query)
            if isinstance(parsed, dict):
                json_params = parsed
            elif isinstance(parsed, list):
                json_params = {str(index): item for index, item in enumerate(parsed)}
        elif mime == "application/x-www-form-urlencoded":
            form_params = parse_query(body.decode("utf-8", "replace"), "php")
        elif mime == "multipart/form-data":
            form_params, files = await _multipart(request, content_type, body)
        if method == "OPTIONS":
            return self._options(route)
        cookies = {key: unquote(value) for key, value in request.cookies.items()}
        identity = auth.authenticate(site, route, method, headers, query, cookies,
                                     request.path[len("/" + site.slug) if site.slug else 0:])
        if identity.error is not None:
            return self._error(identity.error, query)
        params = merge([{}, query, form_params, json_params])
        rest_request = Request(site, "GET" if method == "HEAD" else method, route, params, query, body, content_type,
                               headers, auth.scheme_for(headers), identity.user, identity.key_permissions, files=files)
        try:
            if route == "/" and method in ("GET", "HEAD"):
                reply = self._index(rest_request)
            elif re.fullmatch(r"/[\w-]+/v\d+", route) and method in ("GET", "HEAD"):
                reply = self._namespace(rest_request, route.lstrip("/"))
            else:
                reply = dispatch(self.router, rest_request)
        except RestError as error:
            return self._error(error, query)
        data = filter_fields(reply.data, query.get("_fields"))
        if "_envelope" in query:
            return self._json({"body": data, "status": reply.status,
                               "headers": {name: value for name, value in reply.headers}}, 200)
        response = self._json(data, reply.status, reply.headers, head=method == "HEAD")
        return response

    def _index(self, request: Request) -> Reply:
        site = request.site
        return Reply({"name": site.title, "description": "", "url": request.home(), "home": request.home(),
                      "gmt_offset": "0", "timezone_string": "", "page_for_posts": 0, "page_on_front": 0,
                      "show_on_front": "posts", "namespaces": ["oembed/1.0", "wc/v3", "wp/v2", "wp-site-health/v1"],
                      "authentication": [], "site_logo": 0, "site_icon": 0, "site_icon_url": "",
                      "routes": {route.pattern: {"methods": route.allow.split(", ")} for route in self.router.routes},
                      "_links": {"help": [{"href": "https://developer.wordpress.org/rest-api/"}]}})

    def _namespace(self, request: Request, namespace: str) -> Reply:
        routes = {r.pattern: {"namespace": namespace, "methods": r.allow.split(", ")}
                  for r in self.router.routes if r.pattern.startswith(f"/{namespace}/")}
        if not routes:
            raise RestError("rest_invalid_namespace", "The specified namespace could not be found.", 404)
        return Reply({"namespace": namespace, "routes": routes,
                      "_links": {"up": [{"href": request.rest_url("/")}]}})

    def _options(self, route: str) -> web.Response:
        for candidate in self.router.routes:
            found = candidate.regex.match(route)
            if found:
                methods = candidate.allow.split(", ")
                data = {"namespace": "/".join(candidate.pattern.strip("/").split("/")[:2]), "methods": methods,
                        "endpoints": [{"methods": list(e.methods), "args": {}} for e in candidate.endpoints]}
                return self._json(data, 200, [("Allow", candidate.allow)])
        return self._json([], 200)

    def _json(self, data: Any, status: int, headers: list[tuple[str, str]] | None = None,
              head: bool = False) -> web.Response:
        response = web.Response(body=b"" if head else encode_json(data), status=status)
        response.headers["Content-Type"] = JSON_TYPE
        response.headers["X-Robots-Tag"] = "noindex"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Access-Control-Expose-Headers"] = "X-WP-Total, X-WP-TotalPages, Link"
        for name, value in headers or []:
            response.headers.add(name, value)
        return response

    def _error(self, error: RestError, query: dict[str, Any]) -> web.Response:
        if "_envelope" in query:
            return self._json({"body": error.body(), "status": error.http_status, "headers": {}}, 200)
        return self._json(error.body(), error.http_status)

    # --- pages ---------------------------------------------------------------------------

    def _page(self, status: int, title: str, body: str = "", headers: list[tuple[str, str]] | None = None) -> web.Response:
        html = (f"<!DOCTYPE html>\n<html lang=\"en-US\">\n<head>\n<meta charset=\"UTF-8\" />\n<title>{php.esc_html(title)}"
                f"</title>\n</head>\n<body>\n{body or '<h1>' + php.esc_html(title) + '</h1>'}\n</body>\n</html>\n")
        response = web.Response(text=html, status=status, content_type="text/html", charset="UTF-8")
        for name, value in headers or []:
            response.headers.add(name, value)
        return response

    def _login_form(self, site: Site, message: str = "") -> str:
        action = site.home("http") + "/wp-login.php"
        error = f'<div id="login_error" class="notice notice-error"><p>{message}</p></div>\n' if message else ""
        return (f'<div id="login">{error}<form name="loginform" id="loginform" action="{action}" method="post">\n'
                '<p><label for="user_login">Username or Email Address</label>\n'
                '<input type="text" name="log" id="user_login" class="input" value="" size="20" /></p>\n'
                '<p><label for="user_pass">Password</label>\n'
                '<input type="password" name="pwd" id="user_pass" class="input" value="" size="20" /></p>\n'
                '<p class="submit"><input type="submit" name="wp-submit" id="wp-submit" value="Log In" />\n'
                f'<input type="hidden" name="redirect_to" value="{site.home("http")}/wp-admin/" />\n'
                '<input type="hidden" name="testcookie" value="1" /></p>\n</form></div>')

    async def _login(self, request: web.Request, site: Site, query: dict[str, Any]) -> web.Response:
        test_cookie = ("Set-Cookie", "wordpress_test_cookie=WP%20Cookie%20check; path=/")
        if query.get("action") == "logout":
            return web.Response(status=302, headers={"Location": site.home("http") + "/wp-login.php?loggedout=true",
                                                     "Set-Cookie": f"{auth.LOGGED_IN_COOKIE}=+; expires=Thu, 01 Jan 1970 "
                                                                   "00:00:00 GMT; path=/"})
        if request.method != "POST":
            return self._page(200, f"Log In &lsaquo; {site.title} &#8212; WordPress", self._login_form(site),
                              [test_cookie])
        body = await request.read()
        form = parse_query(body.decode("utf-8", "replace"), "php")
        login = php.sanitize_text_field(form.get("log", ""))
        password = php.php_string(form.get("pwd", ""))
        if form.get("testcookie") and "wordpress_test_cookie" not in request.cookies:
            message = ("<strong>Error:</strong> Cookies are blocked or not supported by your browser. You must "
                       "<a href=\"https://developer.wordpress.org/advanced-administration/wordpress/cookies/\">"
                       "enable cookies</a> to use WordPress.")
            return self._page(200, "Log In", self._login_form(site, message), [test_cookie])
        user = self.network.user_by_login(login) or (self.network.user_by_email(login) if "@" in login else None)
        if not login or not password:
            message = ("<strong>Error:</strong> The username field is empty." if not login
                       else "<strong>Error:</strong> The password field is empty.")
            return self._page(200, "Log In", self._login_form(site, message), [test_cookie])
        if user is None:
            message = (f"<strong>Error:</strong> The username <strong>{php.esc_html(login)}</strong> is not registered "
                       "on this site. If you are unsure of your username, try your email address instead.")
            return self._page(200, "Log In", self._login_form(site, message), [test_cookie])
        if user.password != password:
            message = (f"<strong>Error:</strong> The password you entered for the username <strong>{php.esc_html(login)}"
                       "</strong> is incorrect. <a href=\"" + site.home("http") + "/wp-login.php?action=lostpassword\">"
                       "Lost your password?</a>")
            return self._page(200, "Log In", self._login_form(site, message), [test_cookie])
        target = php.php_string(form.get("redirect_to")) or site.home("http") + "/wp-admin/"
        cookie = f"{auth.LOGGED_IN_COOKIE}={quote(auth.login_cookie_value(user), safe='')}; path=/; HttpOnly"
        response = web.Response(status=302, headers={"Location": target})
        response.headers.add("Set-Cookie", cookie)
        return response

    async def _admin(self, request: web.Request, site: Site, path: str, query: dict[str, Any]) -> web.Response:
        cookies = {key: unquote(value) for key, value in request.cookies.items()}
        user = auth.user_from_cookie(site, cookies)
        if path == "/wp-admin/admin-ajax.php":
            action = query.get("action")
            if action is None and request.method == "POST":
                form = parse_query((await request.read()).decode("utf-8", "replace"), "php")
                action = form.get("action")
            if action == "rest-nonce" and user is not None:
                return web.Response(text=auth.rest_nonce(site, user), content_type="text/html", charset="UTF-8")
            return web.Response(text="0", status=400, content_type="text/html", charset="UTF-8")
        if user is None:
            target = site.home("http") + path
            location = f"{site.home('http')}/wp-login.php?redirect_to={quote(target, safe='')}&reauth=1"
            return web.Response(status=302, headers={"Location": location})
        if not (user.super_admin or site.blog_id in user.roles):
            return self._page(403, "WordPress &rsaquo; Error",
                              "<p>Sorry, you are not allowed to access this page.</p>")
        return self._page(200, f"Dashboard &lsaquo; {site.title} &#8212; WordPress",
                          f"<h1>Dashboard</h1><p>Howdy, {php.esc_html(user.display_name)}</p>")


async def _multipart(request: web.Request, content_type: str,
                     body: bytes) -> tuple[dict[str, Any], dict[str, tuple[str, str | None, bytes]]]:
    """Form fields and files of a multipart body (already read into `body`)."""
    from email.parser import BytesParser
    from email.policy import HTTP

    message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body)
    fields: list[tuple[str, str]] = []
    files: dict[str, tuple[str, str | None, bytes]] = {}
    if not message.is_multipart():
        return {}, {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        filename = part.get_filename()
        payload = part.get_payload(decode=True) or b""
        assert isinstance(payload, bytes)  # decode=True: a leaf part's bytes, None (so b"") for a nested multipart
        if filename is not None:
            files[str(name)] = (str(filename), part.get_content_type(), payload)
        else:
            fields.append((str(name), payload.decode("utf-8", "replace")))
    return nest(fields, "php"), files
