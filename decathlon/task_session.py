"""The host's side of the wire: task-api verbs over a sandbox's exec, one JSON object per call."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from decathlon.backends.base import Sandbox
from decathlon.backends.daemon_channel import NotConnected
from decathlon.errors import InfraError

MESSAGES_PATH = "messages.json"
CASSETTE_PATH = "run/cassette.json"  # relative to the episode's home in the sandbox
RECORDED_PATH = "cassette.json"  # where a recording episode leaves its cassette
RECORDED_TRAJECTORY = "trajectory.json"  # and the (redacted) conversation that drove it


@dataclass(frozen=True)
class Timeouts:
    setup: float = 900.0
    tool: float = 1200.0  # above every server's own per-call timeout: the daemon answers first
    evaluate: float = 900.0
    teardown: float = 60.0


@dataclass(frozen=True)
class SetupResult:
    tools: list[dict]
    system_prompt: str
    prompt: str
    launch_time: str
    workspace: str
    timings: dict[str, float]
    raw: dict = field(repr=False)


@dataclass(frozen=True)
class ToolResult:
    content: str
    is_error: bool
    elapsed_ms: float
    context: dict | None = None


@dataclass(frozen=True)
class EvalResult:
    passed: bool | None
    metrics: dict[str, float]
    exit_code: int | None
    output_tail: str
    elapsed_ms: float


class TaskSession:
    def __init__(self, sandbox: Sandbox, timeouts: Timeouts | None = None) -> None:
        self.sandbox = sandbox
        self.timeouts = timeouts or Timeouts()

    async def _call(self, phase: str, argv: list[str], timeout: float) -> dict:
        res = await self.sandbox.exec(["task-api", *argv], timeout=timeout)
        # "\n" only: str.splitlines() also breaks on U+0085, U+2028…, which tool output may contain raw
        # inside the one JSON line task-api prints.
        lines = [line for line in res.stdout.split("\n") if line.strip()]
        try:
            reply = json.loads(lines[-1]) if lines else None
        except json.JSONDecodeError:
            reply = None
        if not isinstance(reply, dict):
            raise InfraError("bad_reply", f"task-api {argv[0]} printed no JSON object (exit {res.exit_code}); "
                             f"stderr: {res.stderr[-1500:] or '(empty)'}", phase)
        if res.exit_code != 0 or "error" in reply:
            err = reply.get("error") or {}
            raise InfraError(err.get("kind", "task_api_failed"), err.get("message", f"exit {res.exit_code}"), phase)
        return reply

    async def setup(self, task: str, launch_time: str | None = None, mode: str = "live",
                    cassette: bytes | None = None) -> SetupResult:
        argv = ["setup", task, "--source", self.sandbox.source_path, "--mode", mode]
        if launch_time:
            argv += ["--launch-time", launch_time]
        if cassette is not None:
            await self.sandbox.put_file(CASSETTE_PATH, cassette)
            argv += ["--cassette", CASSETTE_PATH]
        r = await self._call("setup", argv, self.timeouts.setup)
        return SetupResult(r["tools"], r["system_prompt"], r["prompt"], r["launch_time"], r["workspace"],
                           r.get("timings", {}), r)

    async def execute(self, tool: str, args_json: str) -> ToolResult:
        direct = getattr(self.sandbox, "daemon_request", None) if getattr(self.sandbox, "direct", False) else None
        r = None
        if direct is not None:
            try:
                r = await direct({"op": "execute", "tool": tool, "args": args_json}, self.timeouts.tool)
            except NotConnected:
                pass  # nothing was sent: task-api (exec) asks, and names what is wrong if anything is
            except InfraError as exc:
                raise InfraError(exc.kind, exc.message, "execute") from None
            if r is not None and "error" in r:
                raise InfraError(r["error"].get("kind", "task_api_failed"), r["error"].get("message", ""), "execute")
        if r is None:
            r = await self._call("execute", ["execute", tool, args_json], self.timeouts.tool)
        return ToolResult(r["content"], bool(r["is_error"]), float(r.get("elapsed_ms", 0.0)), r.get("context"))

    async def evaluate(self, messages: list[dict], status: str = "success") -> EvalResult:
        await self.sandbox.put_file(MESSAGES_PATH, json.dumps(messages, ensure_ascii=False).encode())
        r = await self._call("evaluate", ["evaluate", "--messages", MESSAGES_PATH, "--status", status],
                             self.timeouts.evaluate)
        return EvalResult(r["pass"], r.get("metrics", {}), r.get("exit_code"), r.get("output_tail", ""),
                          float(r.get("elapsed_ms", 0.0)))

    async def teardown(self) -> None:
        await self._call("teardown", ["teardown"], self.timeouts.teardown)
