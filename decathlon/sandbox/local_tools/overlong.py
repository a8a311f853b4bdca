"""Paging through tool outputs that were cut at 100,000 characters (handle_overlong_tool_outputs)."""
from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import re
import sys

from decathlon.sandbox.local_tools.base import Context, LocalResult, LocalTool, obj
from decathlon.sandbox.toolfmt import OVERLONG_DIR

RULE = "=" * 80
# The agent's own pattern: one that backtracks catastrophically ("(x+x+)+y") would hold the daemon's
# event loop, and every later call with it, for as long as it runs. So the search runs in a child
# process, killed past this many seconds.
SEARCH_TIMEOUT = 10.0
_SEARCH = ("import json, re, sys\n"
           "req = json.load(sys.stdin)\n"
           "spans = [n for m in re.finditer(req['pattern'], req['text'], re.IGNORECASE | re.DOTALL) for n in m.span()]\n"
           "json.dump(spans, sys.stdout)\n")
_NAV = {"type": "string", "enum": ["next_page", "prev_page", "first_page", "last_page", "jump_to_page"],
        "description": "Where to move."}


def _load(ctx: Context, uid: str) -> str | None:
    if not re.fullmatch(r"[A-Za-z0-9]{1,64}", uid or ""):
        return None
    path = ctx.workspace / OVERLONG_DIR / f"{uid}.json"
    try:
        return path.read_text(encoding="utf-8", errors="surrogatepass")
    except (OSError, ValueError):
        return None


def _session_id(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:8]


def _view_page(ctx: Context, sid: str) -> LocalResult:
    s = ctx.overlong_sessions[sid]
    text, size, page = s["text"], s["page_size"], s["page"]
    pages = max(1, math.ceil(len(text) / size))
    start, end = (page - 1) * size, min(page * size, len(text))
    first_line = text.count("\n", 0, start) + 1
    last_line = text.count("\n", 0, end) + 1
    return LocalResult(f"Viewing {s['uid']} (Page {page}/{pages})\nCharacters {start}-{end} of {len(text)} | "
                       f"Lines ~{first_line}-{last_line}\nView Session ID: {sid}\n{RULE}\n\n{text[start:end]}")


def _search_page(ctx: Context, sid: str) -> LocalResult:
    s = ctx.overlong_sessions[sid]
    matches, size, page, text = s["matches"], s["page_size"], s["page"], s["text"]
    pages = max(1, math.ceil(len(matches) / size))
    lines = [f"Search Results in {s['uid']} (Page {page}/{pages})",
             f"Pattern: '{s['pattern']}' | Total matches: {len(matches)} | File size: {len(text)} chars",
             f"Search Session ID: {sid}", RULE, ""]
    for i, (a, b) in enumerate(matches[(page - 1) * size: page * size], start=(page - 1) * size + 1):
        lo, hi = max(0, a - s["context"]), min(len(text), b + s["context"])
        lines += [f"Match {i} (Line ~{text.count(chr(10), 0, a) + 1}, Pos {a}-{b}):", "-" * 60, text[lo:hi], ""]
    if not matches:
        lines.append("No matches found.")
    return LocalResult("\n".join(lines))


def _move(s: dict, args: dict, total_pages: int) -> str | None:
    action = args["action"]
    page = {"next_page": s["page"] + 1, "prev_page": s["page"] - 1, "first_page": 1,
            "last_page": total_pages, "jump_to_page": args.get("target_page") or 0}[action]
    if not 1 <= page <= total_pages:
        return f"Error: page {page} is out of range (1-{total_pages})"
    s["page"] = page
    return None


async def _view(args: dict, ctx: Context) -> LocalResult:
    uid = args["shortuuid"]
    text = _load(ctx, uid)
    if text is None:
        return LocalResult(f"Error: No overlong tool output found for shortuuid: {uid}", is_error=True)
    size = max(1, int(args.get("page_size") or 10000))
    sid = _session_id("view", uid, size, len(ctx.overlong_sessions))
    ctx.overlong_sessions[sid] = {"kind": "view", "uid": uid, "text": text, "page_size": size, "page": 1}
    return _view_page(ctx, sid)


