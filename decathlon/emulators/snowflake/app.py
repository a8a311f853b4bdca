"""The emulator's ASGI app: fakesnow's server routes, with the query request wrapped.

The wrapper reads the statement (bounded, gunzipped), plans it (`statements`), answers database DDL itself
(`databases`), hands everything else to fakesnow's handler with the rewritten text, and turns whatever would have
been an HTTP 5xx into Snowflake's error JSON. Statements run one at a time: the tasks' traffic is sequential, and
database DDL must not interleave with queries on the same catalogs.
"""
from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
import warnings
import zlib
from typing import Any

from starlette.applications import Starlette  # type: ignore[import-not-found,import-untyped,unused-ignore]
from starlette.concurrency import run_in_threadpool  # type: ignore[import-not-found,import-untyped,unused-ignore]
from starlette.requests import Request  # type: ignore[import-not-found,import-untyped,unused-ignore]
from starlette.responses import JSONResponse, Response  # type: ignore[import-not-found,import-untyped,unused-ignore]
from starlette.routing import Route  # type: ignore[import-not-found,import-untyped,unused-ignore]

from . import databases, patches, statements, wire

log = logging.getLogger("decathlon.emulators.snowflake")

MAX_BODY = 32 * 1024 * 1024  # bytes of a query request, after gunzip
MAX_STATEMENT = 16 * 1024 * 1024  # bytes of one statement's text

patches.apply()
import fakesnow.server as fs_server  # type: ignore[import-not-found,import-untyped,unused-ignore]  # noqa: E402 (after the patches)

_serial = asyncio.Lock()


class _BodyTooLarge(Exception):
    pass


async def _read_body(request: Request) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise _BodyTooLarge(size)
        chunks.append(chunk)
    body = b"".join(chunks)
    if request.headers.get("Content-Encoding", "").lower() == "gzip":
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        body = inflater.decompress(body, MAX_BODY + 1)
        if len(body) > MAX_BODY:
            raise _BodyTooLarge(len(body))
    return body


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
        body = await _read_body(request)
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
    async with _serial:
        try:
            return await _run(request, payload, plan, conn)
        except wire.SnowflakeError as err:
            return _error(err)


async def _run(request: Request, payload: dict[str, Any], plan: statements.Plan, conn: Any) -> Response:
    duck = fs_server.shared_fs.duck_conn
    action = statements.Action
    if plan.action is action.REJECT:
        raise wire.statement_count_mismatch(plan.statements)
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


def build() -> Any:
    routes = [
        Route("/queries/v1/query-request", query_request, methods=["POST"]),
        Route("/telemetry/send", telemetry, methods=["POST"]),
        *fs_server.routes,
    ]
    # DuckDB warns once that fakesnow's Arrow fetch copies rows: noise in the request log.
    warnings.filterwarnings("ignore", message="Arrow output on a DB-API result")
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # transpiler warnings would double the request log
    fs_logger = logging.getLogger("fakesnow.server")
    fs_logger.handlers = []
    fs_logger.setLevel(logging.WARNING)  # its INFO lines would double the request log
    fs_logger.propagate = True
    return RequestLog(_server_errors_as_snowflake(Starlette(debug=False, routes=routes)))
