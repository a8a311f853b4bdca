"""The emulator's ASGI app: fakesnow's server routes, with the query request wrapped.

The wrapper reads the statement (bounded, gunzipped), plans it (`statements`: a DuckDB function Snowflake lacks is
refused here), answers database DDL itself (`databases`), hands everything else to fakesnow's handler with the
rewritten text, and turns whatever would have been an HTTP 5xx into Snowflake's error JSON.

Every statement is bounded in time (MAX_STATEMENT_SECONDS): past it, its DuckDB work is interrupted and it ends as
Snowflake ends a statement past its timeout (000630); the connector's abort request cancels it (000604). Statements
of different sessions run side by side, one at a time per session; database DDL runs alone, since it must not
interleave with queries on the same catalogs. A slow statement keeps nobody else waiting.

The login and the stage upload are wrapped too: fakesnow's own session parameters (a database file path, statement
regexes) are not Snowflake's and are dropped, a gzipped body is inflated under a cap, and an upload must carry the
signature of the URL the emulator handed out (fakesnow's bucket takes anything from anyone) and fit the stage's caps.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import os
import secrets
import sys
import time
import warnings
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from starlette.applications import Starlette  # type: ignore[import-not-found,import-untyped,unused-ignore]
from starlette.concurrency import run_in_threadpool  # type: ignore[import-not-found,import-untyped,unused-ignore]
from starlette.requests import Request  # type: ignore[import-not-found,import-untyped,unused-ignore]
from starlette.responses import JSONResponse, Response  # type: ignore[import-not-found,import-untyped,unused-ignore]
from starlette.routing import Route  # type: ignore[import-not-found,import-untyped,unused-ignore]

from . import databases, lockdown, patches, statements, wire

log = logging.getLogger("decathlon.emulators.snowflake")

MAX_BODY = 32 * 1024 * 1024  # bytes of a query request, after gunzip
MAX_STATEMENT = 16 * 1024 * 1024  # bytes of one statement's text
MAX_LOGIN_BODY = 1024 * 1024  # bytes of a login request, after gunzip
MAX_STATEMENT_SECONDS = float(os.environ.get("DECATHLON_SNOWFLAKE_STATEMENT_SECONDS", "120"))
MAX_STAGE_FILE = int(os.environ.get("DECATHLON_SNOWFLAKE_STAGE_FILE_BYTES", str(64 * 1024 * 1024)))
MAX_STAGE_TOTAL = int(os.environ.get("DECATHLON_SNOWFLAKE_STAGE_BYTES", str(256 * 1024 * 1024)))
REINTERRUPT = 0.5  # an interrupt that landed before DuckDB began the statement is lost: sent again until it ends
FAKESNOW_ONLY_SESSION_PARAMETERS = ("FAKESNOW_DB_PATH", "nop_regexes")

STAGE: Path = lockdown.require()  # fakesnow's DuckDB must be locked down before its server module opens it
patches.apply()
import fakesnow.server as fs_server  # type: ignore[import-not-found,import-untyped,unused-ignore]  # noqa: E402 (after the patches)

_SIGNING_KEY = secrets.token_bytes(32)  # this process's: the upload URLs it hands out carry a signature under it


class _Gate:
    """Readers-writer gate: statements share it, database DDL has it alone."""

    def __init__(self) -> None:
        self._cond = asyncio.Condition()
        self._active = 0
        self._writer = False

    @contextlib.asynccontextmanager
    async def shared(self) -> AsyncIterator[None]:
        async with self._cond:
            await self._cond.wait_for(lambda: not self._writer)
            self._active += 1
        try:
            yield
        finally:
            async with self._cond:
                self._active -= 1
                self._cond.notify_all()

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        async with self._cond:
            await self._cond.wait_for(lambda: not self._writer and self._active == 0)
            self._writer = True
        try:
            yield
        finally:
            async with self._cond:
                self._writer = False
                self._cond.notify_all()


_gate = _Gate()
_session_locks: dict[int, asyncio.Lock] = {}
_running: dict[int, "_Bound"] = {}  # session (its connection's id) → the statement it runs now


class _Bound:
    """One statement's time bound: past it, or on the connector's abort, its session's DuckDB work is interrupted
    (again every REINTERRUPT until it ends) and the answer is Snowflake's."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.why: str | None = None
        self.ended = False

    def stop(self, why: str) -> None:
        if self.ended:
            return
        self.why = self.why or why
        duck = getattr(self.conn, "_duck_conn", None)
        if duck is not None:
            with contextlib.suppress(Exception):
                duck.interrupt()
        asyncio.get_running_loop().call_later(REINTERRUPT, self.stop, why)

    def error(self) -> wire.SnowflakeError | None:
        if self.why == "timeout":
            return wire.statement_timeout(MAX_STATEMENT_SECONDS)
        if self.why == "cancel":
            return wire.cancelled()
        return None