async def _search(args: dict, ctx: Context) -> LocalResult:
    uid = args["shortuuid"]
    text = _load(ctx, uid)
    if text is None:
        return LocalResult(f"Error: No overlong tool output found for shortuuid: {uid}", is_error=True)
    try:
        re.compile(args["pattern"], re.IGNORECASE | re.DOTALL)
    except (re.error, RecursionError, OverflowError) as exc:
        return LocalResult(f"Error: invalid regular expression: {exc}", is_error=True)
    matches = await _find(args["pattern"], text)
    if isinstance(matches, str):
        return LocalResult(matches, is_error=True)
    sid = _session_id("search", uid, args["pattern"], len(ctx.overlong_sessions))
    ctx.overlong_sessions[sid] = {"kind": "search", "uid": uid, "text": text, "pattern": args["pattern"],
                                  "matches": matches, "page_size": max(1, int(args.get("page_size") or 10)),
                                  "context": max(0, int(args.get("context_size") or 1000)), "page": 1}
    return _search_page(ctx, sid)


async def _find(pattern: str, text: str) -> list[tuple[int, int]] | str:
    """Every match's span, found off the event loop and bounded in time; or the error to show."""
    timeout = float(os.environ.get("DECATHLON_REGEX_TIMEOUT") or SEARCH_TIMEOUT)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-I", "-S", "-c", _SEARCH, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    request = json.dumps({"pattern": pattern, "text": text}).encode()  # ASCII: lone surrogates survive
    try:
        out, err = await asyncio.wait_for(proc.communicate(request), timeout)
    except asyncio.TimeoutError:
        return (f"Error: the search with pattern '{pattern}' did not finish within {timeout:g} s and was stopped "
                "(a pattern with nested repetition, such as (x+x+)+y, can take exponential time); simplify it")
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    if proc.returncode != 0:
        return f"Error: the search with pattern '{pattern}' failed: {err.decode('utf-8', 'replace')[-500:]}"
    flat = json.loads(out)
    return list(zip(flat[0::2], flat[1::2]))


def _navigator(kind: str):
    async def run(args: dict, ctx: Context) -> LocalResult:
        sid = args[f"{kind}_session_id"]
        s = ctx.overlong_sessions.get(sid)
        if s is None or s["kind"] != kind:
            return LocalResult(f"Error: No {kind} session found for id: {sid}", is_error=True)
        count = len(s["text"]) if kind == "view" else len(s["matches"])
        problem = _move(s, args, max(1, math.ceil(count / s["page_size"])))
        if problem:
            return LocalResult(problem, is_error=True)
        return _view_page(ctx, sid) if kind == "view" else _search_page(ctx, sid)
    return run


_UID = {"type": "string", "description": "The shortuuid identifier given in the cut-off output."}
TOOLS = [
    LocalTool("search_overlong_tooloutput", "Search a cut-off tool output with a regular expression.",
              obj({"shortuuid": _UID, "pattern": {"type": "string", "description": "Regular expression."},
                   "page_size": {"type": "integer", "description": "Matches per page (default 10)."},
                   "context_size": {"type": "integer", "description": "Characters shown around a match."}},
                  ["shortuuid", "pattern"]), _search),
    LocalTool("search_overlong_tooloutput_navigate", "Move between pages of an earlier search.",
              obj({"search_session_id": {"type": "string"}, "action": _NAV, "target_page": {"type": "integer"}},
                  ["search_session_id", "action"]), _navigator("search")),
    LocalTool("view_overlong_tooloutput", "Read a cut-off tool output page by page.",
              obj({"shortuuid": _UID, "page_size": {"type": "integer", "description": "Characters per page."}},
                  ["shortuuid"]), _view),
    LocalTool("view_overlong_tooloutput_navigate", "Move between pages of an earlier view.",
              obj({"view_session_id": {"type": "string"}, "action": _NAV, "target_page": {"type": "integer"}},
                  ["view_session_id", "action"]), _navigator("view")),
]
