"""The gRPC side: a grpc.aio server on plaintext HTTP/2 (the SaaS front terminates TLS and hands it h2c), one
generic handler routing `/google.logging.v2.<Service>/<Method>` to the services' methods, the request log, and
the ready line / SIGTERM conventions of decathlon.emulators.kit.

Requests are decoded here (not by grpc) so that undecodable bytes are INVALID_ARGUMENT rather than grpc's
generic INTERNAL, and a method this emulator lacks is UNIMPLEMENTED with its name in the message.

Handlers run on the event loop, which owns the state, so they need no locks; a handler that may take long
(ListLogEntries) is a coroutine function, given the call's deadline, that does its work off the loop.
"""
from __future__ import annotations

import asyncio
import inspect
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import grpc  # type: ignore[import-not-found,import-untyped,unused-ignore]
from google.protobuf.message import DecodeError  # type: ignore[import-not-found,import-untyped,unused-ignore]

from decathlon.emulators.kit.clock import Clock, system_clock
from decathlon.emulators.kit.ids import Ids
from decathlon.emulators.kit.runtime import Emulator, Options, Running

from . import messages as m
from .config_service import ConfigService, new_bucket
from .errors import ApiError
from .logging_service import LoggingService
from .store import Store

NAME = "gcplogging"
MAX_REQUEST_BYTES = 10 * 1024 * 1024  # the API's limit on a WriteLogEntries request; beyond it grpc answers RESOURCE_EXHAUSTED
INTERNAL_MESSAGE = "Internal error encountered."


@dataclass(frozen=True)
class Method:
    handler: Callable[..., Any]  # (request) -> response, or async (request, deadline) -> response
    request: Any  # the protobuf request class


def methods(store: Store, clock: Clock, ids: Ids) -> dict[str, Method]:
    """`/package.Service/Method` -> the method, for every RPC this emulator implements."""
    config = ConfigService(store, clock)
    logging = LoggingService(store, clock, ids)
    table: dict[Any, dict[str, Any]] = {
        config: {"ListBuckets": m.ListBucketsRequest, "GetBucket": m.GetBucketRequest,
                 "CreateBucket": m.CreateBucketRequest, "UpdateBucket": m.UpdateBucketRequest,
                 "DeleteBucket": m.DeleteBucketRequest, "UndeleteBucket": m.UndeleteBucketRequest,
                 "ListSinks": m.ListSinksRequest, "GetSink": m.GetSinkRequest, "CreateSink": m.CreateSinkRequest,
                 "UpdateSink": m.UpdateSinkRequest, "DeleteSink": m.DeleteSinkRequest},
        logging: {"WriteLogEntries": m.WriteLogEntriesRequest, "ListLogEntries": m.ListLogEntriesRequest,
                  "ListLogs": m.ListLogsRequest, "DeleteLog": m.DeleteLogRequest},
    }
    return {f"/{service.NAME}/{name}": Method(getattr(service, name), request)
            for service, rpcs in table.items() for name, request in rpcs.items()}


def describe(method: str, req: Any) -> str:
    """The request's key fields for the request log (never payloads: they may hold the task's data)."""
    if method.endswith("/WriteLogEntries"):
        logs = sorted({e.log_name or req.log_name for e in req.entries})
        return f"entries={len(req.entries)} logs={','.join(logs)[:300]}"
    if method.endswith("/ListLogEntries"):
        return (f"resources={','.join(req.resource_names)[:200]} order={req.order_by or '-'} "
                f"page_size={req.page_size} filter={req.filter[:300]!r}")
    fields = req.DESCRIPTOR.fields_by_name
    shown = [f"{f}={getattr(req, f)}" for f in ("name", "parent", "sink_name", "log_name", "bucket_id")
             if f in fields and getattr(req, f)]
    if "sink" in fields and req.sink.name:
        shown.append(f"sink={req.sink.name}")
    return " ".join(shown)[:400]