class _BodyTooLarge(Exception):
    pass


def _with_body(request: Request, body: bytes) -> Request:
    """The same request, carrying `body` uncompressed, for fakesnow's handler to read."""
    headers = [(k, v) for k, v in request.scope["headers"] if k.lower() not in (b"content-encoding", b"content-length")]
    headers.append((b"content-length", str(len(body)).encode()))
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return Request({**request.scope, "headers": headers}, receive)


def _error(err: wire.SnowflakeError) -> JSONResponse:
    return JSONResponse(err.body())


def _session(request: Request) -> Any | None:
    auth = request.headers.get("Authorization") or ""
    return fs_server.sessions.get(auth[17:-1]) if auth.startswith('Snowflake Token="') else None


def _succeeded(response: Response) -> bool:
    try:
        return bool(json.loads(bytes(response.body)).get("success"))
    except (ValueError, AttributeError):
        return False


async def query_request(request: Request) -> Response:
    try:
        body = await _read_capped(request, MAX_BODY)
    except _BodyTooLarge as exc:
        return _error(wire.statement_too_large(int(exc.args[0]), MAX_BODY))
    except (OSError, zlib.error, EOFError):
        return _error(wire.bad_request("the body is not valid gzip"))
    try:
        payload = json.loads(body)
        sql = payload["sqlText"]
        if not isinstance(sql, str):
            raise TypeError("sqlText")
    except (ValueError, KeyError, TypeError):
        return _error(wire.bad_request("the body is not a query request"))
    request.state.statement = sql
    if len(sql.encode()) > MAX_STATEMENT:
        return _error(wire.statement_too_large(len(sql.encode()), MAX_STATEMENT))
    conn = _session(request)
    if conn is None:
        return await fs_server.query_request(_with_body(request, body))  # fakesnow answers a missing session
    plan = await run_in_threadpool(statements.plan, sql)
    action = statements.Action
    alone = plan.action in (action.CREATE_DATABASE, action.DROP_DATABASE, action.USE_DATABASE)
    lock = _session_locks.setdefault(id(conn), asyncio.Lock())
    async with lock, (_gate.exclusive() if alone else _gate.shared()):
        bound = _running[id(conn)] = _Bound(conn)
        timer = asyncio.get_running_loop().call_later(MAX_STATEMENT_SECONDS, bound.stop, "timeout")
        try:
            response = await _run(request, payload, plan, conn)
        except wire.SnowflakeError as err:
            response = _error(err)
        finally:
            timer.cancel()
            bound.ended = True
            _running.pop(id(conn), None)
        stopped = bound.error()
        return _error(stopped) if stopped is not None else response


async def abort_request(request: Request) -> JSONResponse:
    """The connector's cancel (a statement past its client-side timeout, or Ctrl-C): the session's statement stops."""
    conn = _session(request)
    bound = _running.get(id(conn)) if conn is not None else None
    if bound is not None:
        bound.stop("cancel")
    return JSONResponse({"data": None, "code": None, "message": None, "success": True})


async def login_request(request: Request) -> Response:
    """fakesnow's login, with the body inflated under a cap and fakesnow's own session parameters (a database file
    to open, regexes to skip statements by) dropped: they are not Snowflake's, and the agent sends the login."""
    try:
        raw = await _read_capped(request, MAX_LOGIN_BODY)
        payload = json.loads(raw)
        params = payload["data"].setdefault("SESSION_PARAMETERS", {})
        if not isinstance(params, dict):
            raise TypeError("SESSION_PARAMETERS")
    except _BodyTooLarge:
        return JSONResponse(wire.bad_request("the login request is too large").body())
    except (OSError, zlib.error, EOFError, ValueError, KeyError, TypeError):
        return JSONResponse(wire.bad_request("the body is not a login request").body())
    for name in FAKESNOW_ONLY_SESSION_PARAMETERS:
        params.pop(name, None)
    return await fs_server.login_request(_with_body(request, json.dumps(payload).encode()))


