"""Starting and stopping the emulator: one aiohttp server for the whole multisite network."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Awaitable, Callable, cast

from aiohttp import web

from decathlon.emulators.kit import errors as kit_errors

from ..directory import Directory
from .clock import Clock, system_clock
from .routes import build_router
from .site import DEFAULT_HOST, Network
from .web import MAX_BODY, Front, apache_headers

NAME = "woocommerce"
DEFAULT_PORTS = {"http": 10003}


@dataclass
class RunningService:
    name: str
    ports: dict[str, int]
    network: Network
    _close: Callable[[], Awaitable[None]] = field(repr=False)

    async def close(self) -> None:
        await self._close()


def build_app(network: Network) -> web.Application:
    front = Front(network, build_router())
    app = web.Application(middlewares=[apache_headers, kit_errors.middleware(front.shape())], client_max_size=MAX_BODY)
    app.router.add_route("*", "/{tail:.*}", front.handle)
    return app


async def start(directory: Directory, host: str = "127.0.0.1", ports: dict[str, int] | None = None,
                clock: Clock | None = None, site_host: str = DEFAULT_HOST) -> RunningService:
    """Serve the network on `ports["http"]` (10003 unless told; 0 picks a free port).

    `site_host` is the host WordPress believes it has (its siteurl): upstream's is localhost:10003,
    and responses carry it whatever address the request came in on, as WordPress' do.
    """
    wanted = dict(DEFAULT_PORTS if ports is None else ports)
    network = Network(directory, clock or system_clock, site_host)
    runner = web.AppRunner(build_app(network), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, wanted.get("http", DEFAULT_PORTS["http"]), reuse_address=True)
    await site.start()
    # What loop.create_server made: aiohttp types it as AbstractServer, which has no `sockets`.
    server = cast("asyncio.Server | None", site._server)
    bound = server.sockets[0].getsockname()[1] if server and server.sockets else wanted["http"]
    return RunningService(NAME, {"http": int(bound)}, network, runner.cleanup)
