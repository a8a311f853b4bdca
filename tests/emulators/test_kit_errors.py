"""The kit's one error middleware: what no handler answers (an unknown path or method, a body over the cap, a
handler's bug) is answered in the vendor's Shape, never as aiohttp's plain text and never with a traceback."""
from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from decathlon.emulators.kit.errors import ApiError, Shape, json_response, middleware

SHAPE = Shape(unknown=lambda r: ApiError(404, {"vendor": "no such thing", "path": r.path}),
              too_large=lambda r: ApiError(400, {"vendor": f"over {r.client_max_size}"}),
              internal=lambda r, message: ApiError(500, {"vendor": "oops"}))


async def _ok(request: web.Request) -> web.Response:
    await request.read()
    return json_response({"ok": True})


async def _refuse(request: web.Request) -> web.Response:
    raise ApiError(409, {"vendor": "exists"}, {"X-Vendor": "1"})


async def _bug(request: web.Request) -> web.Response:
    raise KeyError("secret-internal-detail")


async def _answers() -> list[tuple[int, Any, str]]:
    app = web.Application(middlewares=[middleware(SHAPE)], client_max_size=1024)
    app.router.add_post("/ok", _ok)
    app.router.add_get("/refuse", _refuse)
    app.router.add_get("/bug", _bug)
    out = []
    async with TestClient(TestServer(app)) as client:
        for method, path, data in [("POST", "/ok", b"x"), ("GET", "/nowhere", None), ("GET", "/ok", None),
                                   ("POST", "/ok", b"x" * 4096), ("GET", "/refuse", None), ("GET", "/bug", None)]:
            response = await client.request(method, path, data=data)
            out.append((response.status, await response.json(), response.headers.get("X-Vendor", "")))
    return out


def test_what_no_handler_answers_is_answered_in_the_vendors_shape(capfd):
    assert asyncio.run(_answers()) == [
        (200, {"ok": True}, ""),
        (404, {"vendor": "no such thing", "path": "/nowhere"}, ""),
        (404, {"vendor": "no such thing", "path": "/ok"}, ""),  # a method the path does not take
        (400, {"vendor": "over 1024"}, ""),
        (409, {"vendor": "exists"}, "1"),
        (500, {"vendor": "oops"}, ""),
    ]
    assert "secret-internal-detail" in capfd.readouterr().err  # the bug's traceback goes to the service log only
