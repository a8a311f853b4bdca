"""A context the policy itself overflowed is its failure, like the turn cap (issue 21, M1).

The model endpoint answers 400 when a conversation no longer fits its context. Once the policy's own
turns are in that conversation (here: a tool output of 95k characters it asked for), the refusal is
the episode's failure `context_overflow`, scored 0; any other refusal stays the endpoint's fault, an
infra error `model_error`. The endpoint is faked in-process with respx.
"""
from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import httpx
import pytest

from conftest import LAUNCH, PASSING_EVALUATOR, write_task
from decathlon.backends.local import LocalBackend
from decathlon.core.episode import EpisodeConfig, EpisodeResult, run_episode
from decathlon.core.blame import context_overflow
from decathlon.core.policies import OpenAIPolicy
from decathlon.reports.report import build_report

BASE = "http://model.invalid/v1"
TASK = "floods-its-context"
FLOOD = "print('x' * 95_000)"  # one tool output of 95k characters

# What the endpoints answer to a conversation longer than the model's context.
VLLM = {"object": "error", "type": "BadRequestError", "param": None, "code": 400,
        "message": "This model's maximum context length is 32768 tokens. However, you requested 48213 tokens "
                   "(48213 in the messages, 0 in the completion). Please reduce the length of the messages or "
                   "completion."}
VLLM_MODEL_LEN = {"object": "error", "type": "BadRequestError", "param": None, "code": 400,
                  "message": "The decoder prompt (length 48213) is longer than the maximum model length of 32768. "
                             "Make sure that `max_model_len` is no smaller than the number of text tokens."}
# OpenAI says so by its code; this wording of its message is in no list of ours.
OPENAI = {"error": {"message": "Input tokens exceed the configured limit of 272000 tokens. Your messages resulted "
                               "in 301234 tokens.", "type": "invalid_request_error", "param": "messages",
                    "code": "context_length_exceeded"}}
SCHEMA = {"error": {"message": "invalid tool schema: tools[0].function.parameters is not a valid JSON Schema",
                    "type": "invalid_request_error", "param": "tools", "code": "invalid_tool_schema"}}


def _flood_call() -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "local-python-execute", "arguments": json.dumps({"code": FLOOD})}}]}


def _endpoint(respx_mock, refusal: dict, *, at_once: bool = False):
    """A chat-completions endpoint: the first turn floods the context with a tool call, every request that
    carries a policy turn (or, `at_once`, every request) is refused with HTTP 400 and `refusal`."""
    def answer(request: httpx.Request) -> httpx.Response:
        messages = json.loads(request.content)["messages"]
        if at_once or any(m.get("role") == "assistant" for m in messages):
            return httpx.Response(400, json=refusal)
        return httpx.Response(200, json={"choices": [{"index": 0, "message": _flood_call(),
                                                      "finish_reason": "tool_calls"}]})
    return respx_mock.post(f"{BASE}/chat/completions").mock(side_effect=answer)


def _episode(source: Path, out: Path, monkeypatch) -> EpisodeResult:
    # The evaluator passes whatever the agent did: a run it were credited for would score 1.
    write_task(source, TASK, local_tools=["claim_done", "python_execute"], evaluator=PASSING_EVALUATOR)
    monkeypatch.setenv("OPENAI_BASE_URL", BASE)
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    cfg = EpisodeConfig(task=TASK, source=source, run_id=uuid.uuid4().hex[:12], episode_id=uuid.uuid4().hex,
                        launch_time=LAUNCH, out_dir=out, run_info={"source": str(source), "policy": "openai:m"})
    return asyncio.run(run_episode(cfg, LocalBackend(), OpenAIPolicy("m")))


@pytest.mark.parametrize("refusal", [VLLM, VLLM_MODEL_LEN, OPENAI], ids=["vllm", "vllm-model-len", "openai-code"])
def test_a_context_the_policy_overflowed_is_its_failure(refusal, source, tmp_path, monkeypatch, respx_mock):
    route = _endpoint(respx_mock, refusal)
    r = _episode(source, tmp_path / "out", monkeypatch)
    assert route.call_count == 2 and r.turns == 1 and r.tool_calls == 1
    assert r.infra_error is None, r.infra_error
    assert r.failure is not None and r.failure["kind"] == "context_overflow" and r.failure["phase"] == "agent"
    assert r.reward == 0.0 and r.passed is False and r.status == "failed"
    written = json.loads((tmp_path / "out" / TASK / "result.json").read_text())
    assert written["failure"]["kind"] == "context_overflow" and written["pass"] is False
    # `decathlon report`: a graded episode that did not pass, not an infra error left out of the rates.
    run = build_report([tmp_path / "out"])["runs"][0]
    assert (run["graded"], run["passed"], run["infra_errors"]) == (1, 0, 0)


@pytest.mark.parametrize("refusal,at_once,said", [
    (SCHEMA, False, "invalid tool schema"),
    # Before any turn of the policy, the conversation is the task's alone: the model is too small for it.
    (VLLM, True, "the task's prompt alone"),
], ids=["other-400", "prompt-alone"])
def test_any_other_refusal_stays_the_endpoints_model_error(refusal, at_once, said, source, tmp_path, monkeypatch,
                                                           respx_mock):
    _endpoint(respx_mock, refusal, at_once=at_once)
    r = _episode(source, tmp_path / "out", monkeypatch)
    assert r.failure is None, r.failure
    assert r.infra_error["kind"] == "model_error" and r.infra_error["phase"] == "agent"
    assert said in r.infra_error["message"], r.infra_error
    assert r.reward == 0.0 and r.passed is None
    run = build_report([tmp_path / "out"])["runs"][0]
    assert (run["graded"], run["infra_errors"]) == (0, 1)


def _relayed(reply: dict) -> dict:
    """`reply` as the openai SDK sees it behind verifiers' interception: its "error" object, the provider's
    reply inside the message."""
    return {"message": f"upstream 400: {json.dumps(reply)}", "type": "invalid_request_error"}


@pytest.mark.parametrize("status,body,overflow", [
    (400, VLLM, True),
    (400, VLLM_MODEL_LEN, True),
    (400, OPENAI, True),
    (400, OPENAI["error"], True),  # the SDK's BadRequestError.body
    (400, _relayed(VLLM), True),
    (400, _relayed(OPENAI), True),
    (400, "prompt is too long: 210000 tokens > 200000 maximum", True),  # a reply that is not JSON
    (400, {"error": {"code": 400, "type": "exceed_context_size_error",  # llama.cpp
                     "message": "the request exceeds the available context size, try increasing it"}}, True),
    (400, SCHEMA, False),
    (400, _relayed(SCHEMA), False),
    (500, VLLM, False),  # not a refusal of this request: the endpoint's own trouble
    (413, "Request Entity Too Large", False),
    # Fields other than the message, code and type may echo the request, which the agent wrote.
    (400, {"error": {"message": "invalid tool schema", "param": "maximum context length"}}, False),
    (400, _relayed({"error": {"message": "invalid tool schema", "param": "prompt is too long"}}), False),
    (400, {"error": {"message": "bad request", "code": ["context_length_exceeded"]}}, False),
    (400, None, False),
])
def test_an_overflow_is_recognised_from_the_refusal_alone(status, body, overflow):
    assert (context_overflow(status, body) is not None) is overflow
