"""Stands in for the emulators behind the SaaS front in its tests. The front gives its emulators' interpreter
`-m decathlon.emulators.kit.forkserver ...` (the real forkserver, run here with fake emulators loaded in place of
the real ones) or, started alone, `-m decathlon.emulators.NAME --root R`. Each fake answers every GET with the
service, Host and path it saw. FAKE_FAIL=NAME makes that one fail to start; FAKE_SILENT=NAME makes it never say
ready."""
from __future__ import annotations

import asyncio
import os
import sys

from decathlon.emulators.kit import forkserver, runtime


class NoState:
    """A fake has nothing to reset, snapshot or seed; the front still hands each emulator a control socket."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def reset(self) -> None:
        pass

    async def snapshot(self, folder: object) -> dict:
        return {}

    async def restore(self, folder: object) -> dict:
        return {}

    async def load_seed(self, folder: object) -> dict:
        return {}


def fake(name: str) -> runtime.Emulator:
    async def start(options: runtime.Options) -> runtime.Running:
        from aiohttp import web
        if os.environ.get("FAKE_FAIL") == name:
            raise runtime.SetupError("cannot start (told to fail)")
        if os.environ.get("FAKE_SILENT") == name:
            await asyncio.sleep(3600)

        async def echo(request: web.Request) -> web.Response:
            return web.json_response({"service": name, "host": request.headers.get("Host"), "path": request.path_qs})

        app = web.Application()
        app.router.add_get("/{tail:.*}", echo)
        site, port = await runtime.aiohttp_site(app, options.host, options.port("http"))
        return runtime.Running({"http": port}, site.cleanup, state=NoState(name))

    return runtime.Emulator(name, f"a fake {name}", ("http",), start)


if __name__ == "__main__":
    module = sys.argv[2]
    if module == "decathlon.emulators.kit.forkserver":
        forkserver.load = fake
        sys.exit(forkserver.main(sys.argv[3:]))
    sys.exit(runtime.main(fake(module.rsplit(".", 1)[1]), sys.argv[3:]))
