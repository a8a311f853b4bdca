"""The Canvas emulator against Canvas's own recorded answers (decathlon.emulators.fidelity.canvas): every recorded
run's `canvas-*` calls replayed in order through the stand-in's tool functions on a fresh emulator seeded with what
the run showed, each answer compared with the recorded one. The runs are read where they lie, never copied.

The rebuild and judging rules are also tested on small runs of our own, in the recordings' shape, so they hold
without the recorded runs."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from fidelity_gaps import assert_only_known_gaps, replayed

from decathlon.emulators.fidelity import canvas, known_gaps
from decathlon.emulators.fidelity.canvas_seed import AGENT_TOKEN, UNSEEN_IDS, build
from decathlon.emulators.fidelity.recorded import Exchange

# what a run may call, by the kind of Canvas object it is about
FAMILIES = {
    "courses": {"list_courses", "get_course", "list_account_courses", "create_course", "update_course"},
    "users": {"list_account_users", "get_user_profile"},
    "account": {"get_account"},
    "enrollments": {"enroll_user"},
    "assignments and grades": {"list_assignments", "submit_grade"},
    "quizzes": {"list_quizzes", "create_quiz", "create_quiz_question"},
    "announcements": {"list_announcements", "create_announcement"},
    "conversations": {"create_conversation"},
}


@pytest.fixture(scope="module")
def cases() -> list[canvas.Case]:
    return replayed("canvas", canvas.replay)


def test_every_family_of_tools_the_replay_rebuilds_agrees_somewhere(cases: list[canvas.Case]) -> None:
    agreed = {c.exchange.tool.removeprefix(canvas.TOOL) for c in cases if c.verdict == "agreed"}
    missing = {family: tools for family, tools in FAMILIES.items() if not agreed & tools}
    assert not missing, missing
    judged = [c for c in cases if c.verdict != "cannot-rebuild"]
    assert len(judged) >= 200, len(judged)


def test_canvas_refusal_of_a_quiz_type_is_the_emulators_word_for_word(cases: list[canvas.Case]) -> None:
    refused = [c for c in cases if c.recorded.startswith("Error: Canvas API Error")]
    assert refused and all((c.verdict, c.how) == ("agreed", "error text") for c in refused), \
        [(c.exchange.name, c.emulated) for c in refused]


def test_no_replayed_call_disagrees_but_the_known_gaps(cases: list[canvas.Case]) -> None:
    assert_only_known_gaps(cases, known_gaps.CANVAS)


# ---- the rules, on runs of our own ------------------------------------------------------------------------------

UUID = "A" * 40
T = "2025-03-04T05:06:07Z"


def _run(*calls: tuple[str, dict[str, Any], Any]) -> list[Exchange]:
    return [Exchange("t", i, canvas.TOOL + tool, args, answer if isinstance(answer, str) else json.dumps(answer))
            for i, (tool, args, answer) in enumerate(calls)]


def _course(cid: int, **more: Any) -> dict[str, Any]:
    return {"id": cid, "name": "Biology", "account_id": 1, "uuid": UUID, "start_at": T, "course_code": "BIO1",
            "workflow_state": "available", **more}


def _user(uid: int, name: str) -> dict[str, Any]:
    first, last = name.split()
    return {"id": uid, "name": name, "sortable_name": f"{last}, {first}", "short_name": first,
            "sis_user_id": f"MCP{uid:06d}", "integration_id": None, "sis_import_id": None,
            "login_id": f"{first.lower()}@mcp.com"}


def test_the_seed_holds_what_the_answers_printed_with_their_ids_and_nothing_the_run_made() -> None:
    listing = [_course(7, teachers=[{"id": 90, "display_name": "Tess"}],
                       enrollments=[{"type": "student", "role": "StudentEnrollment", "role_id": 3, "user_id": 40,
                                     "enrollment_state": "active"}])]
    calls = _run(("list_courses", {}, listing),
                 ("list_account_users", {"account_id": 1, "search_term": "ada"},
                  "Users (Page 1):\n\n" + json.dumps([_user(41, "Ada Lovelace")])),
                 ("create_course", {"account_id": 1, "name": "New"}, _course(8, name="New")))
    seen = canvas.rebuild(calls)
    assert seen.agent == 40  # the user whose role the course listing shows
    assert set(seen.courses) == {7} and 41 in seen.users and seen.named == {90: "Tess"}
    assert (7, 90, "TeacherEnrollment", "active") in seen.roles
    store = build(seen, _directory())
    assert store.courses[7].uuid == UUID and store.courses[7].name == "Biology" and 8 not in store.courses
    assert store.users[41].sis_user_id == "MCP000041" and store.users[90].short_name == "Tess"
    assert store.tokens[AGENT_TOKEN] == 40
    assert store.courses[7].section_id > UNSEEN_IDS  # an id no answer showed never meets a real one


def test_each_creation_takes_the_id_canvas_gave_it_and_concurrent_ones_run_in_canvas_order(tmp_path: Path) -> None:
    calls = _run(("create_course", {"name": "B"}, _course(16, name="B")),
                 ("create_course", {"name": "A"}, _course(15, name="A")),
                 ("enroll_user", {"course_id": 16, "user_id": 5}, {"id": 60, "course_id": 16, "course_section_id": 19}))
    assert canvas.pins(calls) == {0: {"course": 16, "section": 19}, 1: {"course": 15}, 2: {"enrollment": 60}}
    run = tmp_path / "t.json"
    message = {"role": "assistant", "tool_calls": [{"id": str(i)} for i in range(2)]}
    run.write_text(json.dumps({"messages": [message, {"role": "assistant", "tool_calls": [{"id": "2"}]}]}))
    assert canvas.replay_order(calls, canvas.batches(run)) == [1, 0, 2]


def _judged(recorded: Any, emulated: Any, *, tool: str = "get_course", seen: canvas.Seen | None = None,
            **args: Any) -> canvas.Case:
    ex = _run((tool, {"course_id": 7, **args}, recorded))[0]
    judge = canvas.Judge(seen or canvas.Seen(), ("2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"))
    return judge(ex, emulated if isinstance(emulated, str) else json.dumps(emulated))


def test_drawn_values_and_the_replays_clock_are_masked_and_nothing_else() -> None:
    seen = canvas.Seen(courses={7: _course(7)})
    made = _course(9, uuid="B" * 40, calendar={"ics": f"http://localhost:10001/feeds/calendars/course_{'B' * 40}.ics"})
    ours = {**made, "uuid": "C" * 40, "start_at": "2026-01-01T00:00:30Z",
            "calendar": {"ics": f"http://localhost:10001/feeds/calendars/course_{'C' * 40}.ics"}}
    assert _judged(made, ours, seen=seen).verdict == "agreed"  # a uuid Canvas drew, a time of the replay's clock
    assert _judged(_course(7), {**_course(7), "uuid": "C" * 40}, seen=seen).verdict == "disagreed"  # a seeded uuid
    assert _judged(made, {**ours, "start_at": "2026-02-01T00:00:00Z"}, seen=seen).verdict == "disagreed"
    reordered = dict(reversed(list(made.items())))
    case = _judged(made, reordered, seen=seen)
    assert case.verdict == "disagreed" and "another order" in case.how
    assert _judged("Error: Canvas API Error (404): x", "Error: Canvas API Error (404): x").how == "error text"
    assert _judged("Error: Canvas API Error (404): x", made).verdict == "disagreed"


def test_calls_that_hang_on_what_the_run_does_not_show_are_set_aside() -> None:
    seen = canvas.Seen(named={5: "Tess"})
    enrolled = _judged({"id": 1}, {"id": 1}, tool="enroll_user", seen=seen, user_id=5)
    assert enrolled.verdict == "cannot-rebuild" and "only a reference" in enrolled.how
    judge = canvas.Judge(canvas.Seen(), ("", ""))
    upload, read = _run(("submit_assignment_with_file", {"course_id": 1, "assignment_id": 2, "file_path": "/x"}, "{}"),
                        ("get_submission", {"course_id": 1, "assignment_id": 2}, "{}"))
    assert judge(upload, None).verdict == "cannot-rebuild"
    assert judge(read, "{}").verdict == "cannot-rebuild" and "earlier call" in judge(read, "{}").how


def test_the_seed_loads_into_a_running_emulator_through_its_own_format(tmp_path: Path) -> None:
    """The seed folder is the emulator's snapshot format: load_seed takes it, and the course answers as seeded."""
    calls = _run(("list_courses", {}, [_course(7, enrollments=[{"type": "teacher", "role": "TeacherEnrollment",
                                                                 "role_id": 4, "user_id": 40,
                                                                 "enrollment_state": "active"}])]),
                 ("get_course", {"course_id": 7}, "{}"))
    seen = canvas.rebuild(calls)
    answers, _ = asyncio.run(canvas._replay_run(calls, [0, 1], seen, tmp_path))
    got = json.loads(answers[1] or "{}")
    assert (got["id"], got["uuid"], got["start_at"], got["name"]) == (7, UUID, T, "Biology")


def _directory():
    from decathlon.emulators.directory import Directory

    return Directory(domain="mcp.com", users=())
