"""Record and replay inside the daemon: every MCP call and its workspace side effects written down;
built-in tools checked against what they printed when recorded."""
from __future__ import annotations

import asyncio
import difflib
import json
import time
from pathlib import Path
from typing import Awaitable, Callable, Protocol, TypeVar

from decathlon.tape import delta
from decathlon.tape.canonical import detokenize, tokenize
from decathlon.tape.match import Matcher
from decathlon.tape.rules import WORKSPACE_SKIP, normalise_local
from decathlon.errors import InfraError, Kind
from decathlon.sandbox.routing import LOCAL

class _Answer(Protocol):
    is_error: bool
    raw_items: list[dict] | None


T = TypeVar("T", bound=_Answer)


def parse_args(raw: str | None) -> object:
    """A call's arguments for matching: the JSON value, or the raw text when it is not JSON."""
    if raw is None or raw.strip() == "":
        return {}
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        return raw


class Recorder:
    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.ws = str(workspace)
        self.servers: dict[str, dict] = {}
        self.local: list[dict] = []
        # One call at a time, so each workspace change is attributed to the call that made it.
        self.lock = asyncio.Lock()

    def add_server(self, name: str, tools: list[dict]) -> None:
        self.servers[name] = {"tools": tokenize(tools, self.ws), "interactions": []}

    async def mcp(self, server: str, tool: str, args: dict, call: Callable[[], Awaitable[T]]) -> T:
        async with self.lock:
            before = delta.snapshot(self.workspace, WORKSPACE_SKIP)
            start = time.monotonic()
            outcome = await call()
            elapsed = round((time.monotonic() - start) * 1000, 3)
            change = delta.diff(self.workspace, before, delta.snapshot(self.workspace, WORKSPACE_SKIP))
        items = outcome.raw_items
        if items is None:  # the call itself failed (timeout, crash): not a server answer to replay
            return outcome
        rec = self.servers[server]["interactions"]
        entry = {"seq": len(rec) + 1, "tool": tool, "arguments": tokenize(args, self.ws),
                 "result": {"content": tokenize(items, self.ws), "is_error": outcome.is_error}, "elapsed_ms": elapsed}
        if change:
            entry["workspace_delta"] = tokenize(change, self.ws)
        rec.append(entry)
        return outcome

    def local_call(self, tool: str, raw_args: str | None, content: str, is_error: bool) -> None:
        self.local.append({"seq": len(self.local) + 1, "tool": tool, "arguments": tokenize(parse_args(raw_args), self.ws),
                           "content": tokenize(content, self.ws), "is_error": is_error})

    def to_json(self) -> dict:
        return {"servers": self.servers, "local": {"mode": "live-checked", "interactions": self.local}}


class LocalReplay:
    """Built-in tools run for real in a replay (their side effects matter); what they print must
    equal the recording up to the declared volatile fields, and then the recorded text is shown."""

    def __init__(self, section: dict, workspace: Path) -> None:
        self.ws = str(workspace)
        # "replayed": an imported transcript, whose built-in tools cannot be re-run (no task files):
        # they are answered from it like a server.
        self.replayed = section.get("mode") == "replayed"
        self.matcher = Matcher(LOCAL, section.get("interactions", []))

    def _take(self, tool: str, raw_args: str | None) -> dict:
        args = tokenize(parse_args(raw_args), self.ws)
        item = self.matcher.take(tool, args)
        if item is None:
            raise InfraError(Kind.REPLAY_MISS, self.matcher.explain_miss(tool, args))
        return item

    def answer(self, tool: str, raw_args: str | None) -> str:
        return detokenize(self._take(tool, raw_args)["content"], self.ws)

    def check(self, tool: str, raw_args: str | None, content: str) -> str:
        want = self._take(tool, raw_args)["content"]
        have = tokenize(content, self.ws)
        if normalise_local(tool, have) != normalise_local(tool, want):
            diff = "\n".join(difflib.unified_diff(normalise_local(tool, want).splitlines(),
                                                  normalise_local(tool, have).splitlines(), "recorded", "replayed",
                                                  lineterm=""))
            raise InfraError(Kind.REPLAY_DIVERGENCE, f"local-{tool} printed something else than when recorded "
                             f"(arguments {(raw_args or '')[:200]!r}):\n{diff[:4000]}")
        return detokenize(want, self.ws)


class FrameworkReplay:
    """Calls an imported run's agent framework answered itself — a tool no server has, arguments that
    were not JSON — answered with what it said then, matched on the exact name and argument text."""

    def __init__(self, entries: list[dict], workspace: Path) -> None:
        self.ws = str(workspace)
        self.matcher = Matcher("", [{**e, "arguments": e["arguments_raw"]} for e in entries])

    def answer(self, tool: str, raw_args: str | None) -> str:
        args = tokenize(raw_args or "", self.ws)
        item = self.matcher.take(tool, args)
        if item is None:
            raise InfraError(Kind.REPLAY_MISS, self.matcher.explain_miss(tool, args)
                             + "\n(not a tool of any replayed server, or arguments that are not JSON)")
        return detokenize(item["content"], self.ws)
