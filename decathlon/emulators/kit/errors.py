"""Errors in the vendor's shape. A handler raises ApiError(status, body); the middleware answers with that body.
Anything else a handler raises is the emulator's bug: logged with its traceback, answered with the vendor's
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


def middleware(internal_error: Callable[[str], tuple[int, Any]],
               not_found: Callable[[web.Request], tuple[int, Any]] | None = None) -> Any:
    """`internal_error(message)` and `not_found(request)` give (status, body) in the vendor's shape."""

    @web.middleware
    async def vendor_errors(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]):
        try:
            return await handler(request)
        except ApiError as exc:
            return json_response(exc.body, exc.status, exc.headers)
        except web.HTTPNotFound:
            if not_found is None:
                raise
            status, body = not_found(request)
            return json_response(body, status)
        except web.HTTPMethodNotAllowed:
            if not_found is None:
                raise
            status, body = not_found(request)
            return json_response(body, 405 if status == 404 else status)
        except web.HTTPException:
            raise
        except Exception as exc:  # noqa: BLE001 - the emulator's own bug: answered, logged, never a traceback on the wire
            traceback.print_exc(file=sys.stderr)
            status, body = internal_error(f"{type(exc).__name__}: {exc}")
            return json_response(body, status)

    return vendor_errors
