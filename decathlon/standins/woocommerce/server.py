"""MCP wiring: the lowlevel SDK server over stdio, one WooCommerce client for the process."""
from __future__ import annotations

import sys
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from ..memory.stringify import stringify
from .client import ToolError, WooClient
from .schemas import TOOLS
from .tools import run_tool

SERVER_NAME = "woocommerce-mcp-server"
SERVER_VERSION = "1.0.6"


def result_text(result: Any) -> str:
    """`JSON.stringify(result, null, 2).replace(/\\\\/g, '')`: every backslash removed, as the reference does."""
    return stringify(result, "  ").replace("\\", "")


async def call(client: WooClient, name: str, arguments: dict[str, Any] | None) -> tuple[str, bool]:
    try:
        result = await run_tool(client, name, arguments if arguments is not None else {})
    except ToolError as error:
        return f"Error: {error.message}", True
    return result_text(result), False


def build_server(client: WooClient) -> Server:
    tools = [types.Tool(name=spec["name"], description=spec["description"], input_schema=spec["inputSchema"])
             for spec in TOOLS]

    async def on_list_tools(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        text, is_error = await call(client, params.name, params.arguments)
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)

    return Server(SERVER_NAME, version=SERVER_VERSION, on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def serve(client: WooClient) -> None:
    server = build_server(client)
    async with stdio_server() as (read_stream, write_stream):
        # Upstream prints these to stdout, where they corrupt the protocol stream; stderr keeps them harmless.
        print(f"[WooCommerce] Initializing with base URL: {client.base_url}", file=sys.stderr)
        print("WooCommerce MCP Server v1.0.6 started successfully", file=sys.stderr)
        print(f"Connected to: {client.site_url}", file=sys.stderr)
        await server.run(read_stream, write_stream, server.create_initialization_options())
