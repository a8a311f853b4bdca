"""The agent loop shared by `decathlon run` and the verifiers harness: policy turn, tool calls, repeat.

Toolathlon's single-turn semantics: the run succeeds when the agent replies without tool calls or
calls `local-claim_done`; it ends as max_turns_reached at the turn cap. `manage_context` trims what
the policy is shown from then on; the full conversation is kept for the evaluator.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Awaitable, Callable

from decathlon.task_session import ToolResult

STOP_TOOL = "local-claim_done"


class StopLoop(Exception):
    """Raised by a policy to end the run early with a given status (a limit or stop fired)."""

    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


@dataclass
class Loop:
    messages: list[dict]  # everything, for traj_log.json and the evaluator
    turns: int = 0
    tool_calls: int = 0
    status: str | None = None
    sent: list[dict] = field(default_factory=list)  # what the policy is shown

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


async def run_loop(loop: Loop, act: Callable[[list[dict]], Awaitable[dict]],
                   execute: Callable[[str, str], Awaitable[ToolResult]], max_turns: int) -> Loop:
    loop.status = "max_turns_reached"
    for _ in range(max_turns):
        try:
            reply = await act(loop.sent)
        except StopLoop as stop:
            loop.status = stop.status
            return loop
        loop.messages.append(reply)
        loop.sent.append(reply)
        loop.turns += 1
        calls = reply.get("tool_calls") or []
        done = not calls
        for call in calls:
            name = call["function"]["name"]
            res = await execute(name, call["function"].get("arguments") or "")
            loop.tool_calls += 1
            message = {"role": "tool", "tool_call_id": call["id"], "content": res.content}
            loop.messages.append(message)
            loop.sent.append(message)
            if res.context and "keep_last_turns" in res.context:
                loop.sent = apply_context(loop.sent, int(res.context["keep_last_turns"]))
            done = done or name == STOP_TOOL
        if done:
            loop.status = "success"
            return loop
    return loop
