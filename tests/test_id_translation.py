"""Recorded ids → live ids when a recorded run is re-executed against live services (decathlon/id_translation.py)."""
from __future__ import annotations

import asyncio
import json

from decathlon.id_translation import IdTranslator, unwrap
from decathlon.policies import _Recorded


def _item(text: str) -> str:
    """A tool result as the recorded runs store it: the MCP content item as JSON text."""
    return json.dumps({"type": "text", "text": text, "annotations": None})


def test_json_answers_align_by_natural_key_not_position():
    t = IdTranslator()
    recorded = _item(json.dumps([{"id": 70, "name": "Maths"}, {"id": 71, "name": "Art", "account_id": 1}]))
    live = json.dumps([{"id": 2, "name": "Art", "account_id": 1}, {"id": 1, "name": "Maths"}])
    t.learn(recorded, live)
    assert t.mapping == {"70": "1", "71": "2"}
    # ints stay ints, strings stay strings; keys that are not ids are left alone
    assert json.loads(t.translate_arguments('{"course_id": 70, "ids": ["71"], "points": 70}')) == \
        {"course_id": 1, "ids": ["2"], "points": 70}


def test_nested_ids_and_camel_case_keys():
    t = IdTranslator()
    t.learn(json.dumps({"id": 341, "categories": [{"id": 15, "name": "Sale"}]}),
            json.dumps({"id": 12, "categories": [{"id": 3, "name": "Sale"}]}))
    out = json.loads(t.translate_arguments('{"productId": 341, "productData": {"categories": [{"id": 15}]}}'))
    assert out == {"productId": 12, "productData": {"categories": [{"id": 3}]}}


def test_text_answers_align_by_label_and_order():
    t = IdTranslator()
    t.learn(_item("1. ID: 12\n   Subject: a\n2. ID: 13\n   Subject: b"), "1. ID: 1\n   Subject: a\n2. ID: 2\n   Subject: b")
    assert t.translate_arguments('{"email_id": "13"}') == '{"email_id": "2"}'


def test_an_id_seen_with_two_live_values_is_not_translated():
    t = IdTranslator()
    t.learn(json.dumps({"id": 5}), json.dumps({"id": 7}))
    t.learn(json.dumps({"id": 5}), json.dumps({"id": 8}))
    assert "5" in t.conflicts and "5" not in t.mapping
    assert t.translate_arguments('{"id": 5}') == '{"id": 5}'


def test_identical_answers_learn_nothing_and_arguments_stay_byte_identical():
    t = IdTranslator()
    t.learn(json.dumps({"id": 5, "name": "x"}), json.dumps({"id": 5, "name": "x"}))
    assert t.mapping == {}
    raw = '{"course_id":5,  "x": "é"}'
    assert t.translate_arguments(raw) is raw


def test_unwrap_reads_every_recorded_shape():
    assert unwrap(_item("hi")) == "hi"
    assert unwrap([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]) == "a\nb"
    assert unwrap("plain") == "plain"
    assert unwrap(None) == ""


def test_replay_policy_rewrites_later_calls_from_earlier_answers():
    call = lambda i, name, args: {"id": i, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    turns = [{"role": "assistant", "content": None, "tool_calls": [call("c1", "canvas-canvas_list_courses", {})]},
             {"role": "assistant", "content": None,
              "tool_calls": [call("c2", "canvas-canvas_list_quizzes", {"course_id": 56})]}]
    recorded = {"c1": _item(json.dumps([{"id": 56, "name": "Calculus"}]))}
    policy = _Recorded(turns, recorded)
    first = asyncio.run(policy.act([], []))
    assert first is turns[0]
    live = [{"role": "tool", "tool_call_id": "c1", "content": json.dumps([{"id": 1, "name": "Calculus"}])}]
    second = asyncio.run(policy.act(live, []))
    assert json.loads(second["tool_calls"][0]["function"]["arguments"]) == {"course_id": 1}
    assert json.loads(turns[1]["tool_calls"][0]["function"]["arguments"]) == {"course_id": 56}  # not mutated


def test_a_saved_overlong_answer_is_read_under_its_live_name():
    saved = "... (The output of the tool call (shortuuid identifier: {}) is too long! ...)"
    t = IdTranslator()
    t.learn(_item(saved.format("aAt6vSk35YHq")), saved.format("Zx81Qp"))
    code = {"code": "open('/w/.overlong_tool_outputs/aAt6vSk35YHq.json')"}
    assert json.loads(t.translate_arguments(json.dumps(code))) == {"code": "open('/w/.overlong_tool_outputs/Zx81Qp.json')"}