def _signature(path: str) -> str:
    return hmac.new(_SIGNING_KEY, path.encode(), hashlib.sha256).hexdigest()


def _signed_stage_info(original: Any) -> Any:
    def gcs_stage_info(request: Request, expr: Any, put_stage_data: Any) -> dict[str, Any]:
        info = original(request, expr, put_stage_data)
        parts = urlsplit(info["presignedUrl"])
        path = parts.path.removeprefix("/fs_bucket/")
        query = urlencode([*parse_qsl(parts.query), ("X-Goog-Signature", _signature(path))])
        info["presignedUrl"] = urlunsplit(parts._replace(query=query))
        return info

    return gcs_stage_info


def _gcs_error(status: int, code: str, message: str) -> Response:
    body = f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{code}</Code><Message>{message}</Message></Error>"
    return Response(body, status_code=status, media_type="application/xml")


def _stage_bytes() -> int:
    return sum(f.stat().st_size for f in STAGE.rglob("*") if f.is_file())


async def bucket_upload(request: Request) -> Response:
    """A PUT to the stage's upload URL: only with the signature of a URL this emulator handed out for that very
    file, and within the caps; then fakesnow's upload writes it into the episode's stage folder."""
    path = str(request.path_params.get("path", ""))
    given = request.query_params.get("X-Goog-Signature", "")
    if not hmac.compare_digest(given, _signature(path)):
        return _gcs_error(403, "AccessDenied", "Access denied.")
    limit = min(MAX_STAGE_FILE, max(0, MAX_STAGE_TOTAL - await run_in_threadpool(_stage_bytes)))
    try:
        body = await _read_capped(request, limit, inflate=False)
    except _BodyTooLarge:
        return _gcs_error(400, "EntityTooLarge", f"Your proposed upload is larger than the maximum object size "
                                                 f"specified in your Policy Document ({limit} bytes).")
    return await fs_server.bucket_upload(_with_body(request, body))


async def _read_capped(request: Request, limit: int, inflate: bool = True) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _BodyTooLarge(size)
        chunks.append(chunk)
    body = b"".join(chunks)
    if inflate and request.headers.get("Content-Encoding", "").lower() == "gzip":
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        body = inflater.decompress(body, limit + 1)
        if len(body) > limit:
            raise _BodyTooLarge(len(body))
    return body


async def _run(request: Request, payload: dict[str, Any], plan: statements.Plan, conn: Any) -> Response:
    duck = fs_server.shared_fs.duck_conn
    action = statements.Action
    if plan.action is action.REJECT:
        raise wire.statement_count_mismatch(plan.statements)
    if plan.action is action.REFUSE and plan.error:
        raise wire.unknown_function(plan.error)
    if plan.action is action.NO_OP:
        return JSONResponse(wire.status_body("Statement executed successfully.", conn.database, conn.schema))
    if plan.action is action.COLUMN_COMMENTS:
        return JSONResponse(await run_in_threadpool(databases.comment_columns, duck, conn, plan.comments))
    if plan.action is action.DROP_DATABASE and plan.database:
        return JSONResponse(await run_in_threadpool(databases.drop_statement, duck, fs_server.sessions, conn,
                                                    plan.database, plan.if_exists))
    if plan.action is action.CREATE_DATABASE and plan.database:
        if await run_in_threadpool(databases.exists, duck, plan.database):
            if plan.replace:
                await run_in_threadpool(databases.drop, duck, fs_server.sessions, plan.database)
            elif plan.if_exists:
                return JSONResponse(wire.status_body(f"{plan.database} already exists, statement succeeded.",
                                                     conn.database, conn.schema))
            else:
                raise wire.already_exists(plan.database)
    response = await fs_server.query_request(_with_body(request, json.dumps({**payload, "sqlText": plan.sql}).encode()))
    if plan.database and plan.action in (action.CREATE_DATABASE, action.USE_DATABASE) and _succeeded(response):
        if plan.action is action.CREATE_DATABASE or await run_in_threadpool(databases.has_public, duck, plan.database):
            await run_in_threadpool(databases.make_public_current, duck, conn, plan.database)
            response = _current_schema_updated(response, conn)
    return response


