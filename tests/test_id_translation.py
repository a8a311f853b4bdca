"""Recorded ids → live ids when a recorded run is re-executed against live services (decathlon/recordings/id_translation.py)."""
from __future__ import annotations

import asyncio
import json

from decathlon.recordings.id_translation import IdTranslator, unwrap
from decathlon.core.policies import _Recorded


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
    def call(i, name, args):
        return {"id": i, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
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


def test_one_recorded_number_naming_two_kinds_is_translated_per_kind():
    # Upstream numbers each table on its own: recorded course 56 and question 56 are different objects.
    t = IdTranslator()
    t.learn(_item(json.dumps([{"id": 56, "name": "Calculus"}])), json.dumps([{"id": 3, "name": "Calculus"}]),
            tool="canvas-canvas_list_courses")
    t.learn(_item(json.dumps([{"id": 56, "question_name": "Q1", "answers": [{"id": 340, "text": "2x"}]}])),
            json.dumps([{"id": 9, "question_name": "Q1", "answers": [{"id": 7001, "text": "2x"}]}]),
            tool="canvas-canvas_list_quiz_questions")
    assert "56" in t.conflicts  # globally ambiguous …
    args = {"course_id": 56, "answers": [{"question_id": 56, "answer_id": 340}]}
    out = json.loads(t.translate_arguments(json.dumps(args), "canvas-canvas_submit_quiz_answers"))
    assert out == {"course_id": 3, "answers": [{"question_id": 9, "answer_id": 7001}]}  # … but not per kind
    # a kind-less key falls back to the global table, which holds nothing ambiguous
    assert t.translate_arguments('{"id": 56}') == '{"id": 56}'


def test_the_latest_answer_wins_within_a_kind():
    t = IdTranslator()
    t.learn(json.dumps({"course_id": 5}), json.dumps({"course_id": 7}))
    t.learn(json.dumps({"course_id": 5}), json.dumps({"course_id": 8}))
    assert t.translate_arguments('{"courseId": 5}') == '{"courseId": 8}'
    t.learn(json.dumps({"course_id": 5}), json.dumps({"course_id": 5}))  # seen unchanged: no longer moved
    assert t.translate_arguments('{"courseId": 5}') == '{"courseId": 5}'


def test_a_validation_token_is_echoed_live():
    t = IdTranslator()
    rec, live = "3ad8d7e11f9390b42cb70eaf128c4f53", "b" * 64
    t.learn(_item(json.dumps({"quiz_submissions": [{"id": 1, "validation_token": rec}]})),
            json.dumps({"quiz_submissions": [{"id": 1, "validation_token": live}]}))
    out = json.loads(t.translate_arguments(json.dumps({"submission_id": 1, "validation_token": rec})))
    assert out == {"submission_id": 1, "validation_token": live}
    # a short or non-opaque value under a token key is never touched
    assert t.translate_arguments('{"validation_token": "x"}') == '{"validation_token": "x"}'


def test_kinds_from_keys_and_tool_names():
    from decathlon.recordings.id_translation import _scope_of, _tool_scope
    assert [_scope_of(k) for k in ("course_id", "courseId", "courses", "course_ids", "quizzes", "categories",
                                   "line_items", "id")] == \
        ["course", "course", "course", "course", "quiz", "category", "lineitem", None]
    assert _tool_scope("woocommerce-woo_products_get") == "product"
    assert _tool_scope("canvas-canvas_list_quiz_questions") == "question"
    assert _tool_scope("emails-search_emails") == "email"
    assert _tool_scope(None) is None
    # enroll_user answers an enrollment, not a user: a tool not named for reading or writing its noun
    # says nothing of its answer's kind
    assert _tool_scope("canvas-canvas_enroll_user") is None
    t = IdTranslator()
    t.learn(json.dumps([{"id": 64, "name": "Melissa"}]), json.dumps([{"id": 64, "name": "Melissa"}]),
            tool="canvas-canvas_list_account_users")
    t.learn(json.dumps({"id": 64, "user_id": 71}), json.dumps({"id": 10, "user_id": 71}), tool="canvas-canvas_enroll_user")
    assert t.translate_arguments('{"user_id": 64}', "canvas-canvas_enroll_user") == '{"user_id": 64}'


def test_a_rename_alone_is_enough_to_rewrite_a_later_call():
    saved = "(shortuuid identifier: {})"
    turns = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "x-list", "arguments": "{}"}}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "local-python-execute",
                                                          "arguments": json.dumps({"code": "open('AAAA1111')"})}}]}]
    policy = _Recorded(turns, {"c1": _item(saved.format("AAAA1111"))})
    asyncio.run(policy.act([], []))
    second = asyncio.run(policy.act([{"role": "tool", "tool_call_id": "c1", "content": saved.format("BBBB2222")}], []))
    assert json.loads(second["tool_calls"][0]["function"]["arguments"]) == {"code": "open('BBBB2222')"}


