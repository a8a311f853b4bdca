"""MCP wiring: the lowlevel SDK server over stdio, presenting itself as the reference does (`snowflake` 0.4.0).

The reference ran on a 1.x SDK whose `call_tool` decorator checked arguments against the tool's input
schema first (jsonschema, best match): a failure answers `Input validation error: <message>` with the
isError flag, the one flagged answer. Calls of unlisted names skip that check, as the SDK had no schema
for them. Missing arguments count as `{}`.

Besides tools: a `memo://insights` resource (always empty, as append_insight never succeeds upstream),
`context://table/<name>` resources under `--prefetch`, and an empty prompt list.
"""
from __future__ import annotations

import importlib
import logging
from typing import Any

import anyio
from mcp import MCPError, types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from .cli import Settings
from .database import SnowflakeDB
from .serialization import to_yaml
from .tools import NO_INSIGHTS, JsonResource, Text, Tools, prefetch_tables

logger = logging.getLogger("mcp_snowflake_server")

SERVER_NAME = "snowflake"
SERVER_VERSION = "0.4.0"  # importlib.metadata.version("mcp_snowflake_server") of the pinned fork
MEMO_URI = "memo://insights"


def input_error(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    jsonschema: Any = importlib.import_module("jsonschema")
    try:
        jsonschema.validate(instance=arguments, schema=schema)
    except jsonschema.ValidationError as error:
        return str(error.message)
    return None


def _content(piece: Text | JsonResource) -> types.TextContent | types.EmbeddedResource:
    if isinstance(piece, Text):
        return types.TextContent(text=piece.text)
    return types.EmbeddedResource(resource=types.TextResourceContents(uri=piece.uri, text=piece.text,
                                                                      mime_type="application/json"))


def build_server(tools: Tools, tables_info: dict[str, Any] | str) -> Server:
    listed = [types.Tool(name=spec.name, description=spec.description, input_schema=spec.input_schema)
              for spec in tools.listed]
    schemas = {spec.name: spec.input_schema for spec in tools.listed}

    async def on_list_tools(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def on_call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        schema = schemas.get(params.name)
        if schema is not None:
            message = input_error(schema, arguments)
            if message is not None:
                return types.CallToolResult(content=[types.TextContent(text=f"Input validation error: {message}")],
                                            is_error=True)
        pieces = await tools.call(params.name, arguments)
        return types.CallToolResult(content=[_content(piece) for piece in pieces], is_error=False)

    async def on_list_resources(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        resources = [types.Resource(uri=MEMO_URI, name="Data Insights Memo",
                                    description="A living document of discovered data insights", mime_type="text/plain")]
        if not isinstance(tables_info, dict):
            raise MCPError(0, "'str' object has no attribute 'keys'")
        resources += [types.Resource(uri=f"context://table/{name}", name=f"{name} table",
                                     description=f"Description of the {name} table", mime_type="text/plain")
                      for name in tables_info]
        return types.ListResourcesResult(resources=resources)

    async def on_read_resource(ctx: object, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri == MEMO_URI:
            text = NO_INSIGHTS
        elif uri.startswith("context://table"):
            name = uri.split("/")[-1]
            if not isinstance(tables_info, dict) or name not in tables_info:
                raise MCPError(0, f"Unknown table: {name}")
            text = to_yaml(tables_info[name])
        else:
            raise MCPError(0, f"Unknown resource: {uri}")
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, text=text, mime_type="text/plain")])

    async def on_list_prompts(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[])

    async def on_get_prompt(ctx: object, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        raise MCPError(0, f"Unknown prompt: {params.name}")

    return Server(SERVER_NAME, version=SERVER_VERSION, on_list_tools=on_list_tools, on_call_tool=on_call_tool,
                  on_list_resources=on_list_resources, on_read_resource=on_read_resource,
                  on_list_prompts=on_list_prompts, on_get_prompt=on_get_prompt)


async def serve(settings: Settings) -> None:
    logger.info("Starting Snowflake MCP Server")
    logger.info("Allow write operations: %s", settings.allow_write)
    logger.info("Prefetch table descriptions: %s", settings.prefetch)
    logger.info("Excluded tools: %s", settings.exclude_tools)
    logger.info(f"Exclusion patterns: {settings.exclusion}")
    db = SnowflakeDB(settings.connection, settings.private_key)
    async with anyio.create_task_group() as background:
        db.start(background)
        tables_info: dict[str, Any] | str = await prefetch_tables(db, settings.connection) if settings.prefetch else {}
        tools = Tools(db, settings)
        logger.info("Allowed tools: %s", [spec.name for spec in tools.listed])
        server = build_server(tools, tables_info)
        async with stdio_server() as (read_stream, write_stream):
            logger.info("Server running with stdio transport")
            await server.run(read_stream, write_stream, server.create_initialization_options())
        background.cancel_scope.cancel()
