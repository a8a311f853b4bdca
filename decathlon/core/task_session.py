"""The host's side of the wire: task-api verbs over a sandbox's exec, one JSON object per call."""
from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from decathlon.backends.base import Sandbox
from decathlon.backends.daemon_channel import NotConnected
from decathlon.errors import InfraError, Kind
from decathlon.contract.replies import (EVALUATE_REPLY_MAX, EXECUTE_REPLY_MAX, OTHER_REPLY_MAX, SETUP_REPLY_MAX, EvaluateReply,
                               ExecuteReply, SetupReply, check, decode, sandbox_error, too_large)

MESSAGES_PATH = "messages.json"
CASSETTE_PATH = "run/cassette.json"  # relative to the episode's home in the sandbox
RECORDED_PATH = "cassette.json"  # where a recording episode leaves its cassette
RECORDED_TRAJECTORY = "trajectory.json"  # and the (redacted) conversation that drove it
PHASE_PATH = "state/phase"  # which step setup is at (decathlon/sandbox/setup.py), for a progress display
PHASE_POLL = 1.0  # seconds between looks at it; only where a display asks (never in training)


@dataclass(frozen=True)
class Timeouts:
    setup: float = 900.0
    tool: float = 1200.0  # above every server's own per-call timeout: the daemon answers first
    evaluate: float = 900.0
    teardown: float = 60.0


# The replies are the wire's own models (decathlon.contract.replies), read back as the sandbox wrote them.
SetupResult = SetupReply
ToolResult = ExecuteReply
EvalResult = EvaluateReply


# Below this, a tool call rides on `task-api execute TOOL ARGS` (one exec, no extra upload on backends
# where stdin is a file put first); far below Linux's 128 KiB per argument.
ARGV_MAX = 16 << 10


