"""`decathlon serve-policy`: the oracle trajectories as an OpenAI-compatible chat-completions endpoint.

So `vf-eval` (or any client) runs end to end with no model. The server keeps no per-episode state:
each request names its task by its first user message (the task's docs/task.md), carries the
workspace and launch time in its system prompt (the filled docs/agent_system_prompt.md), and says
how far the episode has got through the tool-call ids of earlier replies, which the oracle makes
deterministic. Parallel episodes therefore need nothing from each other.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from decathlon.recordings.cassettes import cassettes_dir, read_trajectory, trajectory_path
from decathlon.errors import InfraError, Kind
from decathlon.core.oracles import Oracle, assistant_message, call_id, load_oracle, oracle_dir, saved, variables
from decathlon.checkout.tasks import resolve_source
from decathlon.sandbox import taskdef
from decathlon.sandbox.prompts import PLACEHOLDER, SINGLE_TURN_NOTE

MODEL_ID = "decathlon-oracle"
# The values each template placeholder may take: one line, as the sandbox fills them.
_FIELDS = ("workspace_dir", "workspace_dir_rela", "current_working_dir", "time")


class PolicyError(Exception):
    """A request the oracle cannot answer: HTTP 400 with a JSON error naming the cause."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class TaskDocs:
    name: str
    prompt: str  # docs/task.md, stripped
    template: str  # docs/agent_system_prompt.md, as is


def _template_regex(template: str) -> str:
    """The template with each placeholder turned into a named group (repeats must agree)."""
    token = re.compile("|".join(re.escape(PLACEHOLDER.format(f)) for f in _FIELDS))
    parts, seen, pos = [], set(), 0
    for m in token.finditer(template):
        parts.append(re.escape(template[pos:m.start()]))
        field = next(f for f in _FIELDS if m.group(0) == PLACEHOLDER.format(f))
        parts.append(f"(?P={field})" if field in seen else f"(?P<{field}>[^\n]*?)")
        seen.add(field)
        pos = m.end()
    parts.append(re.escape(template[pos:]))
    return "".join(parts)