def test_shuffled_quiz_answers_align_by_their_text():
    # A quiz with shuffle_answers lists a student's answers in an order of its own on every server.
    t = IdTranslator()
    rec = [{"id": 61, "question_text": "d/dx x²?", "answers": [{"id": 2559, "text": "x"}, {"id": 340, "text": "2x"}]}]
    live = [{"id": 21, "question_text": "d/dx x²?", "answers": [{"id": 9017, "text": "2x"}, {"id": 5095, "text": "x"}]}]
    t.learn(_item(json.dumps(rec)), json.dumps(live), tool="canvas-canvas_list_quiz_questions")
    out = json.loads(t.translate_arguments('{"answers": [{"question_id": 61, "answer_id": 340}]}'))
    assert out == {"answers": [{"question_id": 21, "answer_id": 9017}]}


def test_a_name_made_unique_by_a_random_suffix_is_translated_wherever_a_later_call_names_it():
    """machine-operating: the preprocess names its bucket iot_anomaly_reports-<12 hex>; re-executed it makes
    another suffix, and the recorded upload to the recorded bucket was refused as not allowed."""
    t = IdTranslator()
    t.learn(_item("Found 1 buckets:\n- iot_anomaly_reports-7b6c349200a5: US-CENTRAL1"),
            _item("Found 1 buckets:\n- iot_anomaly_reports-ac17a02cefe3: US-CENTRAL1"))
    args = json.loads(t.translate_arguments(json.dumps(
        {"bucket_name": "iot_anomaly_reports-7b6c349200a5", "source": "gs://iot_anomaly_reports-7b6c349200a5/a.csv",
         "note": "iot_anomaly_reports-deadbeefcafe"})))
    assert args == {"bucket_name": "iot_anomaly_reports-ac17a02cefe3", "source": "gs://iot_anomaly_reports-ac17a02cefe3/a.csv",
                    "note": "iot_anomaly_reports-deadbeefcafe"}
    # two names of one stem in an answer say nothing of which is which; a plain word is no suffix
    u = IdTranslator()
    u.learn(_item("b-1111aaaa2222 b-3333bbbb4444 logs_database"), _item("b-5555cccc6666 b-7777dddd8888 logs_fedcba98"))
    assert not u.active


def test_a_quiz_attempt_is_a_quiz_submission_and_a_chosen_answer_is_an_answer_id():
    """canvas_start_quiz_attempt answers a quiz submission (its `id` numbered apart from the quiz ids beside it), and
    canvas_submit_quiz_answers names that submission `submission_id` and a chosen answer `answer`: a recording whose
    quiz ids are one off from the live ones must not send its submission 2 to the live submission 1, and its answer
    ids (numbered afresh in every episode) go as the live answers of the same text."""
    t = IdTranslator()
    t.learn(json.dumps({"id": 2, "quiz_id": 3, "submission_id": 24}), json.dumps({"id": 2, "quiz_id": 2, "submission_id": 6}),
            tool="canvas-canvas_start_quiz_attempt")
    t.learn(json.dumps([{"id": 7, "quiz_id": 3, "answers": [{"id": 3508, "text": "O(n log n)"}, {"id": 12, "text": "O(n)"}]}]),
            json.dumps([{"id": 3, "quiz_id": 2, "answers": [{"id": 41, "text": "O(n)"}, {"id": 9001, "text": "O(n log n)"}]}]),
            tool="canvas-canvas_list_quiz_questions")
    sent = json.loads(t.translate_arguments(json.dumps({"course_id": 7, "quiz_id": 3, "submission_id": 2,
                                                        "answers": [{"question_id": 7, "answer": 3508}]}),
                                            tool="canvas-canvas_submit_quiz_answers"))
    assert sent["quiz_id"] == 2 and sent["submission_id"] == 2
    assert sent["answers"] == [{"question_id": 3, "answer": 9001}]