def _log(method: str, detail: str, status: str, started: float) -> None:
    print(f"{method} {detail} {status} {(time.monotonic() - started) * 1000:.1f}ms", file=sys.stderr, flush=True)


class Router(grpc.GenericRpcHandler):
    def __init__(self, table: dict[str, Method]) -> None:
        self.table = table

    def service(self, handler_call_details: Any) -> Any:
        method = self.table.get(handler_call_details.method)
        if method is None:
            return grpc.stream_stream_rpc_method_handler(_unimplemented(handler_call_details.method))
        return grpc.unary_unary_rpc_method_handler(_unary(handler_call_details.method, method))


def _unimplemented(path: str) -> Callable[[Any, Any], Any]:
    service, _, rpc = path.lstrip("/").partition("/")

    # stream-stream serves a call of any arity: the status goes out before any message is read
    async def behaviour(requests: Any, context: Any) -> None:
        _log(path, "", "UNIMPLEMENTED", time.monotonic())
        await context.abort(grpc.StatusCode.UNIMPLEMENTED,
                            f"Method {rpc or path} of service {service or '?'} is not implemented by this "
                            "Cloud Logging emulator")

    return behaviour


def _deadline(context: Any) -> float | None:
    """The call's deadline as a time.monotonic() instant; None when the client set none."""
    remaining = context.time_remaining()
    return None if remaining is None else time.monotonic() + remaining


async def _respond(method: Method, request: Any, context: Any) -> Any:
    if inspect.iscoroutinefunction(method.handler):
        return await method.handler(request, _deadline(context))
    return method.handler(request)


def _unary(path: str, method: Method) -> Callable[[bytes, Any], Any]:
    async def behaviour(raw: bytes, context: Any) -> bytes:
        started = time.monotonic()
        detail = ""
        try:
            request = method.request.FromString(raw)
            detail = describe(path, request)
            body = (await _respond(method, request, context)).SerializeToString()
        except asyncio.CancelledError:
            # the client went away (or its deadline passed) mid-call: logged, then grpc ends the call
            _log(path, detail, "CANCELLED", started)
            raise
        except DecodeError:
            error = ApiError("INVALID_ARGUMENT", f"Invalid request: the body is not a {method.request.DESCRIPTOR.full_name}")
        except ApiError as exc:
            error = exc
        except Exception:  # noqa: BLE001 - the emulator's own bug: logged with its traceback, answered INTERNAL
            traceback.print_exc(file=sys.stderr)
            error = ApiError("INTERNAL", INTERNAL_MESSAGE)
        else:
            _log(path, detail, "OK", started)
            return body
        _log(path, detail, f"{error.code} {error.message[:300]!r}", started)
        await context.abort(grpc.StatusCode[error.code], error.message)
        raise AssertionError("context.abort returned")

    return behaviour


async def start(host: str, port: int, clock: Clock = system_clock, ids: Ids | None = None) -> Running:
    """Serve on host:port (0: any free one) with grpc.aio; the port as grpc bound it."""
    ids = ids or Ids()
    store = Store(lambda name, retention, locked: new_bucket(clock, name, retention, locked))
    server = grpc.aio.server(options=[("grpc.max_receive_message_length", MAX_REQUEST_BYTES),
                                      ("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers([Router(methods(store, clock, ids))])
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError as exc:
        raise OSError(f"{address}: {exc}") from None
    if not bound:
        raise OSError(f"{address}: grpc could not bind it")
    await server.start()

    async def close() -> None:
        await server.stop(grace=1)

    from .state import LoggingState
    return Running({"grpc": bound}, close, LoggingState(store, ids))


async def _start(options: Options) -> Running:
    return await start(options.host, options.port("grpc"))


EMULATOR = Emulator(NAME, "Serve an emulated Google Cloud Logging v2 (gRPC, h2c) until SIGTERM.", ("grpc",), _start,
                    root_help="the episode's seed root (unused: Logging starts empty)")
