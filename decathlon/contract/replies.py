"""The wire between host and sandbox: one model per task-api reply, written by the sandbox and read by the host.

The sandbox builds each reply as its model here and prints `dump(model)`; the host reads it back under a
size cap through the same model (`decode`, then `check`), and hands the model itself on (no second copy).

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

from decathlon.errors import InfraError, Kind
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

# populate_by_name: the sandbox builds EvaluateReply with `passed=`; the wire says "pass".
_STRICT = ConfigDict(strict=True, extra="ignore", frozen=True, populate_by_name=True)
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
    # The daemon's count of the kernel's OOM kills so far (DECATHLON_REPORT_OOM): compose's backend reads it.
    oom_kills: int | None = None

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


def _tools(value: Any) -> Any:
    """Each tool an OpenAI function schema ({"type", "function": {...}}), kept as the dict the model is sent."""
    if isinstance(value, list):
        for i, t in enumerate(value):
            if not (isinstance(t, dict) and isinstance(t.get("type"), str) and isinstance(t.get("function"), dict)):
                raise ValueError(f"tool {i} is not an object with a string \"type\" and a \"function\" object")
    return value


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
    tools: list[dict[str, Any]]
    system_prompt: str
    prompt: str
    launch_time: str = Field(max_length=100)
    workspace: str = Field(max_length=4096)
    timings: dict[str, float] = Field(default_factory=dict)
    omitted_servers: list[OmittedServer] = Field(default_factory=list, max_length=200)
    replayed_servers: list[ReplayedServer] = Field(default_factory=list, max_length=200)
    # Informative: what ran (the host shows them, never acts on them).
    task: str = Field("", max_length=300)
    mode: str = Field("live", max_length=20)
    servers: dict[str, Any] = Field(default_factory=dict)
    services: dict[str, Any] = Field(default_factory=dict)

    _tools = field_validator("tools", mode="before")(_tools)


class EvaluateReply(BaseModel):
    # Written out (not _STRICT) so that type checkers see populate_by_name: built as `passed=`, read as "pass".
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True, populate_by_name=True)
    # `pass` is a Python keyword: read under an alias.
    passed: bool | None = Field(validation_alias="pass", serialization_alias="pass")
    metrics: dict[str, float] = Field(default_factory=dict)
    exit_code: int | None = None
    output_tail: str = Field("", max_length=200_000)
    elapsed_ms: float = 0.0
    recorded: bool = False  # an imported run's recorded verdict, not an evaluator's
    status: str | None = Field(None, max_length=40)  # how the run ended, as the host said
    cassette: str | None = Field(None, max_length=4096)  # record mode: where the sandbox left the cassette

    _elapsed = field_validator("elapsed_ms")(_finite)


def dump(reply: BaseModel, drop_none: bool = False) -> dict[str, Any]:
    """A reply as the sandbox prints it, under the wire's names ("pass"); `drop_none` leaves out the optional
    parts not set (an execute reply's context), for the per-call path's few bytes."""
    return reply.model_dump(mode="json", by_alias=True, exclude_none=drop_none)


def decode(raw: bytes | str, what: str, phase: str) -> dict:
    """The one JSON object of a reply, or bad_reply naming what came instead."""
    try:
        reply = nesting.loads(raw)
    except nesting.TooDeep as exc:  # no reply of task-api nests so deep: forged, and would break our walks
        raise InfraError(Kind.BAD_REPLY, f"{what} sent a reply {exc}", phase) from None
    except ValueError:  # not JSON, or not UTF-8
        reply = None
    if not isinstance(reply, dict):
        raise InfraError(Kind.BAD_REPLY, f"{what} sent something that is not a JSON object: {raw[:200]!r}", phase)
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
    if body.kind not in Kind.__members__.values():
        return InfraError(Kind.BAD_REPLY, f"{what} reported an error of no known kind ({body.kind}): "
                          f"{body.message[:2000]}", phase, origin="sandbox")
    return InfraError(body.kind, body.message, phase, origin="sandbox")


def too_large(what: str, limit: int, phase: str | None) -> InfraError:
    return InfraError(Kind.REPLY_TOO_LARGE, f"{what} sent more than {limit} bytes; a reply that large is never "
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