def _current_schema_updated(response: Response, conn: Any) -> Response:
    body = json.loads(bytes(response.body))
    body["data"]["finalDatabaseName"], body["data"]["finalSchemaName"] = conn.database, conn.schema
    return JSONResponse(body)


async def telemetry(request: Request) -> JSONResponse:
    # The connector reports its own telemetry in-band; Snowflake accepts it and answers with nothing.
    return JSONResponse({"data": "Telemetry received", "code": None, "message": None, "success": True})


class RequestLog:
    """One stderr line per request (statement text cut at 200 characters); an exception out of any handler is
    answered with Snowflake's internal-error JSON, never a 5xx or a traceback."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        state: dict[str, Any] = {"status": 0, "outcome": ""}
        scope.setdefault("state", {})

        async def logged_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                state["status"] = message["status"]
            elif message["type"] == "http.response.body" and state["status"] == 200 and not state["outcome"]:
                state["outcome"] = _outcome(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, logged_send)
        except Exception:  # noqa: BLE001
            log.exception("unhandled error in %s", scope.get("path"))
            if not state["status"]:
                await JSONResponse(wire.internal_error().body())(scope, receive, send)
                state["status"] = 200
                state["outcome"] = "error 000603"
        statement = str(scope["state"].get("statement", ""))[:200].replace("\n", " ")
        print(f"{scope.get('method')} {scope.get('path')} {state['status']} {state['outcome']} "
              f"{(time.monotonic() - started) * 1000:.1f}ms {statement}".rstrip(), file=sys.stderr, flush=True)


def _outcome(body: bytes) -> str:
    # Snowflake-shaped answers end with their `success` flag (fakesnow's and ours alike).
    if not body.rstrip().endswith(b'"success":false}'):
        return ""
    try:
        return f"error {json.loads(body).get('code')}"
    except ValueError:
        return "error"


def _server_errors_as_snowflake(app: Any) -> Any:
    """fakesnow answers its own bugs with HTTP 500 (the connector would retry for minutes): answer 200 + error."""

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        start: dict[str, Any] = {}

        async def send_guarded(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                if message["status"] >= 500:
                    start["replaced"] = True
                    return
                await send(message)
            elif message["type"] == "http.response.body" and start.get("replaced"):
                if not message.get("more_body"):
                    await JSONResponse(wire.internal_error().body())(scope, receive, send)
            else:
                await send(message)

        await app(scope, receive, send_guarded)

    return guarded


async def _no_such_path(request: Request, exc: Exception) -> JSONResponse:
    """A path or method the REST API lacks: the API's own envelope (`success: false`, no data) under the HTTP status,
    never Starlette's `{"detail": …}`. Snowflake documents no error code for it, so `code` stays null."""
    status = getattr(exc, "status_code", 404)
    return JSONResponse(wire.no_such_path(request.method, request.url.path, status), status_code=status)


def build() -> Any:
    fs_server.gcs_stage_info = _signed_stage_info(fs_server.gcs_stage_info)
    ours = {"/queries/v1/query-request", "/queries/v1/abort-request", "/session/v1/login-request", "/fs_bucket/{path:path}"}
    routes = [
        Route("/queries/v1/query-request", query_request, methods=["POST"]),
        Route("/queries/v1/abort-request", abort_request, methods=["POST"]),
        Route("/session/v1/login-request", login_request, methods=["POST"]),
        Route("/fs_bucket/{path:path}", bucket_upload, methods=["PUT"]),
        Route("/telemetry/send", telemetry, methods=["POST"]),
        *(r for r in fs_server.routes if r.path not in ours),
    ]
    # DuckDB warns once that fakesnow's Arrow fetch copies rows: noise in the request log.
    warnings.filterwarnings("ignore", message="Arrow output on a DB-API result")
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # transpiler warnings would double the request log
    fs_logger = logging.getLogger("fakesnow.server")
    fs_logger.handlers = []
    fs_logger.setLevel(logging.WARNING)  # its INFO lines would double the request log
    fs_logger.propagate = True
    app = Starlette(debug=False, routes=routes, exception_handlers={404: _no_such_path, 405: _no_such_path})
    return RequestLog(_server_errors_as_snowflake(app))
