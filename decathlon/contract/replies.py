"""What a sandbox may answer: every reply is read under a size cap and checked against a model here.

A sandbox is the agent's: whatever answers for task-api (its stdout, or the daemon's socket, which on
the local backend the agent can replace) may be hostile. A reply that does not fit is the episode's
`bad_reply` or `reply_too_large`, never an exception from deep inside the host, and never a 300 MB
string sent on to the model.
"""
from __future__ import annotations

import asyncio
import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from decathlon.errors import InfraError
from decathlon.tape import nesting

# Toolathlon cuts a tool's output at 100,000 characters (task-api does it, with a notice of a few
# hundred characters); the sandbox may be configured higher (BENCH_MAX_SINGLE_TURN_RETURN_CHARS) but
# never sends the model more than this.
CONTENT_MAX_CHARS = 100_000 + 20_000
# In bytes on the wire: JSON escapes a control character as six bytes (\u00XX), and the reply carries
# a few small fields besides.
EXECUTE_REPLY_MAX = 6 * CONTENT_MAX_CHARS + (64 << 10)
# setup's reply holds every tool's schema; evaluate's the output tail and metrics.
SETUP_REPLY_MAX = 32 << 20
EVALUATE_REPLY_MAX = 4 << 20
OTHER_REPLY_MAX = 1 << 20
# What a backend reads of one exec's output at most (stdout, and stderr apart): past it the command is
# stopped and its reply is too large. Above every verb's own cap, so the verb's cap names the problem.
EXEC_OUTPUT_MAX = SETUP_REPLY_MAX + (1 << 20)
STDERR_KEPT = 64 << 10  # of stderr, only its end is kept: where a failure says why

_STRICT = ConfigDict(strict=True, extra="ignore", frozen=True)
_KIND = r"^[a-z][a-z0-9_]{0,63}$"


class ErrorBody(BaseModel):
    model_config = _STRICT
    kind: str = Field(pattern=_KIND)
    message: str = Field("", max_length=20_000)


class ErrorReply(BaseModel):
    model_config = _STRICT
    error: ErrorBody


class ContextRequest(BaseModel):
    """manage_context's request to the host: keep only the last N turns of what the model is shown."""
    model_config = _STRICT
    keep_last_turns: int | None = Field(None, ge=0)


def _finite(value: float) -> float:
    if not math.isfinite(value) or value < 0:
        raise ValueError("must be a finite, non-negative number")
    return value


class ExecuteReply(BaseModel):
    model_config = _STRICT
    content: str = Field(max_length=CONTENT_MAX_CHARS)
    is_error: bool
    elapsed_ms: float = 0.0
    context: ContextRequest | None = None

    _elapsed = field_validator("elapsed_ms")(_finite)

    @field_validator("content", mode="before")
    @classmethod
    def _utf8(cls, value: Any) -> Any:
        # A lone surrogate (a server's "\ud800") would break every later write of the conversation as
        # UTF-8 (messages.json, the evaluator's input): shown as U+FFFD instead.
        if not isinstance(value, str) or value.isascii():
            return value
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "replace").decode("utf-8")
        return value


class Tool(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)
    type: str
    function: dict[str, Any]


class OmittedServer(BaseModel):
    model_config = _STRICT
    name: str = Field(max_length=200)
    kind: str = Field(max_length=100)
    why: str = Field(max_length=4000)


class ReplayedServer(BaseModel):
    model_config = _STRICT
    name: str = Field(max_length=200)
    why: str = Field(max_length=4000)


class SetupReply(BaseModel):
    model_config = _STRICT
    tools: list[Tool]
    system_prompt: str
    prompt: str
    launch_time: str = Field(max_length=100)
    workspace: str = Field(max_length=4096)
    timings: dict[str, float] = Field(default_factory=dict)
    omitted_servers: list[OmittedServer] = Field(default_factory=list, max_length=200)
    replayed_servers: list[ReplayedServer] = Field(default_factory=list, max_length=200)


class EvaluateReply(BaseModel):
    model_config = _STRICT
    # `pass` is a Python keyword: read under an alias.
    passed: bool | None = Field(alias="pass")
    metrics: dict[str, float] = Field(default_factory=dict)
    exit_code: int | None = None
    output_tail: str = Field("", max_length=200_000)
    elapsed_ms: float = 0.0

    _elapsed = field_validator("elapsed_ms")(_finite)


def decode(raw: bytes | str, what: str, phase: str) -> dict:
    """The one JSON object of a reply, or bad_reply naming what came instead."""
    try:
        reply = nesting.loads(raw)
    except nesting.TooDeep as exc:  # no reply of task-api nests so deep: forged, and would break our walks
        raise InfraError("bad_reply", f"{what} sent a reply {exc}", phase) from None
    except ValueError:  # not JSON, or not UTF-8
        reply = None
    if not isinstance(reply, dict):
        raise InfraError("bad_reply", f"{what} sent something that is not a JSON object: {raw[:200]!r}", phase)
    return reply


def check(model: type[BaseModel], reply: dict, what: str, phase: str) -> Any:
    """`reply` as `model`, or bad_reply (reply_too_large for an over-long string) naming the first fields
    that do not fit."""
    try:
        return model.model_validate(reply)
    except ValidationError as exc:
        kind = "reply_too_large" if any(e["type"] == "string_too_long" for e in exc.errors()) else "bad_reply"
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(reply)'}: {e['msg']}" for e in exc.errors()[:3])
        raise InfraError(kind, f"{what} sent a malformed reply ({problems})", phase) from None


def sandbox_error(reply: dict, what: str, phase: str) -> InfraError:
    """The error a sandbox reported (`{"error": {kind, message}}`), marked as the sandbox's word."""
    body = check(ErrorReply, reply, what, phase).error
    return InfraError(body.kind, body.message, phase, origin="sandbox")


def too_large(what: str, limit: int, phase: str | None) -> InfraError:
    return InfraError("reply_too_large", f"{what} sent more than {limit} bytes; a reply that large is never "
                      "legitimate (tool outputs are cut at 100,000 characters in the sandbox)", phase)


async def read_capped(reader: asyncio.StreamReader, limit: int, what: str, phase: str | None = None) -> bytes:
    """A stream read to its end, but never more than `limit` bytes held (reply_too_large past it)."""
    chunks, size = [], 0
    while chunk := await reader.read(1 << 16):
        size += len(chunk)
        if size > limit:
            raise too_large(what, limit, phase)
        chunks.append(chunk)
    return b"".join(chunks)


async def read_tail(reader: asyncio.StreamReader, keep: int) -> bytes:
    """A stream read to its end, only its last `keep` bytes held (where a failure says why)."""
    tail = b""
    while chunk := await reader.read(1 << 16):
        tail = (tail + chunk)[-keep:]
    return tail
