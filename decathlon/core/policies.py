"""Who chooses the next assistant message: an oracle, the null policy, or a model."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx

from decathlon.core.agent_loop import EpisodeFailed, MalformedReply, StopLoop, check_assistant
from decathlon.recordings.cassettes import cassettes_dir, read_trajectory, trajectory_path
from decathlon.core.blame import environment_owned, model_refusal
from decathlon.errors import InfraError, Kind
from decathlon.recordings.id_translation import IdTranslator
from decathlon.core.oracles import Call, Oracle, assistant_message, call_id, load_oracle, oracle_dir, saved, variables
from decathlon.core.task_session import SetupResult

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
        reply = assistant_message(self.oracle, self.turn, {**self.vars, **saved(self.oracle, messages)})
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
            raise InfraError(Kind.MODEL_UNREACHABLE, f"{self.client.base_url}: {exc!r}", "agent") from exc
        if resp.status_code != 200:
            refusal = model_refusal(resp.status_code, _reply_body(resp), messages, resp.text[:500])
            # A context the policy overflowed ends its run as a failure; the endpoint's faults are infra errors.
            raise refusal if environment_owned(refusal) else EpisodeFailed(refusal)
        try:
            msg = _first_message(resp.json())
            out: dict[str, Any] = {"role": "assistant", "content": msg.get("content")}
            if msg.get("tool_calls"):
                calls = msg["tool_calls"]
                if not isinstance(calls, list):
                    raise MalformedReply(f"tool_calls is a {type(calls).__name__}, not a list")
                # A missing id is the endpoint's omission, not a malformed call: a stable one is made up.
                out["tool_calls"] = [{**c, "id": c.get("id") or call_id(self.model, len(messages), i)}
                                     if isinstance(c, dict) else c for i, c in enumerate(calls)]
            check_assistant(out)
        except (ValueError, MalformedReply) as exc:  # MalformedReply is a ValueError; so is bad JSON
            raise InfraError(Kind.MODEL_ERROR, f"unexpected reply from the model ({exc}): {resp.text[:500]}",
                             "agent") from None
        if "tool_calls" in out:  # only what the next request and the evaluator need
            out["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["function"]["name"],
                                               "arguments": c["function"].get("arguments") or ""}}
                                 for c in out["tool_calls"]]
        return out


def _reply_body(resp: httpx.Response) -> object:
    try:
        return resp.json()
    except ValueError:
        return resp.text


def _first_message(body: object) -> dict:
    """choices[0].message of a chat completion, or MalformedReply naming what is missing."""
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedReply("no choices")
    msg = choices[0].get("message")
    if not isinstance(msg, dict):
        raise MalformedReply(f"choices[0].message is a {type(msg).__name__}, not an object")
    return msg


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
    """`results`: the recorded answer to each call (by tool_call_id), from which the recorded run's ids are
    translated to the ones live services gave the same objects (decathlon/recordings/id_translation.py)."""

    def __init__(self, assistant: list[dict], results: dict[str, object] | None = None) -> None:
        self.assistant = assistant
        self.turn = 0
        self.results = results or {}
        # Masked identifiers in its calls stand for what its own outputs show unmasked, if they do.
        self.ids = IdTranslator.for_recording(self.results.values(), [
            (c.get("function") or {}).get("arguments") or "" for m in assistant for c in m.get("tool_calls") or []
            if isinstance(c, dict)])
        self.learnt: set[str] = set()
        # Which tool each recorded call named: an answer's top-level ids are of the kind the tool lists.
        self.tool_of = {c["id"]: (c.get("function") or {}).get("name") for m in assistant
                        for c in m.get("tool_calls") or [] if isinstance(c, dict) and isinstance(c.get("id"), str)}

    async def act(self, messages: list[dict], tools: list[dict]) -> dict:
        if self.turn >= len(self.assistant):
            # The recorded run went no further: it ran out of turns (or was cut off) there.
            raise StopLoop("max_turns_reached")
        for m in messages:
            cid = m.get("tool_call_id") if isinstance(m, dict) and m.get("role") == "tool" else None
            if isinstance(cid, str) and cid in self.results and cid not in self.learnt:
                self.learnt.add(cid)
                self.ids.learn(self.results[cid], m.get("content"), self.tool_of.get(cid))
        reply = self.assistant[self.turn]
        self.turn += 1
        if self.ids.active and reply.get("tool_calls"):
            calls = []
            for call in reply["tool_calls"]:
                fn = call.get("function") or {}
                args = self.ids.translate_arguments(fn.get("arguments", ""), fn.get("name"))
                calls.append(call if args == fn.get("arguments") else {**call, "function": {**fn, "arguments": args}})
            reply = {**reply, "tool_calls": calls}
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
        turns = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
        results = {m["tool_call_id"]: m.get("content") for m in messages
                   if isinstance(m, dict) and m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str)}
        return _Recorded([_assistant_only(m, path, i) for i, m in enumerate(turns)], results)


def _assistant_only(m: dict, path: Path, turn: int) -> dict:
    """A recorded assistant turn as the loop needs it; a malformed one is named before the agent starts."""
    out = {"role": "assistant", "content": m.get("content")}
    if m.get("tool_calls"):
        out["tool_calls"] = m["tool_calls"]
    try:
        return check_assistant(out)
    except MalformedReply as exc:
        raise InfraError(Kind.BAD_TRAJECTORY, f"{path}: assistant turn {turn + 1} is malformed: {exc}", "policy") from None


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



ENDPOINT_PROBE_TIMEOUT = 10.0


async def preflight(policy: Policy, tasks: list[str]) -> None:
    """What can be known wrong about the policy for the whole run, checked once before the first sandbox: an
    oracle policy with no oracle for some task, a model endpoint that does not answer. Found per episode,
    each would cost a setup and read as N infra errors."""
    if isinstance(policy, OraclePolicy):
        folder = policy.folder or oracle_dir(policy.source)
        lacking = sorted(t for t in tasks if not (folder / f"{t}.json").is_file())
        if lacking:
            shown = ", ".join(lacking[:5]) + (f" and {len(lacking) - 5} more" if len(lacking) > 5 else "")
            raise InfraError(Kind.NO_ORACLE, f"--policy oracle needs an oracle per task ({folder}/<task>.json); "
                             f"{len(lacking)} of {len(tasks)} task(s) have none: {shown}. A Toolathlon checkout has "
                             "no oracles: use --policy null, replay (with cassettes) or openai:<model>, or --oracles DIR")
    elif isinstance(policy, OpenAIPolicy):
        try:
            # Any HTTP answer means something listens there (a 401 or 404 is the model call's to report).
            await policy.client.get("models", timeout=ENDPOINT_PROBE_TIMEOUT)
        except httpx.HTTPError as exc:
            raise InfraError(Kind.MODEL_UNREACHABLE, f"the model endpoint {policy.client.base_url} does not answer "
                             f"({type(exc).__name__}: {exc}); set OPENAI_BASE_URL to an OpenAI-compatible endpoint "
                             "that is up") from None
