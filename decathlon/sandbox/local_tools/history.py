"""history and manage_context: the agent's view of its own tool-call log.

The daemon sees every tool call and its result, so that log is the history these tools search
(a turn is one tool call). Shortening the context is the host's job: manage_context returns a
request that the host's episode loop applies to the conversation it sends to the model.
"""
from __future__ import annotations

import json

from decathlon.sandbox.local_tools.base import Context, LocalResult, LocalTool, ToolLogEntry, obj

PREVIEW = 300


def _brief(e: ToolLogEntry) -> str:
    text = e.content if len(e.content) <= PREVIEW else e.content[:PREVIEW] + "…"
    return f"[turn {e.turn}] {e.tool}({e.arguments[:PREVIEW]}){' ERROR' if e.is_error else ''}\n  → {text}"


def _turn(ctx: Context, n: object) -> ToolLogEntry | None:
    return next((e for e in ctx.log if e.turn == n), None)


async def _stats(args: dict, ctx: Context) -> LocalResult:
    tools: dict[str, int] = {}
    for e in ctx.log:
        tools[e.tool] = tools.get(e.tool, 0) + 1
    return LocalResult(json.dumps({"total_turns": len(ctx.log), "errors": sum(e.is_error for e in ctx.log),
                                   "tool_counts": dict(sorted(tools.items())),
                                   "total_result_chars": sum(len(e.content) for e in ctx.log)}, indent=2))


async def _search(args: dict, ctx: Context) -> LocalResult:
    words = args["keywords"]
    words = [words] if isinstance(words, str) else list(words)
    hits = [e for e in ctx.log if all(w.lower() in (e.tool + e.arguments + e.content).lower() for w in words)]
    per_page, page = max(1, int(args.get("per_page") or 10)), max(1, int(args.get("page") or 1))
    shown = hits[(page - 1) * per_page: page * per_page]
    head = f"Found {len(hits)} turns matching {words} (page {page}, {per_page} per page)"
    return LocalResult("\n".join([head, *(_brief(e) for e in shown)]))


async def _view(args: dict, ctx: Context) -> LocalResult:
    e = _turn(ctx, args["turn"])
    if e is None:
        return LocalResult(f"Error: no turn {args['turn']} (turns 1-{len(ctx.log)})", is_error=True)
    return LocalResult(f"[turn {e.turn}] {e.tool}\nArguments: {e.arguments}\nResult:\n{e.content}")


async def _search_in_turn(args: dict, ctx: Context) -> LocalResult:
    e = _turn(ctx, args["turn"])
    if e is None:
        return LocalResult(f"Error: no turn {args['turn']} (turns 1-{len(ctx.log)})", is_error=True)
    needle = args["pattern"].lower()
    lines = [f"{i + 1}: {line}" for i, line in enumerate(e.content.splitlines()) if needle in line.lower()]
    return LocalResult(f"{len(lines)} matching lines in turn {e.turn}\n" + "\n".join(lines[:200]))


async def _browse(args: dict, ctx: Context) -> LocalResult:
    start = max(1, int(args.get("start_turn") or 1))
    end = int(args.get("end_turn") or start + 9)
    shown = [e for e in ctx.log if start <= e.turn <= end]
    return LocalResult(f"Turns {start}-{end} of {len(ctx.log)}\n" + "\n".join(_brief(e) for e in shown))


async def _context_status(args: dict, ctx: Context) -> LocalResult:
    chars = sum(len(e.content) + len(e.arguments) for e in ctx.log)
    return LocalResult(json.dumps({"tool_turns": len(ctx.log), "approx_tool_chars": chars,
                                   "approx_tool_tokens": chars // 4}, indent=2))


def _keep(n: int, ctx: Context) -> LocalResult:
    if n < 0:
        return LocalResult("Error: the number of turns to keep must not be negative", is_error=True)
    return LocalResult(f"Context will be truncated to the last {n} turns (of {len(ctx.log)}) before your next step.",
                       context={"keep_last_turns": n})


async def _manage(args: dict, ctx: Context) -> LocalResult:
    return _keep(int(args["keep_last_turns"]), ctx)


async def _smart_truncate(args: dict, ctx: Context) -> LocalResult:
    return _keep(int(args.get("keep_recent") or 10), ctx)


_TURN = {"type": "integer", "description": "Turn number (1 is the first tool call)."}
HISTORY = [
    LocalTool("history_stats", "Statistics about the tool calls made so far.", obj({}), _stats),
    LocalTool("search_history", "Find earlier tool calls whose name, arguments or result contain all keywords.",
              obj({"keywords": {"type": ["string", "array"], "items": {"type": "string"}},
                   "page": {"type": "integer"}, "per_page": {"type": "integer"}}, ["keywords"]), _search),
    LocalTool("view_history_turn", "Show one earlier tool call in full.", obj({"turn": _TURN}, ["turn"]), _view),
    LocalTool("search_in_turn", "Find lines of one earlier result that contain a text.",
              obj({"turn": _TURN, "pattern": {"type": "string"}}, ["turn", "pattern"]), _search_in_turn),
    LocalTool("browse_history", "List a range of earlier tool calls briefly.",
              obj({"start_turn": _TURN, "end_turn": _TURN}), _browse),
]
CONTEXT = [
    LocalTool("check_context_status", "How much of the conversation the tool results take up.", obj({}),
              _context_status),
    LocalTool("manage_context", "Drop older turns from the conversation, keeping the most recent ones.",
              obj({"keep_last_turns": {"type": "integer", "description": "Turns to keep."}}, ["keep_last_turns"]),
              _manage),
    LocalTool("smart_context_truncate", "Shorten the conversation to its most recent turns (default 10).",
              obj({"keep_recent": {"type": "integer"}}), _smart_truncate),
]
