"""The generic replay MCP server: a cassette's tool list, and each call answered from the recording.

Strict: a call that was not recorded (or is made more often than recorded) is an MCP error with code
REPLAY_MISS_CODE naming the call and the nearest recorded calls; nothing is invented. A recorded
call's workspace side effects are re-applied, so the workspace evolves as it did when recorded.
"""
from __future__ import annotations

from pathlib import Path

import mcp.types as types
from mcp import MCPError
from mcp.server import Server

from decathlon.tape import delta
from decathlon.tape.canonical import detokenize, tokenize
from decathlon.tape.match import Matcher
from decathlon.sandbox.replay.protocol import REPLAY_MISS_CODE, pack_extras, shown_item


def build_server(name: str, recording: dict, workspace: Path | None = None) -> Server:
    ws = str(workspace) if workspace is not None else ""
    tools = [types.Tool.model_validate(t) for t in recording["tools"]]
    matcher = Matcher(name, recording["interactions"], recording.get("volatile_arguments"))

    async def on_list_tools(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: object, params: types.CallToolRequestParams) -> dict:
        args = tokenize(params.arguments or {}, ws)
        item = matcher.take(params.name, args)
        if item is None:
            raise MCPError(code=REPLAY_MISS_CODE, message=matcher.explain_miss(params.name, args))
        if workspace is not None:
            delta.apply(workspace, detokenize(item.get("workspace_delta"), ws))
        result = detokenize(item["result"], ws)
        if "shown" in result:  # imported from a transcript: the exact string the model saw
            return {"content": [shown_item(result["shown"])], "isError": bool(result.get("is_error"))}
        # A plain dict, so the recorded items reach the client as recorded (extras carried in _meta).
        return {"content": [pack_extras(i) for i in result["content"]], "isError": bool(result.get("is_error"))}

    # The SDK's runner takes a dict result as it takes a model (mcp.server.runner._dump_result); its
    # on_call_tool annotation names only the models.
    return Server(f"replay-{name}", version="1", on_list_tools=on_list_tools,
                  on_call_tool=on_call_tool)  # type: ignore[arg-type]
