"""The grader's control channel: one small HTTP app on a Unix socket, never on a TCP port the agent could call.

    GET  /health                        {"ok": true, "emulator": NAME, "format": 1}
    POST /reset                         back to the emulator's fresh state
    POST /snapshot   {"folder": PATH}   the whole state into PATH
    POST /restore    {"folder": PATH}   the whole state from the snapshot in PATH
    POST /load_seed  {"folder": PATH}   reset, then the seed pack in PATH

A PATH is relative to the state root (the socket's own folder) or absolute inside it; anything else is refused.
Every answer is JSON: `{"ok": true, ...}`, or `{"ok": false, "error": {"code": ..., "message": ...}}` with a 4xx
for a bad request (a missing folder, another emulator's manifest, an unknown format, a path outside the root) and a
500 naming the exception for the emulator's own fault (its traceback goes to stderr). Requests run one at a time.

The socket is made 0600 (umask) in a 0700 folder: only the service's user (and root, the grader's side) connects.
"""
from __future__ import annotations

import asyncio
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable

from aiohttp import web

from decathlon.emulators.kit.state import FORMAT, State, StateError, within
from decathlon.emulators.kit.unix_path import bindable

MAX_BODY = 64 * 1024
STATE_KEY = web.AppKey("decathlon_state", object)


def _answer(body: dict[str, Any], status: int = 200) -> web.Response:
    return web.Response(status=status, text=json.dumps(body, sort_keys=True), content_type="application/json")


def _error(code: str, message: str, status: int) -> web.Response:
    return _answer({"ok": False, "error": {"code": code, "message": message}}, status)


async def _folder(request: web.Request, root: Path) -> Path:
    raw = await request.read()
    try:
        body = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise StateError("the body must be JSON: {\"folder\": PATH}", "bad_json") from None
    if not isinstance(body, dict) or "folder" not in body:
        raise StateError("the body must be a JSON object naming a \"folder\"", "bad_request")
    return within(root, body["folder"])


def control_app(state: State, root: Path, extra: Iterable[web.RouteDef] = ()) -> web.Application:
    """The control app for `state`, whose folders lie under `root`; `extra`: the emulator's own debugging routes."""
    lock = asyncio.Lock()

    @web.middleware
    async def answers(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]):
        try:
            async with lock:
                return await handler(request)
        except StateError as exc:
            return _error(exc.code, exc.message, exc.status)
        except web.HTTPRequestEntityTooLarge:
            return _error("too_large", f"a control request's body is at most {MAX_BODY} bytes", 413)
        except web.HTTPMethodNotAllowed as exc:
            allowed = ", ".join(sorted(exc.allowed_methods))
            return _error("method_not_allowed", f"{request.method} {request.path}: use {allowed}", 405)
        except web.HTTPNotFound:
            return _error("not_found", f"{request.path}: the control app has /health, /reset, /snapshot, /restore, "
                          "/load_seed", 404)
        except web.HTTPException:
            raise
        except Exception as exc:  # noqa: BLE001 - the emulator's own fault: answered with its name, never a hang
            traceback.print_exc(file=sys.stderr)
            return _error("internal", f"the {state.name} emulator failed: {type(exc).__name__}: {exc}", 500)

    async def health(request: web.Request) -> web.Response:
        return _answer({"ok": True, "emulator": state.name, "format": FORMAT})

    async def reset(request: web.Request) -> web.Response:
        await state.reset()
        return _answer({"ok": True})

    def with_folder(action: Callable[[Path], Awaitable[dict[str, Any]]]) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(request: web.Request) -> web.Response:
            folder = await _folder(request, root)
            return _answer({"ok": True, **(await action(folder))})
        return handler

    app = web.Application(middlewares=[answers], client_max_size=MAX_BODY)
    app[STATE_KEY] = state
    app.add_routes([web.get("/health", health), web.post("/reset", reset),
                    web.post("/snapshot", with_folder(state.snapshot)), web.post("/restore", with_folder(state.restore)),
                    web.post("/load_seed", with_folder(state.load_seed)), *extra])
    return app


async def listen(app: web.Application, socket: Path) -> web.AppRunner:
    """Serve `app` on `socket`, made 0600 in a folder made 0700 (an existing folder keeps its owner's mode)."""
    socket.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if socket.is_socket():
        socket.unlink()  # an earlier run's, left behind by a kill
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    name, fd = bindable(socket)
    old = os.umask(0o177)
    try:
        await web.UnixSite(runner, name).start()
    except OSError:
        await runner.cleanup()
        raise
    finally:
        os.umask(old)
        if fd is not None:
            os.close(fd)
    return runner


async def serve(state: State, socket: Path, extra: Iterable[web.RouteDef] = ()) -> web.AppRunner:
    """The control app for `state` on `socket`, its state root the socket's folder."""
    return await listen(control_app(state, socket.parent, extra), socket)
