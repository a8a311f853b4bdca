"""Errors in the vendor's shape. A handler raises ApiError(status, body); the middleware answers with that body, and
answers in the vendor's `Shape` what no handler does: an unknown path or method, a body over the cap, and anything
else a handler raises, which is the emulator's bug: logged with its traceback, answered with the vendor's
internal-error body (never a traceback, never a hang), so a client that retries on 5xx gets a clear answer."""
from __future__ import annotations

import json
import logging
import sys
import traceback
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from aiohttp import web

from decathlon.emulators.kit.failure import ServiceError

log = logging.getLogger("decathlon.emulators")


@dataclass
class ApiError(ServiceError):
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.status} {self.body}"


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(status=status, text=json.dumps(body), content_type="application/json",
                        headers=headers or {})


@dataclass(frozen=True)
class Shape:
    """How one vendor family answers what no handler of its emulator answers: a path or method the vendor does not
    have, a body over the emulator's cap (aiohttp's `client_max_size`), and the emulator's own bug. Each gives the
    ApiError the vendor would send; `respond` writes an ApiError as the vendor writes its JSON."""

    unknown: Callable[[web.Request], ApiError]
    too_large: Callable[[web.Request], ApiError]
    internal: Callable[[web.Request, str], ApiError]
    respond: Callable[[ApiError], web.StreamResponse] = lambda exc: json_response(exc.body, exc.status, exc.headers)


def middleware(shape: Shape) -> Any:
    """The one place an emulator's HTTP app turns the router's and the handlers' failures into the vendor's answers:
    an ApiError as raised, an unknown path or method, an oversized body, anything else as the vendor's internal
    error (the traceback to the service log, never on the wire)."""

    @web.middleware
    async def vendor_errors(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]):
        try:
            return await handler(request)
        except ApiError as exc:
            return shape.respond(exc)
        except (web.HTTPNotFound, web.HTTPMethodNotAllowed):
            return shape.respond(shape.unknown(request))
        except web.HTTPRequestEntityTooLarge:
            return shape.respond(shape.too_large(request))
        except web.HTTPException:
            raise
        except Exception as exc:  # noqa: BLE001 - the emulator's own bug: answered, logged, never a traceback on the wire
            traceback.print_exc(file=sys.stderr)
            return shape.respond(shape.internal(request, f"{type(exc).__name__}: {exc}"))

    return vendor_errors