def test_an_opaque_id_is_replaced_wherever_a_later_call_names_it():
    """woocommerce-product-recall: the recorded form's id, in the later calls' arguments and in the link the agent
    wrote into a file, names the form the re-executed run created."""
    rec_id, live_id = "1lAiZDHllZUuhXgd30GzGE7AQsnkPgjkLG1cgmEmKyMg", "1RWgr01hUG6RcHpirOdU43j9KH95GTPawm3D5dKKBMkM"
    t = IdTranslator()
    t.learn(_item(json.dumps({"formId": rec_id, "title": "Recall"})),
            json.dumps({"formId": live_id, "title": "Recall"}), "google_forms-create_form")
    assert json.loads(t.translate_arguments(json.dumps({"formId": rec_id, "questionTitle": "Name"}))) == \
        {"formId": live_id, "questionTitle": "Name"}
    note = json.dumps({"path": "r.json", "content": f'{{"form_url": "https://docs.google.com/forms/d/{rec_id}/viewform"}}'})
    assert live_id in json.loads(t.translate_arguments(note))["content"]
    # words, short codes and one recorded id seen with two live ones are left alone
    u = IdTranslator()
    u.learn(json.dumps({"id": "primary", "iCalUID": "abcdefghijklmnopqrstuvwxyz"}),
            json.dumps({"id": "primary2", "iCalUID": "zyxwvutsrqponmlkjihgfedcba"}))
    assert not u.active
    u.learn(json.dumps({"eventId": "a1b2c3d4e5f6g7h8i9j0k1"}), json.dumps({"eventId": "z9y8x7w6v5u4t3s2r1q0p0"}))
    u.learn(json.dumps({"eventId": "a1b2c3d4e5f6g7h8i9j0k1"}), json.dumps({"eventId": "m9y8x7w6v5u4t3s2r1q0p0"}))
    assert not u.active and "a1b2c3d4e5f6g7h8i9j0k1" in u.opaque_conflicts


def test_an_opaque_id_shown_only_inside_a_link_is_learnt_from_it():
    """woocommerce-product-recall (deepseek's run): the agent copied the form's published link, whose id Google shows
    only inside `responderUri`, into its report; re-executed, the report names the live form's page."""
    rec_pub, live_pub = "1FAIpQLSfcno05qm0fZ0JzOChzAiHtJILWlJLoAwk_Cqa5cGm1Ebc9Sg", "1FAIpQLSZPmsWx5Pk-Uhfl5AKGn0MIVVzM-XWiAv"
    link = "https://docs.google.com/forms/d/e/{}/viewform"
    t = IdTranslator()
    t.learn(_item(json.dumps({"formId": "same", "responderUri": link.format(rec_pub)})),
            json.dumps({"formId": "same", "responderUri": link.format(live_pub)}), "google_forms-get_form")
    report = json.dumps({"path": "r.json", "content": json.dumps({"form_url": link.format(rec_pub)})})
    assert link.format(live_pub) in json.loads(json.loads(t.translate_arguments(report))["content"])["form_url"]
    # links that differ in more than an opaque id teach nothing
    u = IdTranslator()
    u.learn(json.dumps({"url": f"https://a.example/x/{rec_pub}/edit"}), json.dumps({"url": f"https://a.example/y/{live_pub}/view"}))
    u.learn(json.dumps({"url": "https://a.example/page/1"}), json.dumps({"url": "https://a.example/page/2"}))
    assert not u.active
