"""A tiny MCP server for tests: `echo` answers, `hang` never does, `big` returns a huge output."""
from __future__ import annotations

import os

import anyio
import mcp.types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

TOOLS = [
    types.Tool(name="echo", description="Echo the text back.",
               input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    types.Tool(name="hang", description="Never answers.", input_schema={"type": "object", "properties": {}}),
    types.Tool(name="env", description="The value of an environment variable.",
               input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
    types.Tool(name="big", description="A very long output.",
               input_schema={"type": "object", "properties": {"chars": {"type": "integer"}}}),
]


async def on_list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def on_call_tool(ctx, params: types.CallToolRequestParams):
    args = params.arguments or {}
    if params.name == "echo":
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(args.get("text")))])
    if params.name == "env":
        return types.CallToolResult(content=[types.TextContent(type="text", text=os.environ.get(str(args.get("name")), ""))])
    if params.name == "hang":
        await anyio.sleep(3600)
    if params.name == "big":
        text = "".join(f"line {i:06d} abcdefghij\n" for i in range(int(args.get("chars", 150000)) // 23 + 1))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"no tool {params.name}")], is_error=True)


async def main() -> None:
    server = Server("toy", version="1", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
