"""The agent loop shared by `decathlon run` and the verifiers harness: policy turn, tool calls, repeat.

Toolathlon's single-turn semantics: the run succeeds when the agent replies without tool calls or
calls `local-claim_done`; it ends as max_turns_reached at the turn cap. `manage_context` trims what
the policy is shown from then on; the full conversation is kept for the evaluator.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from decathlon.errors import InfraError, Kind
from decathlon.core.task_session import ToolResult

STOP_TOOL = "local-claim_done"


class StopLoop(Exception):
    """Raised by a policy (or a tool call) to end the run early with a given status (a limit or stop fired)."""

    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


FAILED = "failed"  # the run's status when the episode failed on its own after the agent acted


class EpisodeFailed(StopLoop):
    """Ends the loop of an episode that failed on its own after the agent acted (its sandbox broke, or its
    policy overflowed the model's context): the run ends as a normal end would, then scores 0, never masked.
    `error` says why (decathlon.errors: not environment-owned)."""

    def __init__(self, error: InfraError) -> None:
        super().__init__(FAILED)
        self.error = error


@dataclass
class Loop:
    messages: list[dict]  # everything, for traj_log.json and the evaluator
    turns: int = 0
    tool_calls: int = 0
    status: str | None = None
    sent: list[dict] = field(default_factory=list)  # what the policy is shown
    # Set when the first policy turn is requested: from then on the agent has acted, and a fault of
    # its sandbox may be its own doing (decathlon.errors.environment_owned).
    acted: bool = False
    failure: InfraError | None = None  # why the episode failed on its own, if it did (EpisodeFailed)

    def __post_init__(self) -> None:
        self.sent = list(self.messages)


def apply_context(messages: list[dict], keep_last_turns: int) -> list[dict]:
    """Keep the system and task messages plus the last N assistant turns (with their tool results)."""
    head = [m for m in messages[:2] if m.get("role") in ("system", "user")]
    starts = [i for i, m in enumerate(messages) if m.get("role") == "assistant" and i >= len(head)]
    if keep_last_turns >= len(starts):
        return messages
    cut = starts[len(starts) - keep_last_turns] if keep_last_turns else len(messages)
    return head + messages[cut:]


class MalformedReply(ValueError):
    pass


def _need(ok: bool, problem: str) -> None:
    if not ok:
        raise MalformedReply(problem)


def _check_call(i: int, call: Any) -> None:
    _need(isinstance(call, dict), f"tool_calls[{i}] is a {type(call).__name__}, not an object")
    _need(isinstance(call.get("id"), str) and call["id"] != "", f"tool_calls[{i}] has no string id")
    fn = call.get("function")
    _need(isinstance(fn, dict), f"tool_calls[{i}] has no function object")
    _need(isinstance(fn.get("name"), str) and fn["name"] != "", f"tool_calls[{i}].function has no string name")
    args = fn.get("arguments")
    if isinstance(args, dict):  # some endpoints send the object itself: the same call, as its JSON text
        fn["arguments"] = json.dumps(args, ensure_ascii=False)
    else:
        _need(args is None or isinstance(args, str),
              f"tool_calls[{i}].function.arguments is a {type(args).__name__}, not a string")


def check_assistant(reply: Any) -> dict:
    """`reply` if it is an assistant message the loop can act on, else MalformedReply naming why.

    A policy's reply is a model's output (or a recording of one): checked once here, so the loop,
    the sandbox and the evaluator only ever see well-formed messages."""
    _need(isinstance(reply, dict), f"the reply is a {type(reply).__name__}, not a message object")
    _need(reply.get("role") == "assistant", f"the reply's role is {reply.get('role')!r}, not 'assistant'")
    content = reply.get("content")
    _need(content is None or isinstance(content, str), f"content is a {type(content).__name__}, not a string")
    calls = reply.get("tool_calls")
    _need(calls is None or isinstance(calls, list), f"tool_calls is a {type(calls).__name__}, not a list")
    for i, call in enumerate(calls or []):
        _check_call(i, call)
    return reply


async def run_loop(loop: Loop, act: Callable[[list[dict]], Awaitable[dict]],
                   execute: Callable[[str, str], Awaitable[ToolResult]], max_turns: int) -> Loop:
    loop.status = "max_turns_reached"
    for _ in range(max_turns):
        loop.acted = True
        try:
            reply = await act(loop.sent)
        except StopLoop as stop:
            return _stopped(loop, stop)
        try:
            check_assistant(reply)
        except MalformedReply as exc:
            raise InfraError(Kind.MODEL_ERROR, f"the policy's reply at turn {loop.turns + 1} is malformed: {exc}",
                             "agent") from None
        loop.messages.append(reply)
        loop.sent.append(reply)
        loop.turns += 1
        calls = reply.get("tool_calls") or []
        done = not calls
        for call in calls:
            name = call["function"]["name"]
            try:
                res = await execute(name, call["function"].get("arguments") or "")
            except StopLoop as stop:
                return _stopped(loop, stop)
            loop.tool_calls += 1
            message = {"role": "tool", "tool_call_id": call["id"], "content": res.content}
            loop.messages.append(message)
            loop.sent.append(message)
            if res.context is not None and res.context.keep_last_turns is not None:
                loop.sent = apply_context(loop.sent, res.context.keep_last_turns)
            done = done or name == STOP_TOOL
        if done:
            loop.status = "success"
            return loop
    return loop


def _stopped(loop: Loop, stop: StopLoop) -> Loop:
    loop.status = stop.status
    if isinstance(stop, EpisodeFailed):
        loop.failure = stop.error
    return loop
