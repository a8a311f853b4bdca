"""Who is to blame for an infra error once the agent has acted, and whose a refusal of the model endpoint is.

An infra error masks an episode from training, so it must never be the agent's doing: after the first policy
turn every kind is the episode's own failure (reward 0) unless the environment owns it (the lists below).
"""
from __future__ import annotations

import json

from decathlon.errors import InfraError, Kind

# Who is to blame once the agent has acted. Everything inside a sandbox is the agent's to break: it
# can kill its own daemon (daemon_died), exhaust the pids or memory (bad_reply, sandbox_died), forge a
# reply or an evaluator's output (bad_reply, evaluator_crash)... An infra error that would mask such an
# episode from training lets a policy turn a failing run into a run that does not count, so after the
# first policy turn every kind is the episode's failure (reward 0) except these: faults the agent has
# no hand in — the model endpoint, the replay layer (our recordings), the engine and image, our own
# bugs, an operator's cancellation, a release that fails after the verdict.
# The policy's own conversation is the agent's too: a context it overflowed (CONTEXT_OVERFLOW, see
# `model_refusal`) is its failure, like the turn cap, though the endpoint is the one that says so.
ENVIRONMENT_OWNED = frozenset({
    Kind.MODEL_UNREACHABLE, Kind.MODEL_ERROR,  # the policy's endpoint
    Kind.REPLAY_MISS, Kind.REPLAY_DIVERGENCE, Kind.BAD_CASSETTE, Kind.HTTP_SHIM_MISSING,  # the replay layer's recordings
    Kind.ENGINE_UNREACHABLE, Kind.IMAGE_MISSING,  # the container engine
    Kind.EVALUATOR_MISSING, Kind.GRADER_PREFLIGHT,  # the task's grader, checked by us
    Kind.CANCELLED, Kind.INTERRUPTED, Kind.USAGE,  # the operator
    Kind.INTERNAL_ERROR,  # a bug of ours
    Kind.RELEASE_FAILED,  # after the verdict: cannot change it
})
ENVIRONMENT_OWNED_PREFIXES = ("acquire_", "cassette_")

# Of those, the kinds a sandbox may itself report (task-api's errors, read from its reply). Any other
# environment-owned kind named by a sandbox is forged — a sandbox cannot know the model endpoint failed —
# and counts as the sandbox's own fault.
SANDBOX_REPORTABLE = frozenset({Kind.EVALUATOR_MISSING, Kind.GRADER_PREFLIGHT})
# ...and the replay layer's, believed only from an episode that replays: in a live one no cassette is
# read, so a sandbox naming a replay miss is lying.
# (not_gradable: an imported run replayed other than as recorded, which its recorded verdict cannot judge.)
SANDBOX_REPORTABLE_IN_REPLAY = frozenset({Kind.REPLAY_MISS, Kind.REPLAY_DIVERGENCE, Kind.BAD_CASSETTE, Kind.HTTP_SHIM_MISSING,
                                          Kind.NOT_GRADABLE})
SANDBOX_REPORTABLE_PREFIXES = ("cassette_",)


def environment_owned(err: InfraError, replaying: bool = False) -> bool:
    """True if `err` is a fault of the environment even after the agent acted (see ENVIRONMENT_OWNED)."""
    kind = err.kind
    if err.origin == "sandbox":
        if replaying and (kind in SANDBOX_REPORTABLE_IN_REPLAY or kind.startswith(SANDBOX_REPORTABLE_PREFIXES)):
            return True
        return kind in SANDBOX_REPORTABLE
    return kind in ENVIRONMENT_OWNED or kind.startswith(ENVIRONMENT_OWNED_PREFIXES)


CONTEXT_OVERFLOW = Kind.CONTEXT_OVERFLOW
# How OpenAI-compatible servers say a request exceeds the model's context: by an error code (OpenAI;
# llama.cpp's type), or in words (vLLM, also SGLang and Mistral: "maximum context length"; vLLM again:
# "is longer than the maximum model length"; Anthropic-style servers: "prompt is too long"; OpenAI's
# Responses API; llama.cpp). Read in the error's message, code and type only: other fields may echo the
# request, whose text the agent wrote.
OVERFLOW_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
OVERFLOW_WORDS = ("maximum context length", "longer than the maximum model length", "prompt is too long",
                  "exceeds the context window", "exceeds the available context size")


def context_overflow(status: int, body: object) -> str | None:
    """The endpoint's own words if `body`, its reply with HTTP `status`, refuses the request as longer than
    the model's context; else None. `body` is the parsed JSON (the whole reply, or its "error" object as
    the openai SDK keeps it) or the text of a reply that is not JSON."""
    if status != 400:  # a deterministic refusal of this request; 5xx and 429 are the endpoint's trouble
        return None
    return _overflow_in(body, depth=0)


def _overflow_in(body: object, depth: int) -> str | None:
    if depth > 3:
        return None
    if isinstance(body, str):
        # A proxy may relay the provider's JSON reply inside its own message (verifiers' interception
        # answers "upstream 400: {...}"): that reply is read as one, and only the proxy's words besides.
        start = body.find("{")
        try:
            relayed = json.JSONDecoder().raw_decode(body, start)[0] if start >= 0 else None
        except ValueError:
            relayed = None
        if isinstance(relayed, dict):
            return _overflow_in(relayed, depth + 1) or (body if _says_overflow(body[:start]) else None)
        return body if _says_overflow(body) else None
    if not isinstance(body, dict):
        return None
    if isinstance(body.get("error"), (dict, str)):
        return _overflow_in(body["error"], depth + 1)
    message = body.get("message") if isinstance(body.get("message"), str) else None
    named = [v for v in (body.get("code"), body.get("type")) if isinstance(v, str) and v in OVERFLOW_CODES]
    if named:
        return message or named[0]
    return _overflow_in(message, depth + 1) if message is not None else None


def _says_overflow(text: str) -> bool:
    folded = text.casefold()
    return any(w in folded for w in OVERFLOW_WORDS)


def model_refusal(status: int, body: object, sent: list[dict], said: str) -> InfraError:
    """Whose fault it is that the endpoint refused the conversation `sent` with HTTP `status` (`said`: its
    reply, shortened for a message). A context overflowed once the policy's own turns are in it is the
    policy's failure (CONTEXT_OVERFLOW); before, the task's prompt alone is too long for the model, and
    that, like any other refusal, is the endpoint's (model_error)."""
    words = context_overflow(status, body)
    if words is None:
        return InfraError(Kind.MODEL_ERROR, f"HTTP {status} from the model: {said}", "agent")
    turns = sum(1 for m in sent if isinstance(m, dict) and m.get("role") == "assistant")
    if turns == 0:
        return InfraError(Kind.MODEL_ERROR, "the task's prompt alone exceeds the model's context (HTTP "
                          f"{status}): {said}", "agent")
    return InfraError(CONTEXT_OVERFLOW, f"the conversation, with {turns} turns of the policy, exceeds the model's "
                      f"context; the endpoint refused it: {words[:500]}", "agent")