def match_system_prompt(template: str, received: str) -> dict[str, str] | None:
    """The placeholder values that turn `template` into `received`, or None if it is another prompt.

    The sandbox appends SINGLE_TURN_NOTE; a client may append notes of its own after a blank line.
    """
    body = _template_regex(template)
    note = re.escape(SINGLE_TURN_NOTE)
    for pattern in (body + note, body, body + note + r"\n\n.*", body + r"\n\n.*"):
        m = re.fullmatch(pattern, received, re.DOTALL)
        if m:
            return {k: v for k, v in m.groupdict().items() if v is not None}
    return None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class Catalogue:
    """Each task's prompt and system-prompt template, re-read when a request names an unseen prompt
    (tasks may be added while the server runs)."""

    def __init__(self, source: Path, oracles: Path | None = None, trajectories: Path | None = None) -> None:
        self.source = source
        self.oracles = oracles or oracle_dir(source)
        self.trajectories = trajectories
        self._by_prompt: dict[str, list[TaskDocs]] = {}

    def _scan(self) -> None:
        index: dict[str, list[TaskDocs]] = {}
        for name in taskdef.list_tasks(self.source):
            docs = self.source / "tasks" / taskdef.SPLIT / name / "docs"
            try:
                prompt = (docs / "task.md").read_text(encoding="utf-8").strip()
                template = (docs / "agent_system_prompt.md").read_text(encoding="utf-8")
            except OSError:
                continue  # a task without docs cannot be named by a conversation
            index.setdefault(prompt, []).append(TaskDocs(name, prompt, template))
        self._by_prompt = index

    def candidates(self, prompt: str) -> list[TaskDocs]:
        key = prompt.strip()
        if key not in self._by_prompt:
            self._scan()
        return self._by_prompt.get(key, [])

    def identify(self, messages: list[dict]) -> tuple[TaskDocs, dict[str, str]]:
        """The task this conversation is about, and the placeholder values of its system prompt."""
        users = [m for m in messages if m.get("role") == "user"]
        if not users:
            raise PolicyError("unknown_task", "the conversation has no user message to identify the task by")
        found = self.candidates(_text(users[0].get("content")))
        if not found:
            raise PolicyError("unknown_task", f"no task in {self.source} has this first user message "
                              "as its docs/task.md")
        system = next((_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer")), None)
        matched = [(t, v) for t in found
                   if system is not None and (v := match_system_prompt(t.template, system)) is not None]
        if len(matched) == 1:
            return matched[0]
        names = ", ".join(t.name for t in found)
        if not matched:
            if len(found) == 1 and PLACEHOLDER.format("workspace_dir") not in found[0].template \
                    and PLACEHOLDER.format("time") not in found[0].template:
                return found[0], {}  # nothing to recover: any system prompt will do
            raise PolicyError("system_prompt_mismatch", f"the system prompt does not match the template of "
                              f"{names} (docs/agent_system_prompt.md)")
        raise PolicyError("ambiguous_task", f"the conversation matches several tasks: {names}")

    def oracle(self, task: str) -> Oracle:
        try:
            return load_oracle(self.source, task, self.oracles)
        except InfraError as exc:
            raise PolicyError(exc.kind, exc.message) from exc


def _uses(oracle: Oracle, names: Iterable[str]) -> bool:
    text = json.dumps([[c.arguments for c in step] for step in oracle.steps])
    return any("${" + n + "}" in text for n in names)


def next_turn(oracle: Oracle, messages: list[dict]) -> int:
    """How many oracle turns the conversation already holds.

    The ids of earlier tool calls say it even when context management dropped old turns; a
    conversation carrying none of our ids falls back to counting assistant messages.
    """
    ids = {call_id(oracle.task, t, 0): t for t in range(len(oracle.steps))}
    done = [ids[c.get("id")] for m in messages if m.get("role") == "assistant"
            for c in m.get("tool_calls") or [] if c.get("id") in ids]
    if done:
        return max(done) + 1
    return sum(1 for m in messages if m.get("role") == "assistant")


def recorded_answer(catalogue: Catalogue, docs: TaskDocs, workspace: str | None, messages: list[dict]) -> dict:
    """The recorded trajectory's next assistant message: turns counted by the recorded call ids."""
    assert catalogue.trajectories is not None
    try:
        recorded = read_trajectory(trajectory_path(catalogue.trajectories, docs.name), workspace or "")
    except InfraError as exc:
        raise PolicyError(exc.kind, exc.message) from exc
    turns = [m for m in recorded if m.get("role") == "assistant"]
    ids = {c.get("id"): t for t, m in enumerate(turns) for c in m.get("tool_calls") or []}
    done = [ids[c.get("id")] for m in messages if m.get("role") == "assistant"
            for c in m.get("tool_calls") or [] if c.get("id") in ids]
    turn = max(done) + 1 if done else sum(1 for m in messages if m.get("role") == "assistant")
    if turn >= len(turns):
        return {"role": "assistant", "content": ""}  # the recording ends here
    reply = {"role": "assistant", "content": turns[turn].get("content")}
    if turns[turn].get("tool_calls"):
        reply["tool_calls"] = turns[turn]["tool_calls"]
    return reply


def answer(catalogue: Catalogue, messages: list[dict]) -> dict:
    """The scripted policy's next assistant message for this conversation (an oracle, or a recording)."""
    docs, values = catalogue.identify(messages)
    if catalogue.trajectories is not None:
        return recorded_answer(catalogue, docs, values.get("workspace_dir") or values.get("current_working_dir"),
                               messages)
    oracle = catalogue.oracle(docs.name)
    workspace = values.get("workspace_dir") or values.get("current_working_dir")
    launch = values.get("time")
    if workspace is None and _uses(oracle, ["workspace"]):
        raise PolicyError("no_workspace", f"the oracle of {docs.name} needs ${{workspace}}, but its system prompt "
                          "template has no workspace placeholder to recover it from")
    if launch is None and _uses(oracle, ["launch_time", "launch_date"]):
        raise PolicyError("no_launch_time", f"the oracle of {docs.name} needs the launch time, but its system "
                          "prompt template has no time placeholder to recover it from")
    return assistant_message(oracle, next_turn(oracle, messages),
                             {**variables(workspace or "", launch or ""), **saved(oracle, messages)})


def _completion(message: dict, model: str) -> dict:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}


def _chunks(completion: dict, include_usage: bool) -> list[dict]:
    """The completion as OpenAI stream chunks: role and content, one delta per tool call, the finish."""
    choice = completion["choices"][0]
    message = choice["message"]
    head = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return head | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    out = [chunk({"role": "assistant", "content": message.get("content") or ""})]
    for i, call in enumerate(message.get("tool_calls") or []):
        out.append(chunk({"tool_calls": [{"index": i, **call}]}))
    out.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        out.append(head | {"choices": [], "usage": completion["usage"]})
    return out


def _error(status: int, code: str, message: str) -> JSONResponse:
    # Said here too: a client may show only "ProviderError" (vf-eval does), and the cause would be in its traces alone.
    print(f"decathlon serve-policy: refused a completion ({status} {code}): {message}", file=sys.stderr, flush=True)
    return JSONResponse({"error": {"message": message, "type": "invalid_request_error", "code": code}},
                        status_code=status)


def make_app(source: Path, oracles: Path | None = None, trajectories: Path | None = None) -> Starlette:
    catalogue = Catalogue(source, oracles, trajectories)

    async def chat(request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "bad_request", "the body is not JSON")
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            return _error(400, "bad_request", "`messages` must be a list of chat messages")
        try:
            completion = _completion(answer(catalogue, messages), str(body.get("model") or MODEL_ID))
        except PolicyError as exc:
            return _error(400, exc.code, exc.message)
        except InfraError as exc:  # e.g. the source lost its tasks/ folder
            return _error(500, exc.kind, exc.message)
        if not body.get("stream"):
            return JSONResponse(completion)
        usage = bool((body.get("stream_options") or {}).get("include_usage"))

        async def events() -> AsyncIterator[str]:
            for c in _chunks(completion, usage):
                yield f"data: {json.dumps(c, ensure_ascii=False)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": 0,
                                                         "owned_by": "decathlon"}]})

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                             Route("/chat/completions", chat, methods=["POST"]),
                             Route("/v1/models", models, methods=["GET"]),
                             Route("/models", models, methods=["GET"])])


