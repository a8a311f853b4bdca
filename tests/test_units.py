"""Small pure pieces: routing, rendering, launch time, context truncation, oracles."""
from __future__ import annotations

import json

import pytest

from decathlon.core.agent_loop import apply_context
from decathlon.core.oracles import Call, Oracle, assistant_message, variables
from decathlon.sandbox import launch_time
from decathlon.errors import InfraError
from decathlon.sandbox.routing import Route, route
from decathlon.sandbox.toolfmt import render, shortuuid


def test_route_on_longest_server_name():
    servers = ["google", "google-cloud", "pdf-tools", "filesystem", "playwright_with_chunk"]
    assert route("google-cloud-bigquery_run_query", servers) == Route("google-cloud", "bigquery_run_query")
    assert route("google-search", servers) == Route("google", "search")
    assert route("pdf-tools-read_pdf_pages", servers) == Route("pdf-tools", "read_pdf_pages")
    assert route("local-python-execute", servers) == Route("local", "python-execute")
    assert route("playwright_with_chunk-browser_click", servers) == Route("playwright_with_chunk", "browser_click")
    assert route("web_search", servers) is None
    assert route("filesystem-", servers) is None


def test_render_matches_toolathlon():
    one = render([{"type": "text", "text": "héllo \"x\"", "annotations": None, "_meta": None}])
    assert one == '{"type":"text","text":"héllo \\"x\\"","annotations":null}'
    two = render([{"type": "text", "text": "a", "error": True}, {"type": "text", "text": "b"}])
    assert two == ('[{"type": "text", "text": "a", "annotations": null, "error": true}, '
                   '{"type": "text", "text": "b", "annotations": null}]')
    assert render([]) == "[]"


def test_shortuuid_is_stable_and_shaped():
    a, b = shortuuid("x"), shortuuid("x")
    assert a == b and len(a) == 22 and a != shortuuid("y")


def test_launch_time_forms():
    assert launch_time.resolve("2026-03-02 09:00:00") == "2026-03-02 09:00:00 Monday"
    assert launch_time.resolve("2026-03-02T09:00:00") == "2026-03-02 09:00:00 Monday"
    assert launch_time.resolve("2026-03-02") == "2026-03-02 00:00:00 Monday"
    with pytest.raises(InfraError):
        launch_time.resolve("yesterday")


def test_apply_context_keeps_task_and_recent_turns():
    msgs = [{"role": "system"}, {"role": "user"}]
    for i in range(4):
        msgs += [{"role": "assistant", "n": i}, {"role": "tool", "n": i}]
    kept = apply_context(msgs, 2)
    assert [m.get("n") for m in kept] == [None, None, 2, 2, 3, 3]
    assert apply_context(msgs, 10) == msgs


def test_oracle_messages_are_deterministic():
    o = Oracle("t", [[Call("filesystem-read_file", {"path": "${workspace}/a"})], [Call("local-x", "not json")]], "end")
    v = variables("/ws", "2026-03-02 09:00:00 Monday")
    m0 = assistant_message(o, 0, v)
    assert json.loads(m0["tool_calls"][0]["function"]["arguments"]) == {"path": "/ws/a"}
    assert m0 == assistant_message(o, 0, v)
    assert assistant_message(o, 1, v)["tool_calls"][0]["function"]["arguments"] == "not json"
    assert assistant_message(o, 2, v) == {"role": "assistant", "content": "end"}


def test_an_oracle_call_saves_an_id_from_its_answer_for_a_later_call():
    from decathlon.core.oracles import saved
    o = Oracle("t", [[Call("forms-create", {"title": "x"}, {"form": "formId"})],
                     [Call("forms-add", {"formId": "${form}"})]], "end")
    first = assistant_message(o, 0, {})
    answer = {"type": "text", "text": json.dumps({"formId": "1abc", "info": {"formId": "other"}}), "annotations": None}
    messages = [first, {"role": "tool", "tool_call_id": first["tool_calls"][0]["id"], "content": json.dumps(answer)}]
    assert saved(o, messages) == {"form": "1abc"}
    assert json.loads(assistant_message(o, 1, saved(o, messages))["tool_calls"][0]["function"]["arguments"]) == \
        {"formId": "1abc"}
    # an answer without the key (an error's text) saves nothing: the later call names ${form} as it is
    messages[1]["content"] = "Error: MCP error -32603: Failed to create form"
    assert saved(o, messages) == {}