def execute_request(tool: str, args_json: str) -> tuple[list[str], bytes | None]:
    """How one tool call travels through exec: on argv when that is safe, else as JSON on stdin
    (`task-api execute -`). argv cannot carry a NUL ("invalid argument") nor 300 KB ("argument list too
    long"), nor a lone surrogate (not UTF-8), and a name that looks like an option or `-` would be read
    as one."""
    both = tool + args_json
    if len(both) <= ARGV_MAX and "\0" not in both and not tool.startswith("-") and _utf8(both):
        return ["execute", tool, args_json], None
    # ASCII JSON: every string escaped, so any str (lone surrogates too) reaches the sandbox as sent.
    return ["execute", "-"], json.dumps({"tool": tool, "args": args_json}).encode()


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_bytes(obj: object) -> bytes:
    """UTF-8 JSON, readable as is; escaped instead where a string holds a lone surrogate (not UTF-8)."""
    try:
        return json.dumps(obj, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return json.dumps(obj).encode()


class TaskSession:
    def __init__(self, sandbox: Sandbox, timeouts: Timeouts | None = None) -> None:
        self.sandbox = sandbox
        self.timeouts = timeouts or Timeouts()

    async def _call(self, phase: str, argv: list[str], timeout: float, max_bytes: int,
                    stdin: bytes | None = None) -> dict:
        """One verb through exec: its last output line, as a JSON object that is not an error.

        Every byte of it is the sandbox's: bounded in size, checked as JSON, and an error it reports is
        marked as its word (see errors.environment_owned)."""
        res = await self.sandbox.exec(["task-api", *argv], stdin=stdin, timeout=timeout)
        what = f"task-api {argv[0]}"
        # The last line only; "\n" only: str.splitlines() also breaks on U+0085, U+2028…, which tool output
        # may contain raw inside the one JSON line task-api prints.
        last = res.stdout.rstrip().rpartition("\n")[2]
        if len(last) > max_bytes:
            raise too_large(what, max_bytes, phase)
        if not last.strip():
            raise InfraError(Kind.BAD_REPLY, f"{what} printed no JSON object (exit {res.exit_code}); "
                             f"stderr: {res.stderr[-1500:] or '(empty)'}", phase)
        reply = decode(last, what, phase)
        if res.exit_code != 0 or "error" in reply:
            if "error" not in reply:
                raise InfraError(Kind.BAD_REPLY, f"{what} exited {res.exit_code} without naming an error; "
                                 f"stderr: {res.stderr[-1500:] or '(empty)'}", phase)
            raise sandbox_error(reply, what, phase)
        return reply

    async def setup(self, task: str, launch_time: str | None = None, mode: str = "live",
                    cassette: bytes | None = None, omit_unavailable: bool = False,
                    frozen_clock: bool = False, saas: str = "emulated",
                    on_step: Callable[[str], None] | None = None, seeds: str | None = None) -> SetupResult:
        """`on_step` hears each step of setup as it starts (`services`, `preprocess`, `servers`…): setup is one
        exec, and a SaaS task's takes a minute on a loaded machine."""
        if on_step is None:
            return await self._setup(task, launch_time, mode, cassette, omit_unavailable, frozen_clock, saas, seeds)
        watcher = asyncio.ensure_future(self._watch_steps(on_step))
        try:
            return await self._setup(task, launch_time, mode, cassette, omit_unavailable, frozen_clock, saas, seeds)
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    async def _watch_steps(self, on_step: Callable[[str], None]) -> None:
        said = ""
        while True:
            await asyncio.sleep(PHASE_POLL)
            try:
                step = (await asyncio.wait_for(self.sandbox.get_file(PHASE_PATH), PHASE_POLL * 5)).decode()[:40]
            except Exception:  # noqa: BLE001 - not written yet, or the sandbox slow to answer: the next look tells
                continue
            if step and step != said:
                said = step
                on_step(step)

    async def _setup(self, task: str, launch_time: str | None, mode: str, cassette: bytes | None,
                     omit_unavailable: bool, frozen_clock: bool, saas: str, seeds: str | None) -> SetupResult:
        argv = ["setup", task, "--source", self.sandbox.source_path, "--mode", mode]
        if seeds is not None:
            argv += ["--seeds", seeds]
        if saas != "emulated":
            argv += ["--saas", saas]
        if omit_unavailable:
            argv.append("--omit-unavailable-servers")
        if frozen_clock:
            argv.append("--frozen-clock")
        if launch_time:
            argv += ["--launch-time", launch_time]
        if cassette is not None:
            await self.sandbox.put_file(CASSETTE_PATH, cassette)
            argv += ["--cassette", CASSETTE_PATH]
        r = await self._call("setup", argv, self.timeouts.setup, SETUP_REPLY_MAX)
        reply: SetupReply = check(SetupReply, r, "task-api setup", "setup")
        return reply

    async def execute(self, tool: str, args_json: str) -> ToolResult:
        r = None
        if self.sandbox.direct:
            try:
                # Read under daemon_channel's cap, which is the execute reply's.
                r = await self.sandbox.daemon_request({"op": "execute", "tool": tool, "args": args_json},
                                                      self.timeouts.tool)
            except NotConnected:
                pass  # nothing was sent: task-api (exec) asks, and names what is wrong if anything is
            except InfraError as exc:
                raise InfraError(exc.kind, exc.message, "execute", exc.origin) from None
            if r is not None and "error" in r:
                raise sandbox_error(r, "the episode daemon", "execute")
        if r is None:
            argv, stdin = execute_request(tool, args_json)
            r = await self._call("execute", argv, self.timeouts.tool, EXECUTE_REPLY_MAX, stdin)
        reply: ExecuteReply = check(ExecuteReply, r, "task-api execute", "execute")
        return reply

    async def evaluate(self, messages: list[dict], status: str = "success") -> EvalResult:
        await self.sandbox.put_file(MESSAGES_PATH, _json_bytes(messages))
        r = await self._call("evaluate", ["evaluate", "--messages", MESSAGES_PATH, "--status", status],
                             self.timeouts.evaluate, EVALUATE_REPLY_MAX)
        reply: EvaluateReply = check(EvaluateReply, r, "task-api evaluate", "evaluate")
        return reply

    async def teardown(self) -> None:
        await self._call("teardown", ["teardown"], self.timeouts.teardown, OTHER_REPLY_MAX)
