"""MCP wiring: the reference's server name and version, its tools, one signed-in Calendar client for the process."""
from __future__ import annotations

from functools import partial

from ..google_api import Caller, UserCredentials
from ..stdio_tools import build_server, serve
from .schemas import TOOLS
from .tools import call

SERVER_NAME = "google-calendar"
SERVER_VERSION = "1.0.0"


async def run(user: UserCredentials) -> None:
    server = build_server(SERVER_NAME, SERVER_VERSION, TOOLS, partial(call, Caller(user)))
    await serve(server, "Google Calendar MCP Server running on stdio")
