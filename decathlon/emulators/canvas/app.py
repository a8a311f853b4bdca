"""The aiohttp application: every endpoint's route, plus the answers for everything else.

A path or method Canvas does not have answers 404 with Canvas's "resource does not exist" body; a
fault of our own answers Canvas's 500 body with an error report id and no traceback (the traceback
goes to stderr, the service's log).
"""
from __future__ import annotations

import sys

from aiohttp import web

from decathlon.emulators.canvas import errors
from decathlon.emulators.canvas.api import RAW_ROUTES, ROUTE_TABLES
from decathlon.emulators.canvas.http import BASE_KEY, STORE_KEY, error_response, wrap
from decathlon.emulators.canvas.store import Store
from decathlon.emulators.kit import errors as kit_errors
from decathlon.emulators.kit.errors import ApiError, Shape

MAX_BODY = 256 * 1024 * 1024   # file uploads go through the same server


ACCESS_LOG_KEY = web.AppKey("canvas_access_log", bool)


@web.middleware
async def access_log(request: web.Request, handler) -> web.StreamResponse:
    response = await handler(request)
    if request.app[ACCESS_LOG_KEY]:
        print(f"canvas: {request.method} {request.path_qs} -> {response.status}", file=sys.stderr, flush=True)
    return response


def _internal(request: web.Request, message: str) -> ApiError:
    report = request.app[STORE_KEY].error_report()
    print(f"canvas: internal error on {request.method} {request.path_qs} (report {report}): {message}", file=sys.stderr)
    return ApiError(500, errors.internal(report))


SHAPE = Shape(unknown=lambda request: errors.not_found(),
              too_large=lambda request: errors.bad_request("The request body is too large.", 413),
              internal=_internal, respond=error_response)


def build_app(store: Store, log_requests: bool = False) -> web.Application:
    app = web.Application(middlewares=[access_log, kit_errors.middleware(SHAPE)], client_max_size=MAX_BODY)
    app[ACCESS_LOG_KEY] = log_requests
    app[STORE_KEY] = store
    app[BASE_KEY] = ["http://localhost:10001"]
    seen: set[tuple[str, str]] = set()
    for table in ROUTE_TABLES:
        for route in table.items:
            key = (route.method, route.path)
            if key in seen:
                raise RuntimeError(f"duplicate route {key}")
            seen.add(key)
            if route.method == "GET":   # GET routes answer HEAD too, as Rails' do
                app.router.add_get(route.path, wrap(route))
            else:
                app.router.add_route(route.method, route.path, wrap(route))
    for method, path, handler in RAW_ROUTES:
        if method == "GET":
            app.router.add_get(path, handler)
        else:
            app.router.add_route(method, path, handler)
    return app
