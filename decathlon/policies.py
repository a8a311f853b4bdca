"""Who chooses the next assistant message: an oracle, the null policy, or a model."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import httpx

from decathlon.agent_loop import StopLoop
from decathlon.cassettes import cassettes_dir, read_trajectory, trajectory_path
from decathlon.errors import InfraError
from decathlon.oracles import Call, Oracle, assistant_message, call_id, load_oracle, variables
from decathlon.task_session import SetupResult

MODEL_TIMEOUT = float(os.environ.get("DECATHLON_MODEL_TIMEOUT", "600"))


class EpisodePolicy(Protocol):
    async def act(self, messages: list[dict], tools: list[dict]) -> dict: ...


class Policy(Protocol):
    name: str

    def start(self, task: str, setup: SetupResult) -> EpisodePolicy: ...


@dataclass
class _Scripted:
    oracle: Oracle
    vars: dict[str, str]
    # Its own count: the conversation it is shown may have been shortened by manage_context.
    turn: int = 0

    async def act(self, messages: list[dict], tools: list[dict]) -> dict:
        reply = assistant_message(self.oracle, self.turn, self.vars)
        self.turn += 1
        return reply


class OraclePolicy:
    name = "oracle"

    def __init__(self, source: Path, folder: Path | None = None) -> None:
        self.source = source
        self.folder = folder

    def start(self, task: str, setup: SetupResult) -> EpisodePolicy:
        return _Scripted(load_oracle(self.source, task, self.folder), variables(setup.workspace, setup.launch_time))


class NullPolicy:
    """Claims the task done at once: every evaluator must score this 0."""
    name = "null"

    def start(self, task: str, setup: SetupResult) -> EpisodePolicy:
        oracle = Oracle(task, [[Call("local-claim_done", {})]], "Done.")
        return _Scripted(oracle, variables(setup.workspace, setup.launch_time))


@dataclass
class _Chat:
    model: str
    client: httpx.AsyncClient

    async def act(self, messages: list[dict], tools: list[dict]) -> dict:
        body = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        try:
            resp = await self.client.post("/chat/completions", json=body)
        except httpx.HTTPError as exc:
            raise InfraError("model_unreachable", f"{self.client.base_url}: {exc!r}", "agent") from exc
        if resp.status_code != 200:
            raise InfraError("model_error", f"HTTP {resp.status_code} from the model: {resp.text[:500]}", "agent")
        try:
            msg = resp.json()["choices"][0]["message"]
        except (ValueError, KeyError, IndexError) as exc:
            raise InfraError("model_error", f"unexpected reply from the model: {resp.text[:500]}", "agent") from exc
        out = {"role": "assistant", "content": msg.get("content")}
        if msg.get("tool_calls"):
            out["tool_calls"] = [{"id": c.get("id") or call_id(self.model, len(messages), i), "type": "function",
                                  "function": {"name": c["function"]["name"],
                                               "arguments": c["function"].get("arguments") or ""}}
                                 for i, c in enumerate(msg["tool_calls"])]
        return out


class OpenAIPolicy:
    """Any OpenAI-compatible endpoint: OPENAI_BASE_URL and OPENAI_API_KEY from the environment."""

    def __init__(self, model: str) -> None:
        self.name = f"openai:{model}"
        self.model = model
        base = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
        key = os.environ.get("OPENAI_API_KEY", "")
        self.client = httpx.AsyncClient(base_url=base, timeout=MODEL_TIMEOUT,
                                        headers={"Authorization": f"Bearer {key}"} if key else {})

    def start(self, task: str, setup: SetupResult) -> EpisodePolicy:
        return _Chat(self.model, self.client)


class _Recorded:
    def __init__(self, assistant: list[dict]) -> None:
        self.assistant = assistant
        self.turn = 0

    async def act(self, messages: list[dict], tools: list[dict]) -> dict:
        if self.turn >= len(self.assistant):
            # The recorded run went no further: it ran out of turns (or was cut off) there.
            raise StopLoop("max_turns_reached")
        reply = self.assistant[self.turn]
        self.turn += 1
        return reply


class ReplayPolicy:
    """A recorded trajectory's assistant turns, in order (found beside the cassette, or given)."""
    name = "replay"

    def __init__(self, folder: Path, trajectory: Path | None = None) -> None:
        self.folder = folder
        self.trajectory = trajectory

    def start(self, task: str, setup: SetupResult) -> EpisodePolicy:
        path = self.trajectory or trajectory_path(self.folder, task)
        messages = read_trajectory(path, setup.workspace)
        return _Recorded([_assistant_only(m) for m in messages if m.get("role") == "assistant"])


def _assistant_only(m: dict) -> dict:
    out = {"role": "assistant", "content": m.get("content")}
    if m.get("tool_calls"):
        out["tool_calls"] = m["tool_calls"]
    return out


def make_policy(spec: str, source: Path, oracles: Path | None = None, cassettes: Path | None = None,
                trajectory: Path | None = None) -> Policy:
    if spec == "oracle":
        return OraclePolicy(source, oracles)
    if spec == "replay":
        return ReplayPolicy(cassettes_dir(source, cassettes), trajectory)
    if spec == "null":
        return NullPolicy()
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        return OpenAIPolicy(spec[len("openai:"):])
    raise ValueError(f"unknown policy {spec!r}: use oracle, null, replay or openai:<model>")

