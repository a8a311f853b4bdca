"""MCP wiring: the lowlevel SDK server over stdio."""

from __future__ import annotations

import sys
import threading

import anyio
import anyio.to_thread
from mcp import MCPError, types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from .dispatch import ToolFailure, call_tool
from .schemas import TOOL_SPECS
from .storage import MemoryFile

SERVER_NAME = "memory-server"
SERVER_VERSION = "0.6.3"  # what the pinned 2025.4.25 package reports


def build_server(store: MemoryFile) -> Server:
    tools = [
        types.Tool(name=name, description=description, input_schema=schema)
        for name, (description, schema) in TOOL_SPECS.items()
    ]
    # Upstream interleaves concurrent calls' load-modify-save cycles and can lose updates; calls
    # here run one at a time, in arrival order, so the file always reflects every completed call.
    one_at_a_time = threading.Lock()

    def run(name: str, arguments: dict | None) -> str:
        with one_at_a_time:
            return call_tool(store, name, arguments)

    async def on_list_tools(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            # Worker thread: file I/O must not stall the protocol loop.
            text = await anyio.to_thread.run_sync(run, params.name, params.arguments)
        except ToolFailure as failure:
            # Upstream throws from its request handler, which the SDK answers with a JSON-RPC
            # error rather than an isError result (a recorded run shows the client raising on it).
            raise MCPError(types.INTERNAL_ERROR, failure.message) from None
        return types.CallToolResult(content=[types.TextContent(text=text)])

    return Server(SERVER_NAME, version=SERVER_VERSION, on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def serve(store: MemoryFile) -> None:
    server = build_server(store)
    async with stdio_server() as (read_stream, write_stream):
        print("Knowledge Graph MCP Server running on stdio", file=sys.stderr)
        await server.run(read_stream, write_stream, server.create_initialization_options())
