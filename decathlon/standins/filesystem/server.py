"""MCP wiring: the lowlevel SDK server over stdio."""

from __future__ import annotations

import sys

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from .dispatch import call_tool
from .paths import Sandbox
from .schemas import TOOL_SPECS

SERVER_NAME = "secure-filesystem-server"
SERVER_VERSION = "0.2.0"


def build_server(sandbox: Sandbox) -> Server:
    tools = [
        types.Tool(name=name, description=description, input_schema=schema)
        for name, (description, schema) in TOOL_SPECS.items()
    ]

    async def on_list_tools(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        # Worker thread: a large tree walk must not stall the protocol loop.
        text, is_error = await anyio.to_thread.run_sync(call_tool, sandbox, params.name, params.arguments)
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)

    return Server(SERVER_NAME, version=SERVER_VERSION, on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def serve(sandbox: Sandbox) -> None:
    server = build_server(sandbox)
    print("Secure MCP Filesystem Server running on stdio", file=sys.stderr)
    print(f"Allowed directories: {sandbox.roots}", file=sys.stderr)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
