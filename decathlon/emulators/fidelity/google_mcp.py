"""Google's clients reaching emulators as an episode's do: the SaaS front (decathlon.emulators.front) in a thread of
its own, at Google's host names over TLS, each route relayed to a port it is given; and an MCP server started as an
agent's client starts one (a bare environment plus what it is given, over stdio), its tool answers as the model is
shown them. Shared by the Workspace fidelity tier and the Google stand-ins' tests (tests/google_fake.py)."""
from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

from decathlon.emulators.front import ca, routes
from decathlon.emulators.front.proxy import Front

LOCAL = "localhost,127.0.0.1,::1"


class FrontThread:
    """The front in a thread of its own, each emulator's route relayed to `port(name)`; `env` is what a client
    process gets to reach it (its proxy, and the CA bundle its TLS stacks read)."""

    def __init__(self, folder: Path, port: Callable[[str], int]) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        certs = ca.make(routes.certificate_names())
        self.bundle = ca.write_bundle(certs, folder / "saas")
        self.server = asyncio.run_coroutine_threadsafe(self._start(certs, port), self.loop).result(30)
        proxy = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        self.env = {"HTTPS_PROXY": proxy, "https_proxy": proxy, "NO_PROXY": LOCAL, "no_proxy": LOCAL,
                    "HTTPLIB2_CA_CERTS": str(self.bundle), "SSL_CERT_FILE": str(self.bundle),
                    "REQUESTS_CA_BUNDLE": str(self.bundle)}

    async def _start(self, certs: ca.Certificates, port: Callable[[str], int]) -> asyncio.Server:
        class Behind:
            """The emulator behind each route (the front asks only for a port)."""

            async def port(self, name: str) -> int:
                return port(name)

        front = Front(certs, Behind())  # type: ignore[arg-type]
        return await asyncio.start_server(front.handle, "127.0.0.1", 0)

    def close(self) -> None:
        async def stop() -> None:
            self.server.close()
        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@dataclass
class Session:
    session: ClientSession
    server_info: Any
    tools: list[Any]


@asynccontextmanager
async def connect(command: Path, args: list[str], env: dict[str, str], cwd: Path) -> AsyncIterator[Session]:
    """The server started as an agent's MCP client starts one: a bare environment plus what it is given."""
    params = StdioServerParameters(command=str(command), args=args, cwd=str(cwd), env={**get_default_environment(), **env})
    with open(cwd / f"{command.name}.stderr.log", "a") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as session:
            info = await asyncio.wait_for(session.initialize(), 60)
            tools = await asyncio.wait_for(session.list_tools(), 30)
            yield Session(session, info.server_info, tools.tools)


def shown(content: list[Any]) -> str:
    """A tool result's content as the recorded runs show it: one text item as its text, several as the JSON list of
    the items (`[{"type": "text", "text": …, "annotations": null}, …]`)."""
    if len(content) == 1 and content[0].type == "text":
        return str(content[0].text)
    return json.dumps([{"type": c.type, "text": getattr(c, "text", None), "annotations": None} for c in content])


async def call(session: Session, name: str, arguments: dict[str, Any] | None, seconds: float = 60) -> tuple[str, bool]:
    """The tool's answer as shown to the model, and whether the server flagged it an error."""
    result = await asyncio.wait_for(session.session.call_tool(name, arguments), seconds)
    return shown(result.content), bool(result.is_error)
