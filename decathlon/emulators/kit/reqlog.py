"""The request log: one line per request on stderr (the service's log, under the episode's services folder),
for whoever debugs an episode. Bodies are not logged (they may hold the task's data)."""
from __future__ import annotations

import sys
import time
from typing import Awaitable, Callable

from aiohttp import web


@web.middleware
async def request_log(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]):
    started = time.monotonic()
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    finally:
        print(f"{request.method} {request.host}{request.path_qs[:300]} {status} {(time.monotonic() - started) * 1000:.1f}ms",
              file=sys.stderr, flush=True)