class _Server(uvicorn.Server):
    """Prints the URL once the socket is bound, so `--port 0` reports the port it got."""

    def __init__(self, config: uvicorn.Config, what: str) -> None:
        super().__init__(config)
        self.what = what  # what the app serves, for that line

    async def startup(self, sockets: list | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            print(f"decathlon serve-policy: http://{host}:{port}/v1 ({self.what})", flush=True)


def serve_command(ns: argparse.Namespace) -> int:
    source = resolve_source(ns.source)
    trajectories = cassettes_dir(source, ns.cassettes) if ns.recorded else None
    if trajectories is None:
        oracles = ns.oracles or oracle_dir(source)
        if not oracles.is_dir() or not any(oracles.glob("*.json")):
            raise InfraError(Kind.USAGE, f"serve-policy: {source} has no oracles ({oracles} holds none; a Toolathlon "
                             "checkout has none): every completion would be refused. Serve recorded runs instead, "
                             "`--recorded --cassettes IMPORT/cassettes` (an import of `decathlon cassettes "
                             "import-trajectories`; each drives its recorded run as a policy), or name a folder of "
                             "oracles with --oracles")
    app = make_app(source, ns.oracles, trajectories)
    what = f"recorded trajectories in {trajectories}" if trajectories else f"oracles for {source}"
    # uvicorn handles SIGINT/SIGTERM itself: it stops accepting, finishes open requests, then re-raises
    # the signal (SIGINT ends as "interrupted", exit 130). A port it cannot bind exits 1 with its message.
    server = _Server(uvicorn.Config(app, host=ns.host, port=ns.port, log_level="warning", lifespan="off"), what)
    server.run()
    return 0
