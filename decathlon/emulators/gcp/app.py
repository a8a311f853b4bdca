"""The gcp emulator's aiohttp apps: the public one (BigQuery, Storage, OAuth, Resource Manager; routed by Host and
path: decathlon.emulators.gcp.hosts) and the control app on the grader's Unix socket (`GET /state`: a JSON summary for
debugging and tests)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from decathlon.emulators.gcp import errors, hosts, resourcemanager
from decathlon.emulators.gcp.bigquery.routes import BigQueryRoutes
from decathlon.emulators.gcp.bigquery.store import Warehouse
from decathlon.emulators.gcp.oauth import routes as oauth_routes
from decathlon.emulators.gcp.storage.routes import StorageRoutes
from decathlon.emulators.gcp.state import GcpState
from decathlon.emulators.gcp.storage.store import StorageStore
from decathlon.emulators.kit import errors as kit_errors
from decathlon.emulators.kit.clock import Clock, system_clock
from decathlon.emulators.kit.control import control_app
from decathlon.emulators.kit.errors import json_response
from decathlon.emulators.kit.ids import Ids
from decathlon.emulators.kit.reqlog import request_log
from decathlon.emulators.kit.runtime import Emulator, Options, Running, aiohttp_site


@dataclass
class State:
    warehouse: Warehouse
    storage: StorageStore

    def snapshot(self) -> dict[str, object]:
        with self.warehouse.lock:
            bq = self.warehouse.snapshot()
        buckets = [{"name": b.name, "location": b.location,
                    "objects": {name: len(o.data) for name, o in sorted(b.objects.items())}}
                   for b in sorted(self.storage.buckets.values(), key=lambda b: b.name)]
        return {"bigquery": bq, "storage": {"buckets": buckets}}


MAX_BODY = 1024 ** 3  # the largest request body read (a load or an upload in one request); beyond it, a 400


@dataclass
class Parts:
    app: web.Application
    state: State
    folders: GcpState  # what the control socket resets, snapshots, restores and seeds
    control_routes: tuple[web.RouteDef, ...]  # beside kit.control's: `GET /state`


def make_parts(clock: Clock = system_clock, ids: Ids | None = None, max_body: int = MAX_BODY) -> Parts:
    ids = ids or Ids()
    storage = StorageStore(clock, ids)
    state = State(Warehouse(clock, ids), storage)
    bigquery = BigQueryRoutes(state.warehouse, storage)
    gcs = StorageRoutes(storage)
    app = web.Application(middlewares=[request_log, hosts.by_host,
                                       kit_errors.middleware(errors.SHAPE)], client_max_size=max_body)
    app.add_routes(oauth_routes(ids))
    app.add_routes(resourcemanager.routes())
    app.add_routes(bigquery.routes())
    app.add_routes(gcs.routes())
    app.add_routes(gcs.media_routes())

    async def get_state(request: web.Request) -> web.Response:
        return json_response(await bigquery.call(state.snapshot))

    return Parts(app, state, GcpState(state.warehouse, storage, bigquery, gcs), (web.get("/state", get_state),))


def make_apps(clock: Clock = system_clock, ids: Ids | None = None, max_body: int = MAX_BODY,
              state_root: Path | None = None) -> tuple[web.Application, web.Application, State]:
    """The public app, the control app (kit.control's reset/snapshot/restore/seed on GcpState, folders under
    `state_root`: the control socket's folder; plus `GET /state`) and the state."""
    parts = make_parts(clock, ids, max_body)
    return parts.app, control_app(parts.folders, state_root or Path.cwd(), parts.control_routes), parts.state


async def start(options: Options) -> Running:
    parts = make_parts()
    runner, port = await aiohttp_site(parts.app, options.host, options.port("http"))
    return Running({"http": port}, runner.cleanup, parts.folders, parts.control_routes)


EMULATOR = Emulator("gcp", "Serve emulated Google Cloud (BigQuery, Cloud Storage, sign-in, Resource Manager) until "
                    "SIGTERM.", ("http",), start)
