"""MCP wiring: the lowlevel SDK server over stdio, as ``canvas-mcp-server`` 2.2.3."""

from __future__ import annotations

import sys

from mcp import MCPError, types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from .api import CanvasApi
from .client import CanvasClient
from .dispatch import ProtocolFailure, call_tool, wire_safe
from .resources import MIME, list_resources, read_resource
from .schemas import TOOL_SPECS
from .tools import Context
from .transport import Transport

SERVER_NAME = "canvas-mcp-server"
SERVER_VERSION = "2.2.3"


def build_server(ctx: Context) -> Server:
    tools = [
        types.Tool(name=name, description=description, input_schema=schema)
        for name, (description, schema) in TOOL_SPECS.items()
    ]

    async def on_list_tools(_: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(_: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            text, is_error = await call_tool(ctx, params.name, params.arguments)
        except ProtocolFailure as failure:
            raise MCPError(types.INTERNAL_ERROR, failure.message) from None
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=is_error)

    async def on_list_resources(_: object, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        entries = await list_resources(ctx.client)
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=e.uri, name=wire_safe(e.name), description=wire_safe(e.description), mime_type=MIME)
                for e in entries
            ]
        )

    async def on_read_resource(_: object, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        text = await read_resource(ctx.client, uri)
        if text is None:
            raise MCPError(types.INTERNAL_ERROR, f"{uri} has no content (JSON.stringify gave undefined)")
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=MIME, text=wire_safe(text))]
        )

    return Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_read_resource=on_read_resource,
    )


async def serve(token: str, domain: str) -> None:
    transport = Transport()
    api = CanvasApi(token, domain, transport)
    ctx = Context(api=api, client=CanvasClient(api))
    server = build_server(ctx)
    try:
        async with stdio_server() as (read_stream, write_stream):
            print(f"{SERVER_NAME} running on stdio", file=sys.stderr)
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await transport.aclose()
