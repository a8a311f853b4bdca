"""The workspace emulator's aiohttp app: Drive, Sheets, Forms and Calendar over one store, routed by Host and path
(decathlon.emulators.workspace.hosts), errors in Google's shape (decathlon.emulators.kit.google)."""
from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from decathlon.emulators.kit import errors as kit_errors
from decathlon.emulators.kit.clock import Clock, system_clock
from decathlon.emulators.kit.google import shape
from decathlon.emulators.kit.ids import Ids
from decathlon.emulators.kit.reqlog import request_log
from decathlon.emulators.kit.runtime import Emulator, Options, Running, aiohttp_site
from decathlon.emulators.workspace import apis, hosts
from decathlon.emulators.workspace.calendar import CalendarRoutes
from decathlon.emulators.workspace.drive.routes import DriveRoutes
from decathlon.emulators.workspace.forms import FormsRoutes
from decathlon.emulators.workspace.sheets.routes import SheetsRoutes
from decathlon.emulators.workspace.state import WorkspaceState
from decathlon.emulators.workspace.store import Workspace

MAX_BODY = 64 * 1024 ** 2  # a request body larger than this is Google's 400 (an upload of a big file, a huge batch)
SHAPE = shape(apis.known_methods)


@dataclass
class Parts:
    app: web.Application
    workspace: Workspace
    state: WorkspaceState


def make_parts(clock: Clock = system_clock, ids: Ids | None = None, max_body: int = MAX_BODY) -> Parts:
    ws = Workspace(clock, ids or Ids())
    app = web.Application(middlewares=[request_log, kit_errors.middleware(SHAPE), hosts.by_host],
                          client_max_size=max_body)
    for routes in (DriveRoutes(ws), SheetsRoutes(ws), CalendarRoutes(ws), FormsRoutes(ws)):
        app.add_routes(routes.routes())
    return Parts(app, ws, WorkspaceState(ws))


async def start(options: Options) -> Running:
    parts = make_parts()
    runner, port = await aiohttp_site(parts.app, options.host, options.port("http"))
    return Running({"http": port}, runner.cleanup, parts.state)


EMULATOR = Emulator("workspace", "Serve emulated Google Workspace (Drive, Sheets, Forms, Calendar) until SIGTERM.",
                    ("http",), start)
