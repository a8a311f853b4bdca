"""MCP wiring: the lowlevel SDK server over stdio."""

from __future__ import annotations

from mcp import MCPError, types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from .dispatch import ProtocolFailure, call_tool
from .schemas import TOOL_SPECS

SERVER_NAME = "@tokenizin/mcp-npx-fetch"
SERVER_VERSION = "0.13.37"  # what the package's index.ts reports, whatever its npm version


def build_server() -> Server:
    tools = [
        types.Tool(name=name, description=description, input_schema=schema)
        for name, (description, schema) in TOOL_SPECS.items()
    ]

    async def on_list_tools(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            text, is_error = await call_tool(params.name, params.arguments)
        except ProtocolFailure as failure:
            raise MCPError(types.INTERNAL_ERROR, failure.message) from None
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)

    return Server(SERVER_NAME, version=SERVER_VERSION, on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def serve() -> None:
    server = build_server()
    async with stdio_server() as (read_stream, write_stream):
        # Upstream logs nothing on start-up (its startup message was removed as it broke clients).
        await server.run(read_stream, write_stream, server.create_initialization_options())
