"""MCP wiring for a stand-in that is a list of tools and one call function: the lowlevel SDK server over stdio, every
tool answer one text item (and its error flag), as the Node references' servers answer."""
from __future__ import annotations

import sys
from typing import Any, Awaitable, Callable

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

Call = Callable[[str, "dict[str, Any] | None"], Awaitable[tuple[str, bool]]]


def build_server(name: str, version: str, specs: list[dict[str, Any]], call: Call) -> Server:
    tools = [types.Tool(name=spec["name"], description=spec["description"], input_schema=spec["inputSchema"])
             for spec in specs]

    async def on_list_tools(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        text, is_error = await call(params.name, params.arguments)
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)

    return Server(name, version=version, on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def serve(server: Server, started: str) -> None:
    async with stdio_server() as (read_stream, write_stream):
        # The references print this to stderr once connected; stdout is the protocol's.
        print(started, file=sys.stderr, flush=True)
        await server.run(read_stream, write_stream, server.create_initialization_options())
