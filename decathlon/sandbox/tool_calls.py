"""One tool call: route it, run it, and shape the answer the model sees (Toolathlon's wording)."""
from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

import mcp.types as types
from mcp import MCPError
from pydantic import TypeAdapter

from decathlon.sandbox.replay.protocol import REPLAY_MISS_CODE, verbatim
from decathlon.errors import InfraError, Kind
from decathlon.sandbox.local_tools.base import ArgError, Context, LocalTool, ToolLogEntry, check_args
from decathlon.sandbox.mcp_pool import HeldServer, _describe
from decathlon.sandbox.recording import FrameworkReplay, LocalReplay, Recorder
from decathlon.sandbox.routing import LOCAL, route
from decathlon.sandbox.toolfmt import cut_overlong, render


@dataclass
class Outcome:
    content: str
    is_error: bool
    context: dict | None = None
    raw_items: list[dict] | None = None  # an MCP result's content items as received (for recording)
    verbatim: bool = False  # an imported transcript's exact string: shown as is, never cut again


def parse_args(full_name: str, tool: str, raw: str | None) -> dict[str, Any] | Outcome:
    if raw is None or raw.strip() == "":
        return {}
    try:
        args = json.loads(raw)
    except (json.JSONDecodeError, TypeError, RecursionError):  # RecursionError: nested past the parser's depth
        return Outcome(f"Error running tool {full_name}: Invalid JSON input for tool {tool}: {raw}", True)
    if not isinstance(args, dict):
        return Outcome(f"Error running tool {full_name}: Invalid JSON input for tool {tool}: expected a JSON "
                       f"object of arguments, got {type(args).__name__}: {raw}", True)
    return args


class Executor:
    def __init__(self, servers: dict[str, HeldServer], local: dict[str, LocalTool], ctx: Context,
                 recorder: Recorder | None = None, local_replay: LocalReplay | None = None,
                 framework: FrameworkReplay | None = None) -> None:
        self.servers = servers
        self.local = local
        self.ctx = ctx
        self.recorder = recorder
        self.local_replay = local_replay
        # Calls an imported run's agent framework answered itself (unknown tools, arguments not JSON).
        self.framework = framework
        self.seq = 0
        self.known = {f"{name}-{t.name}" for name, h in servers.items() for t in h.tools}
        self.known |= {f"{LOCAL}-{name}" for name in local}

    def not_found(self, full_name: str) -> Outcome:
        return Outcome(f"Tool {full_name} not found in agent Assistant. Available tools: "
                       f"{', '.join(sorted(self.known))}", True)

    async def run(self, full_name: str, raw_args: str | None) -> Outcome:
        self.seq += 1
        out = await self._dispatch(full_name, raw_args)
        if not out.verbatim:
            out.content = cut_overlong(out.content, full_name, self.ctx.workspace, self.seq)
        self.ctx.log.append(ToolLogEntry(self.seq, full_name, raw_args or "", out.content, out.is_error))
        return out

    async def _dispatch(self, full_name: str, raw_args: str | None) -> Outcome:
        r = route(full_name, sorted(self.servers))
        if r is None or full_name not in self.known:
            return self._framework(full_name, raw_args) or self.not_found(full_name)
        args = parse_args(full_name, r.tool, raw_args)
        if isinstance(args, Outcome):
            return self._framework(full_name, raw_args) or args
        if r.server == LOCAL:
            return await self._run_local(full_name, r.tool, raw_args, args)
        held, tool = self.servers[r.server], r.tool
        if self.recorder is not None:
            return await self.recorder.mcp(r.server, tool, args, lambda: self._mcp(full_name, held, tool, args))
        return await self._mcp(full_name, held, tool, args)

    def _framework(self, full_name: str, raw_args: str | None) -> Outcome | None:
        if self.framework is None:
            return None
        return Outcome(self.framework.answer(full_name, raw_args), True, verbatim=True)

    async def _run_local(self, full_name: str, tool: str, raw_args: str | None, args: dict) -> Outcome:
        if self.local_replay is not None and self.local_replay.replayed:
            return Outcome(self.local_replay.answer(tool, raw_args), False, verbatim=True)
        out = await self._local(full_name, self.local[tool], args)
        if self.recorder is not None:
            self.recorder.local_call(tool, raw_args, out.content, out.is_error)
        if self.local_replay is not None:
            out.content = self.local_replay.check(tool, raw_args, out.content)
        return out

    async def _local(self, full_name: str, tool: LocalTool, args: dict) -> Outcome:
        try:
            check_args(tool.parameters, args)
            res = await tool.run(args, self.ctx)
        except ArgError as exc:
            return Outcome(f"Error running tool {full_name}: invalid arguments: {exc}", True)
        except Exception as exc:  # noqa: BLE001 - a bug in a local tool is the tool's error, shown as Toolathlon would
            return Outcome(f"Error running tool {full_name}: {_describe(exc)}", True)
        return Outcome(res.text, res.is_error, res.context)

    async def _mcp(self, full_name: str, held: HeldServer, tool: str, args: dict) -> Outcome:
        if held.session is None:
            return Outcome(f"Error running tool {full_name}: Error invoking MCP tool {tool}: the server "
                           f"{held.spec.name} is not running; stderr tail: {held.stderr_tail()}", True)
        timeout = held.spec.timeout
        try:
            raw = await asyncio.wait_for(call_raw(held.session, tool, args, timeout), timeout + 5)
        except asyncio.TimeoutError:
            msg = f"Timed out while waiting for response to ClientRequest. Waited {timeout} seconds."
            return Outcome(f"Error running tool {full_name}: Error invoking MCP tool {tool}: {msg}", True)
        except Exception as exc:  # noqa: BLE001 - a server's failure is the tool's error (a replay miss aside)
            miss = replay_miss(exc)
            if miss is not None:
                raise InfraError(Kind.REPLAY_MISS, miss) from None
            detail = _describe(exc)
            if "timed out" in detail.lower() or "timeout" in detail.lower():
                detail = f"Timed out while waiting for response to ClientRequest. Waited {timeout} seconds."
            else:
                detail = str(exc) or detail
            return Outcome(f"Error running tool {full_name}: Error invoking MCP tool {tool}: {detail}", True)
        items = raw.get("content") or []
        shown = verbatim(items)
        if shown is not None:
            return Outcome(shown, bool(raw.get("isError")), raw_items=items, verbatim=True)
        return Outcome(render(items), bool(raw.get("isError")), raw_items=items)


_RAW = TypeAdapter(dict[str, Any])


async def call_raw(session, tool: str, args: dict, timeout: float) -> dict[str, Any]:
    """tools/call, keeping the result as sent: typed models would drop fields a server adds to its
    content items (cli-mcp-server's "error": true), which Toolathlon's client showed the model."""
    request = types.CallToolRequest(params=types.CallToolRequestParams(name=tool, arguments=args))
    return await session.send_request(request, _RAW, request_read_timeout_seconds=timeout)


def replay_miss(exc: BaseException) -> str | None:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError) and exc.code == REPLAY_MISS_CODE:
        return exc.message
    return None


def elapsed_ms(start: float) -> float:
    return round((time.monotonic() - start) * 1000, 3)
