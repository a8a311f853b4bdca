"""The error shapes the kit keeps for the vendors still to come (Notion, GitHub): what no handler answers comes out
as that vendor's body, through the same middleware every emulator uses."""
from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from decathlon.emulators.kit import github_errors, notion_errors
from decathlon.emulators.kit.errors import Shape, middleware


async def _bug(request: web.Request) -> web.Response:
    await request.read()  # past the cap, this is where aiohttp refuses it
    raise KeyError("secret-internal-detail")


async def _missing(request: web.Request) -> web.Response:
    raise notion_errors.not_found("abc") if request.app["vendor"] == "notion" else github_errors.not_found()


async def _answers(vendor: str, shape: Shape) -> dict[str, tuple[int, Any]]:
    app = web.Application(middlewares=[middleware(shape)], client_max_size=64)
    app["vendor"] = vendor
    app.router.add_post("/v1/bug", _bug)
    app.router.add_get("/v1/missing", _missing)
    out: dict[str, tuple[int, Any]] = {}
    async with TestClient(TestServer(app)) as client:
        for name, method, path, data in [("unknown", "GET", "/v1/nowhere", None), ("large", "POST", "/v1/bug", b"x" * 512),
                                         ("bug", "POST", "/v1/bug", b"{}"), ("missing", "GET", "/v1/missing", None)]:
            response = await client.request(method, path, data=data)
            out[name] = (response.status, await response.json())
    return out


def test_notion_shape(capfd: pytest.CaptureFixture[str]) -> None:
    got = asyncio.run(_answers("notion", notion_errors.SHAPE))
    for name, (status, code) in {"unknown": (400, "invalid_request_url"), "large": (400, "validation_error"),
                                 "bug": (500, "internal_server_error"), "missing": (404, "object_not_found")}.items():
        body = got[name][1]
        assert (got[name][0], body["object"], body["status"], body["code"]) == (status, "error", status, code), name
        assert set(body) == {"object", "status", "code", "message", "request_id"}
    assert "secret-internal-detail" not in str(got) and "secret-internal-detail" in capfd.readouterr().err
    with pytest.raises(ValueError):
        notion_errors.notion_error("no_such_code", "x")


def test_github_shape() -> None:
    got = asyncio.run(_answers("github", github_errors.SHAPE))
    assert got["unknown"] == got["missing"] == (404, {"message": "Not Found", "status": "404",
                                                      "documentation_url": github_errors.DOCS})
    assert got["large"][0] == 413 and got["bug"] == (500, {"message": "Server Error", "status": "500",
                                                           "documentation_url": github_errors.DOCS})
    assert github_errors.validation_failed("Issue", "title", "missing_field").body["errors"] == [
        {"resource": "Issue", "field": "title", "code": "missing_field"}]
