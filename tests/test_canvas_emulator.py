"""Contract tests of the Canvas LMS emulator (decathlon/emulators/canvas) over real HTTP on ephemeral ports.

Each test starts its own emulator in-process (a background event loop) seeded with a small
directory of made-up people, and talks to it with httpx the way the checkout's scripts and the canvas
MCP server do: status codes, bodies, `Link` pagination, auth failures, unknown paths, form-encoded
and JSON bodies, the quiz-taking flow, the three-step file upload.
"""
from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest

from decathlon.emulators.canvas import RunningService, start
from decathlon.emulators.directory import Account, Directory

ADMIN = "mcpcanvasadmintoken1"
TEACHER, ANN, BOB, CAL = "tok_teacher", "tok_ann", "tok_bob", "tok_cal"
NOT_FOUND = {"errors": [{"message": "The specified resource does not exist."}]}
UNAUTHORIZED = {"status": "unauthorized", "errors": [{"message": "user not authorized to perform that action"}]}


def directory() -> Directory:
    people = [(1, "Tess", "Quill", TEACHER), (2, "Ann", "Arbor", ANN), (3, "Bob", "Brook", BOB), (4, "Cal", "Cove", CAL)]
    return Directory("mcp.com", tuple(Account(i, f, last, f"{f} {last}", f"{f.lower()}@mcp.com", f"pw{i}", canvas_token=t)
                                      for i, f, last, t in people))


@dataclass
class FakeClock:
    now: datetime = field(default_factory=lambda: datetime(2026, 3, 2, 16, 0, tzinfo=timezone.utc))

    def __call__(self) -> datetime:
        return self.now


class Emulator:
    """One emulator on its own loop thread, with an httpx client per scheme."""

    def __init__(self, https: bool = False, quiz_start_500: bool = False) -> None:
        self.clock = FakeClock()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        ports = {"http": 0, "https": 0} if https else {"http": 0}
        self.service: RunningService = asyncio.run_coroutine_threadsafe(
            start(directory(), "127.0.0.1", ports, clock=self.clock, quiz_start_500=quiz_start_500),
            self.loop).result(20)
        self.base = f"http://127.0.0.1:{self.service.ports['http']}"
        self.client = httpx.Client(base_url=self.base, timeout=10)

    def close(self) -> None:
        self.client.close()
        asyncio.run_coroutine_threadsafe(self.service.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    def call(self, method: str, path: str, token: str | None = ADMIN, **kw: Any) -> httpx.Response:
        headers = dict(kw.pop("headers", {}))
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return self.client.request(method, f"/api/v1/{path.lstrip('/')}", headers=headers, **kw)

    def ok(self, method: str, path: str, token: str | None = ADMIN, **kw: Any) -> Any:
        r = self.call(method, path, token, **kw)
        assert r.status_code == 200, (method, path, r.status_code, r.text)
        return r.json()

    # a published course: Tess teaches, Ann and Bob study (Cal is not enrolled)
    def course(self, name: str = "Art History", code: str = "AH101", publish: bool = True) -> int:
        cid = self.ok("POST", "accounts/1/courses", json={"course": {"name": name, "course_code": code}})["id"]
        for uid, kind in ((34, "TeacherEnrollment"), (35, "StudentEnrollment"), (36, "StudentEnrollment")):
            self.ok("POST", f"courses/{cid}/enrollments",
                    json={"enrollment": {"user_id": uid, "type": kind, "enrollment_state": "active"}})
        if publish:
            self.ok("PUT", f"courses/{cid}", json={"course": {"event": "offer"}})
        return cid


@pytest.fixture
def emu():
    e = Emulator()
    yield e
    e.close()


# --- auth, errors ----------------------------------------------------------------------------------

def test_missing_and_invalid_tokens_get_canvas_401_bodies(emu):
    r = emu.call("GET", "users/self/profile", token=None)
    assert r.status_code == 401
    assert r.json() == {"status": "unauthenticated", "errors": [{"message": "user authorization required"}]}
    r = emu.call("GET", "users/self/profile", token="nope")
    assert r.status_code == 401 and r.json() == {"errors": [{"message": "Invalid access token."}]}
    assert r.headers["WWW-Authenticate"].startswith("Bearer")
    # Canvas also takes the token as a parameter
    assert emu.ok("GET", "users/self/profile", token=None, params={"access_token": ANN})["login_id"] == "ann@mcp.com"


def test_admins_may_act_as_another_user_and_get_answers_head(emu):
    assert emu.ok("GET", "users/self/profile", params={"as_user_id": 35})["login_id"] == "ann@mcp.com"
    assert emu.call("GET", "users/self/profile", token=BOB, params={"as_user_id": 35}).json() == UNAUTHORIZED
    assert emu.call("GET", "users/self/profile", params={"as_user_id": 9999}).status_code == 404
    head = emu.client.head("/api/v1/users/self", headers={"Authorization": f"Bearer {ANN}"})
    assert head.status_code == 200 and head.content == b""


def test_unknown_paths_and_methods_get_canvas_404(emu):
    for method, path in (("GET", "nope"), ("PATCH", "courses"), ("DELETE", "accounts/1/users"), ("GET", "courses/abc"),
                         ("POST", "users/self/profile")):
        r = emu.call(method, path)
        assert r.status_code == 404, (method, path)
        assert r.json() == NOT_FOUND
        assert r.headers["Content-Type"].startswith("application/json")
    r = emu.client.get("/not-api")
    assert r.status_code == 404 and r.json() == NOT_FOUND


def test_internal_error_is_canvas_shaped_without_traceback(emu):
    def boom(token: str):
        raise RuntimeError("secret detail")
    emu.service.store.user_for_token = boom  # type: ignore[method-assign]
    r = emu.call("GET", "users/self")
    assert r.status_code == 500
    body = r.json()
    assert body["errors"] == [{"message": "An error occurred."}] and isinstance(body["error_report_id"], int)
    assert "secret" not in r.text and "Traceback" not in r.text


# --- users and accounts --------------------------------------------------------------------------

def test_seeded_users_keep_upstream_ids_names_and_tokens(emu):
    me = emu.ok("GET", "users/self/profile", token=ANN)
    assert (me["id"], me["name"], me["short_name"], me["sortable_name"], me["login_id"], me["sis_user_id"]) == \
        (35, "Ann Arbor", "Ann", "Arbor, Ann", "ann@mcp.com", "MCP000002")
    admin = emu.ok("GET", "users/self/profile", token="mcpcanvasadmintoken3")
    assert (admin["id"], admin["name"], admin["short_name"], admin["sis_user_id"]) == \
        (536, "MCP Canvas Admin 3", "Admin3", "ADMIN003")
    assert emu.ok("GET", "users/self", token=BOB)["id"] == 36
    assert emu.ok("GET", "accounts/1")["name"] == "Canvas Docker"
    assert emu.call("GET", "accounts/1", token=ANN).json() == UNAUTHORIZED


def test_account_users_paginate_with_canvas_link_headers(emu):
    r = emu.call("GET", "accounts/1/users", params={"per_page": 2})
    first = r.json()
    assert [u["name"] for u in first] == ["MCP Canvas Admin 1", "MCP Canvas Admin 2"]   # sortable "1, MCP..." first
    links = httpx.Response(200, headers={"link": r.headers["Link"]}).links
    assert set(links) == {"current", "next", "first", "last"}
    assert "page=4" in links["last"]["url"] and links["next"]["url"].startswith(emu.base)
    seen = [u["id"] for u in first]
    url = links["next"]["url"]
    while url:
        r = emu.client.get(url, headers={"Authorization": f"Bearer {ADMIN}"})
        page = httpx.Response(200, headers={"link": r.headers["Link"]}).links
        assert "prev" in page
        seen += [u["id"] for u in r.json()]
        url = page.get("next", {}).get("url")
    assert sorted(seen) == [34, 35, 36, 37, 534, 535, 536]
    found = emu.ok("GET", "accounts/1/users", params={"search_term": "bob@mcp"})
    assert [(u["id"], u["login_id"]) for u in found] == [(36, "bob@mcp.com")]
    r = emu.call("GET", "accounts/1/users", params={"search_term": "b"})
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "search_term"


def test_create_user_and_duplicate_login(emu):
    body = {"user": {"name": "Dee Dune"}, "pseudonym": {"unique_id": "dee@mcp.com"}}
    user = emu.ok("POST", "accounts/1/users", json=body)
    assert user["id"] == 537 and user["sortable_name"] == "Dune, Dee" and user["login_id"] == "dee@mcp.com"
    r = emu.call("POST", "accounts/1/users", json=body)
    assert r.status_code == 400 and r.json()["errors"]["pseudonym"]["unique_id"][0]["type"] == "taken"


# --- courses -------------------------------------------------------------------------------------

def test_course_create_from_form_and_json_bodies(emu):
    form = emu.ok("POST", "accounts/1/courses", data={"course[name]": "Film", "course[course_code]": "FILM101",
                                                      "course[is_public]": "true"})
    js = emu.ok("POST", "accounts/1/courses", json={"course": {"name": "Poetry", "course_code": "POE1", "is_public": True}})
    assert (form["id"], js["id"]) == (1, 2)
    for c, name in ((form, "Film"), (js, "Poetry")):
        assert c["name"] == name and c["is_public"] is True and c["workflow_state"] == "unpublished"
        assert c["account_id"] == 1 and c["enrollment_term_id"] == 1 and c["default_view"] == "modules"
        assert c["sis_course_id"] is None and c["start_at"] is None
    r = emu.call("POST", "accounts/1/courses", token=ANN, json={"course": {"name": "x"}})
    assert r.status_code == 401 and r.json() == UNAUTHORIZED


def test_course_events_publish_conclude_delete(emu):
    cid = emu.course(publish=False)
    emu.clock.now += timedelta(hours=1)
    offered = emu.ok("PUT", f"courses/{cid}", json={"course": {"event": "offer"}})
    assert offered["workflow_state"] == "available" and offered["start_at"] == "2026-03-02T17:00:00Z"
    # a top-level `event` is not a course parameter: Canvas ignores it
    assert emu.ok("PUT", f"courses/{cid}", json={"event": "delete"})["workflow_state"] == "available"
    assert emu.ok("PUT", f"courses/{cid}", json={"course": {"event": "conclude"}})["workflow_state"] == "completed"
    r = emu.call("DELETE", f"courses/{cid}", json={"event": "nonsense"})
    assert r.status_code == 400
    assert emu.ok("DELETE", f"courses/{cid}", json={"event": "delete"}) == {"delete": True}
    assert emu.call("GET", f"courses/{cid}").json() == NOT_FOUND
    assert emu.ok("GET", "accounts/1/courses") == []
    assert [c["id"] for c in emu.ok("GET", "accounts/1/courses", params={"state[]": "deleted"})] == [cid]


def test_course_lists_follow_enrollment_and_publication(emu):
    b = emu.course("Biology", "BIO1")
    a = emu.course("Algebra", "ALG1", publish=False)
    assert [c["id"] for c in emu.ok("GET", "courses", token=ANN)] == [b]           # students: published only
    assert [c["id"] for c in emu.ok("GET", "courses", token=TEACHER)] == [a, b]    # teachers: by name
    assert emu.ok("GET", "courses", token=CAL) == []
    mine = emu.ok("GET", "courses", token=ANN, params={"include[]": ["total_students", "teachers", "term"]})[0]
    assert mine["enrollments"] == [{"type": "student", "role": "StudentEnrollment", "role_id": 3, "user_id": 35,
                                    "enrollment_state": "active"}]
    assert mine["total_students"] == 2 and mine["teachers"][0]["display_name"] == "Tess"
    assert mine["term"]["name"] == "Default Term" and "sis_course_id" not in mine
    assert emu.call("GET", f"courses/{a}", token=ANN).json() == UNAUTHORIZED
    assert emu.call("GET", f"courses/{b}", token=CAL).json() == UNAUTHORIZED
    found = emu.ok("GET", "accounts/1/courses", params={"search_term": "bio"})
    assert [c["id"] for c in found] == [b] and "enrollments" not in found[0]


# --- enrollments ---------------------------------------------------------------------------------

def test_enrollments_reuse_filter_and_remove(emu):
    cid = emu.course()
    again = emu.ok("POST", f"courses/{cid}/enrollments",
                   json={"enrollment": {"user_id": 35, "type": "StudentEnrollment", "enrollment_state": "active"}})
    listed = emu.ok("GET", f"courses/{cid}/enrollments", params={"type[]": "StudentEnrollment", "include[]": "user"})
    assert [e["user_id"] for e in listed] == [35, 36] and listed[0]["id"] == again["id"]
    assert listed[0]["user"]["login_id"] == "ann@mcp.com" and listed[0]["role_id"] == 3
    assert listed[0]["html_url"] == f"http://localhost:{emu.service.ports['http']}/courses/{cid}/users/35"
    r = emu.call("POST", f"courses/{cid}/enrollments", json={"enrollment": {"user_id": 37, "type": "Bogus"}})
    assert r.status_code == 403 and r.json() == {"message": "Invalid type"}
    r = emu.call("POST", f"courses/{cid}/enrollments", json={"enrollment": {"type": "StudentEnrollment"}})
    assert r.status_code == 403 and "without a user" in r.json()["message"]
    assert emu.call("POST", f"courses/{cid}/enrollments", json={"enrollment": {"user_id": 999}}).status_code == 404
    gone = emu.ok("DELETE", f"courses/{cid}/enrollments/{again['id']}", json={"task": "delete"})
    assert gone["enrollment_state"] == "deleted"
    concluded = emu.ok("DELETE", f"courses/{cid}/enrollments/{listed[1]['id']}")      # default task: conclude
    assert concluded["enrollment_state"] == "completed"
    assert emu.ok("GET", f"courses/{cid}/enrollments", params={"type[]": "StudentEnrollment"}) == []
    assert emu.call("POST", f"courses/{cid}/enrollments", token=ANN,
                    json={"enrollment": {"user_id": 37}}).json() == UNAUTHORIZED


# --- assignments and submissions -----------------------------------------------------------------

def test_assignment_submit_grade_and_read_back(emu):
    cid = emu.course()
    due = "2026-03-01T23:59:00Z"
    a = emu.ok("POST", f"courses/{cid}/assignments", token=TEACHER, data={
        "assignment[name]": "Essay", "assignment[points_possible]": "10", "assignment[due_at]": due,
        "assignment[submission_types][]": ["online_text_entry", "online_upload"], "assignment[published]": "true"})
    assert (a["points_possible"], a["submission_types"], a["published"], a["due_at"]) == \
        (10, ["online_text_entry", "online_upload"], True, due)
    r = emu.call("POST", f"courses/{cid}/assignments/{a['id']}/submissions", token=ANN,
                 json={"submission": {"submission_type": "online_url", "url": "http://x"}})
    assert r.status_code == 400 and r.json()["message"] == "Invalid submission[submission_type] given"
    sub = emu.ok("POST", f"courses/{cid}/assignments/{a['id']}/submissions", token=ANN,
                 json={"submission": {"submission_type": "online_text_entry", "body": "<p>mine</p>"}})
    assert (sub["workflow_state"], sub["attempt"], sub["late"], sub["seconds_late"]) == ("submitted", 1, True, 57660)
    graded = emu.ok("PUT", f"courses/{cid}/assignments/{a['id']}/submissions/35", token=TEACHER,
                    json={"submission": {"posted_grade": "8.5"}, "comment": {"text_comment": "good"}})
    assert (graded["grade"], graded["score"], graded["workflow_state"], graded["grader_id"]) == ("8.5", 8.5, "graded", 34)
    assert graded["submission_comments"][0]["comment"] == "good" and len(graded["all_submissions"]) == 1
    mine = emu.ok("GET", f"courses/{cid}/assignments/{a['id']}/submissions/self", token=ANN)
    assert mine["body"] == "<p>mine</p>" and mine["score"] == 8.5
    assert emu.call("GET", f"courses/{cid}/assignments/{a['id']}/submissions/35", token=BOB).json() == UNAUTHORIZED
    assert emu.call("PUT", f"courses/{cid}/assignments/{a['id']}/submissions/35", token=ANN,
                    json={"submission": {"posted_grade": "10"}}).json() == UNAUTHORIZED
    subs = emu.ok("GET", f"courses/{cid}/assignments/{a['id']}/submissions", token=TEACHER)
    assert [(s["user_id"], s["workflow_state"]) for s in subs] == [(35, "graded"), (36, "unsubmitted")]
    pct = emu.ok("PUT", f"courses/{cid}/assignments/{a['id']}/submissions/36", token=TEACHER,
                 data={"submission[posted_grade]": "50%"})
    assert (pct["grade"], pct["score"], pct["submitted_at"]) == ("5", 5, None)


def test_unpublished_assignment_is_hidden_from_students(emu):
    cid = emu.course()
    a = emu.ok("POST", f"courses/{cid}/assignments", json={"assignment": {"name": "Draft"}})
    assert a["published"] is False and a["submission_types"] == ["none"]
    assert emu.ok("GET", f"courses/{cid}/assignments", token=ANN) == []
    assert emu.call("GET", f"courses/{cid}/assignments/{a['id']}", token=ANN).json() == UNAUTHORIZED
    r = emu.call("POST", f"courses/{cid}/assignments", json={"assignment": {"name": ""}})
    assert r.status_code == 400 and r.json()["errors"]["name"][0]["attribute"] == "name"
    deleted = emu.ok("DELETE", f"courses/{cid}/assignments/{a['id']}")
    assert deleted["workflow_state"] == "deleted"
    assert emu.call("GET", f"courses/{cid}/assignments/{a['id']}").status_code == 404


# --- quizzes -------------------------------------------------------------------------------------

def make_quiz(emu: Emulator, cid: int, attempts: int = 1) -> tuple[dict, list[dict]]:
    quiz = emu.ok("POST", f"courses/{cid}/quizzes", json={"quiz": {
        "title": "Midterm", "quiz_type": "assignment", "allowed_attempts": attempts, "time_limit": 30,
        "due_at": "2026-03-09T23:59:00Z", "points_possible": 999}})
    questions = []
    for n, (right, answers) in enumerate(((1, [{"answer_text": "x", "answer_weight": 0},
                                               {"answer_text": "2x", "answer_weight": 100}]),
                                          (0, [{"text": "1", "weight": 100}, {"text": "0", "weight": 0}])), start=1):
        questions.append(emu.ok("POST", f"courses/{cid}/quizzes/{quiz['id']}/questions", json={"question": {
            "question_name": f"Q{n}", "question_text": f"Question {n}", "question_type": "multiple_choice_question",
            "points_possible": 5 * n, "answers": answers}}))
        assert questions[-1]["answers"][right]["weight"] == 100
    emu.ok("PUT", f"courses/{cid}/quizzes/{quiz['id']}", json={"quiz": {"published": True}})
    return quiz, questions


def test_graded_quiz_owns_an_assignment_and_scores_from_questions(emu):
    cid = emu.course()
    quiz, questions = make_quiz(emu, cid)
    got = emu.ok("GET", f"courses/{cid}/quizzes/{quiz['id']}", token=ANN)
    assert (got["points_possible"], got["question_count"], got["published"]) == (15, 2, True)
    assert got["question_types"] == ["multiple_choice_question"] and "access_code" not in got
    assert got["version_number"] == 3 and got["permissions"]["submit"] is True and got["permissions"]["manage"] is False
    a = emu.ok("GET", f"courses/{cid}/assignments/{quiz['assignment_id']}", token=ANN)
    assert (a["name"], a["submission_types"], a["is_quiz_assignment"], a["quiz_id"], a["points_possible"]) == \
        ("Midterm", ["online_quiz"], True, quiz["id"], 15)
    practice = emu.ok("POST", f"courses/{cid}/quizzes", json={"quiz": {"title": "Warmup", "quiz_type": "practice_quiz"}})
    assert practice["assignment_id"] is None
    r = emu.call("POST", f"courses/{cid}/quizzes", json={"quiz": {"title": "Bad", "quiz_type": "graded"}})
    assert r.status_code == 400 and r.json() == {"errors": {"invalid_quiz_type": [
        {"attribute": "invalid_quiz_type", "type": "Quiz type is not valid", "message": "Quiz type is not valid"}]}}
    assert emu.call("GET", f"courses/{cid}/quizzes/{quiz['id']}/questions", token=ANN).json() == UNAUTHORIZED
    assert emu.call("DELETE", f"courses/{cid}/quizzes/{quiz['id']}/questions/{questions[0]['id']}").status_code == 204
    assert emu.ok("GET", f"courses/{cid}/quizzes/{quiz['id']}")["points_possible"] == 10


def test_a_quiz_start_answers_500_but_creates_the_attempt_as_toolathlons_canvas_does():
    # Every recorded start of a quiz got upstream's 500; the canvas MCP server then lists the attempts.
    emu = Emulator(quiz_start_500=True)
    try:
        cid = emu.course()
        quiz, _ = make_quiz(emu, cid)
        base = f"courses/{cid}/quizzes/{quiz['id']}/submissions"
        r = emu.call("POST", base, token=ANN)
        assert r.status_code == 500 and r.json()["errors"] == [{"message": "An error occurred."}]
        assert "Traceback" not in r.text
        (attempt,) = emu.ok("GET", base, token=ANN)["quiz_submissions"]
        assert attempt["workflow_state"] == "untaken" and attempt["validation_token"]
    finally:
        emu.close()


def test_quiz_attempt_flow_start_answer_complete(emu):
    cid = emu.course()
    quiz, questions = make_quiz(emu, cid)
    base = f"courses/{cid}/quizzes/{quiz['id']}/submissions"
    assert emu.call("GET", f"{base}/self", token=ANN).json() == NOT_FOUND
    qs = emu.ok("POST", base, token=ANN)["quiz_submissions"][0]
    assert (qs["attempt"], qs["workflow_state"], qs["attempts_left"], qs["end_at"]) == \
        (1, "untaken", 0, "2026-03-02T16:30:00Z")
    token = qs["validation_token"]
    again = emu.call("POST", base, token=ANN)
    assert again.status_code == 409 and again.json()["message"] == "a quiz submission already exists"
    listed = emu.ok("GET", f"quiz_submissions/{qs['id']}/questions", token=ANN)["quiz_submission_questions"]
    assert [q["id"] for q in listed] == [q["id"] for q in questions]
    assert all("weight" not in ans for q in listed for ans in q["answers"]) and listed[0]["answer"] is None
    right = [next(a["id"] for a in q["answers"] if a["weight"] > 0) for q in questions]
    bad = emu.call("POST", f"quiz_submissions/{qs['id']}/questions", token=ANN,
                   json={"attempt": 1, "validation_token": "wrong", "quiz_questions": []})
    assert bad.status_code == 403 and bad.json()["message"] == "invalid token"
    unknown = emu.call("POST", f"quiz_submissions/{qs['id']}/questions", token=ANN, json={
        "attempt": 1, "validation_token": token, "quiz_questions": [{"id": str(questions[0]["id"]), "answer": 10001}]})
    assert unknown.status_code == 400
    answered = emu.ok("POST", f"quiz_submissions/{qs['id']}/questions", token=ANN, json={
        "attempt": 1, "validation_token": token,
        "quiz_questions": [{"id": str(q["id"]), "answer": aid} for q, aid in zip(questions, right)]})
    assert [q["answer"] for q in answered["quiz_submission_questions"]] == right
    assert emu.call("POST", f"{base}/{qs['id']}/complete", token=ANN,
                    json={"attempt": 2, "validation_token": token}).json()["message"] == "attempt 2 can not be modified"
    emu.clock.now += timedelta(minutes=3)
    done = emu.ok("POST", f"{base}/{qs['id']}/complete", token=ANN, json={"attempt": 1, "validation_token": token})
    done = done["quiz_submissions"][0]
    assert (done["workflow_state"], done["score"], done["kept_score"], done["time_spent"]) == ("complete", 15, 15, 180)
    assert emu.ok("GET", f"{base}/self", token=ANN)["quiz_submissions"][0]["score"] == 15
    sub = emu.ok("GET", f"courses/{cid}/assignments/{quiz['assignment_id']}/submissions/self", token=ANN)
    assert (sub["workflow_state"], sub["score"], sub["submission_type"]) == ("graded", 15, "online_quiz")
    assert emu.call("POST", base, token=ANN).status_code == 409     # one attempt allowed, none left
    assert emu.call("POST", base, token=CAL).status_code in (401, 403)


def test_second_attempt_keeps_highest(emu):
    cid = emu.course()
    quiz, questions = make_quiz(emu, cid, attempts=2)
    base = f"courses/{cid}/quizzes/{quiz['id']}/submissions"
    scores = []
    for answers in (lambda q: next(a["id"] for a in q["answers"] if a["weight"] > 0),
                    lambda q: next(a["id"] for a in q["answers"] if a["weight"] == 0)):
        qs = emu.ok("POST", base, token=BOB)["quiz_submissions"][0]
        emu.ok("POST", f"quiz_submissions/{qs['id']}/questions", token=BOB, json={
            "attempt": qs["attempt"], "validation_token": qs["validation_token"],
            "quiz_questions": [{"id": q["id"], "answer": answers(q)} for q in questions]})
        done = emu.ok("POST", f"{base}/{qs['id']}/complete", token=BOB,
                      json={"attempt": qs["attempt"], "validation_token": qs["validation_token"]})
        scores.append(done["quiz_submissions"][0])
    assert [(s["attempt"], s["score"], s["kept_score"]) for s in scores] == [(1, 15, 15), (2, 0, 15)]
    history = emu.ok("GET", base, token=BOB)["quiz_submissions"]
    assert [(h["attempt"], h["score"]) for h in history] == [(1, 15), (2, 0)]


def test_essay_waits_for_review_then_teacher_scores_and_fudges(emu):
    cid = emu.course()
    quiz = emu.ok("POST", f"courses/{cid}/quizzes", json={"quiz": {"title": "Essay", "published": True}})
    q = emu.ok("POST", f"courses/{cid}/quizzes/{quiz['id']}/questions", json={"question": {
        "question_type": "essay_question", "question_text": "Why?", "points_possible": 10}})
    base = f"courses/{cid}/quizzes/{quiz['id']}/submissions"
    qs = emu.ok("POST", base, token=ANN)["quiz_submissions"][0]
    emu.ok("POST", f"quiz_submissions/{qs['id']}/questions", token=ANN, json={
        "attempt": 1, "validation_token": qs["validation_token"], "quiz_questions": [{"id": q["id"], "answer": "Because."}]})
    done = emu.ok("POST", f"{base}/{qs['id']}/complete", token=ANN,
                  json={"attempt": 1, "validation_token": qs["validation_token"]})["quiz_submissions"][0]
    assert (done["workflow_state"], done["score"]) == ("pending_review", 0)
    r = emu.call("PUT", f"{base}/{qs['id']}", token=ANN, json={"quiz_submissions": [{"attempt": 1}]})
    assert r.status_code == 403
    for _ in range(2):   # the same scores twice: fudge points are not added up
        scored = emu.ok("PUT", f"{base}/{qs['id']}", token=TEACHER, json={"quiz_submissions": [
            {"attempt": 1, "fudge_points": -1, "questions": {str(q["id"]): {"score": 8}}}]})["quiz_submissions"][0]
        assert (scored["workflow_state"], scored["score"], scored["fudge_points"]) == ("complete", 7, -1)
    sub = emu.ok("GET", f"courses/{cid}/assignments/{quiz['assignment_id']}/submissions/35", token=TEACHER)
    assert (sub["workflow_state"], sub["score"], sub["grader_id"]) == ("graded", 7, 34)


# --- discussions, conversations, modules, pages ---------------------------------------------------

def test_announcements_and_discussions(emu):
    cid = emu.course()
    for n in range(3):
        emu.clock.now += timedelta(minutes=1)
        emu.ok("POST", f"courses/{cid}/discussion_topics", token=TEACHER,
               json={"title": f"News {n}", "message": f"m{n}", "is_announcement": True})
    emu.ok("POST", f"courses/{cid}/discussion_topics", token=TEACHER,
           data={"title": "Talk", "message": "hi", "published": "true"})
    news = emu.ok("GET", f"courses/{cid}/discussion_topics", token=ANN, params={"only_announcements": "true"})
    assert [t["title"] for t in news] == ["News 2", "News 1", "News 0"]
    assert news[0]["subscription_hold"] == "topic_is_announcement" and news[0]["author"]["id"] == 34
    talk = emu.ok("GET", f"courses/{cid}/discussion_topics", token=ANN)
    assert [t["title"] for t in talk] == ["Talk"]
    entry = emu.call("POST", f"courses/{cid}/discussion_topics/{talk[0]['id']}/entries", token=ANN,
                     json={"message": "reply"})
    assert entry.status_code == 201 and entry.json()["user_id"] == 35
    assert emu.call("POST", f"courses/{cid}/discussion_topics", token=ANN,
                    json={"title": "x", "is_announcement": True}).json() == UNAUTHORIZED
    assert emu.call("DELETE", f"courses/{cid}/discussion_topics/{news[0]['id']}", token=TEACHER).status_code == 204
    assert len(emu.ok("GET", f"courses/{cid}/discussion_topics", params={"only_announcements": True})) == 2


def test_conversations_private_per_recipient_and_scopes(emu):
    emu.course()
    sent = emu.ok("POST", "conversations", token=TEACHER,
                  json={"recipients": ["35", "36"], "subject": "Hello", "body": "Welcome to the course, everyone."})
    assert len(sent) == 2 and all(c["private"] and not c["visible"] and c["workflow_state"] == "read" for c in sent)
    assert [p["id"] for p in sent[0]["participants"]] == [34, 35]
    assert sent[0]["messages"][0]["participating_user_ids"] == [34, 35]
    assert emu.ok("GET", "conversations", token=TEACHER) == []                      # only sent: not in the inbox
    assert len(emu.ok("GET", "conversations", token=TEACHER, params={"scope": "sent"})) == 2
    inbox = emu.ok("GET", "conversations", token=ANN)
    assert [(c["subject"], c["workflow_state"], c["last_message"]) for c in inbox] == \
        [("Hello", "unread", "Welcome to the course, everyone.")]
    assert emu.ok("GET", "conversations/unread_count", token=ANN) == {"unread_count": "1"}
    emu.ok("GET", f"conversations/{inbox[0]['id']}", token=ANN)
    assert emu.ok("GET", "conversations/unread_count", token=ANN) == {"unread_count": "0"}
    again = emu.ok("POST", "conversations", token=TEACHER, json={"recipients": ["35"], "body": "one more"})
    assert again[0]["id"] == sent[0]["id"] and again[0]["message_count"] == 2
    r = emu.call("POST", "conversations", token=TEACHER, json={"recipients": ["9999"], "body": "x"})
    assert r.status_code == 400 and r.json() == [{"attribute": "recipients", "message": "invalid"}]
    r = emu.call("POST", "conversations", token=ANN, json={"recipients": ["37"], "body": "x"})   # no shared course
    assert r.status_code == 400
    assert emu.call("GET", f"conversations/{sent[1]['id']}", token=ANN).json() == NOT_FOUND


def test_modules_and_items(emu):
    cid = emu.course()
    a = emu.ok("POST", f"courses/{cid}/assignments", json={"assignment": {"name": "HW", "published": True}})
    m = emu.ok("POST", f"courses/{cid}/modules", token=TEACHER, json={"module": {"name": "Week 1"}})
    assert m["published"] is False and m["position"] == 1
    item = emu.ok("POST", f"courses/{cid}/modules/{m['id']}/items", token=TEACHER,
                  json={"module_item": {"type": "Assignment", "content_id": a["id"]}})
    assert (item["title"], item["type"], item["content_id"], item["published"]) == ("HW", "Assignment", a["id"], True)
    assert emu.ok("GET", f"courses/{cid}/modules", token=ANN) == []
    emu.ok("PUT", f"courses/{cid}/modules/{m['id']}", token=TEACHER, json={"module": {"published": True}})
    mods = emu.ok("GET", f"courses/{cid}/modules", token=ANN, params={"include[]": "items"})
    assert [i["title"] for i in mods[0]["items"]] == ["HW"]
    r = emu.call("POST", f"courses/{cid}/modules/{m['id']}/items", token=TEACHER,
                 json={"module_item": {"type": "Quiz", "content_id": 777}})
    assert r.status_code == 404


def test_pages(emu):
    cid = emu.course()
    p = emu.ok("POST", f"courses/{cid}/pages", token=TEACHER,
               json={"wiki_page": {"title": "Read Me First", "body": "<p>x</p>", "published": True}})
    assert p["url"] == "read-me-first" and p["published"] is True
    assert emu.ok("GET", f"courses/{cid}/pages/read-me-first", token=ANN)["body"] == "<p>x</p>"
    second = emu.ok("POST", f"courses/{cid}/pages", token=TEACHER, json={"wiki_page": {"title": "Read me first"}})
    assert second["url"] == "read-me-first-2"
    assert emu.call("GET", f"courses/{cid}/pages/read-me-first-2", token=ANN).json() == UNAUTHORIZED


# --- files ---------------------------------------------------------------------------------------

def test_three_step_upload_over_https_then_submit_and_download():
    emu = Emulator(https=True)
    try:
        cid = emu.course()
        a = emu.ok("POST", f"courses/{cid}/assignments", json={"assignment": {
            "name": "Upload", "submission_types": ["online_upload"], "allowed_extensions": ["md"], "published": True}})
        tls = httpx.Client(base_url=f"https://127.0.0.1:{emu.service.ports['https']}", verify=False, timeout=10)
        auth = {"Authorization": f"Bearer {ANN}"}
        step1 = tls.post("/api/v1/users/self/files", headers=auth,
                         json={"name": "notes.md", "size": 5, "on_duplicate": "rename"}).json()
        assert step1["file_param"] == "file" and step1["upload_url"].startswith(str(tls.base_url))
        step2 = tls.post(step1["upload_url"], data=step1["upload_params"], files={"file": ("notes.md", b"hello")})
        assert step2.status_code == 201
        f = step2.json()
        assert (f["display_name"], f["size"], f["content-type"], f["mime_class"]) == ("notes.md", 5, "text/markdown", "file")
        assert tls.get(step2.headers["Location"]).json()["id"] == f["id"]               # step 3, no token needed
        assert tls.post(step1["upload_url"], files={"file": ("n", b"x")}).status_code == 404   # a URL is used once
        renamed = tls.post("/api/v1/users/self/files", headers=auth, json={"name": "notes.md", "on_duplicate": "rename"}).json()
        assert tls.post(renamed["upload_url"], data=renamed["upload_params"],
                        files={"file": ("notes.md", b"two")}).json()["display_name"] == "notes-1.md"
        dup = tls.post("/api/v1/users/self/files", headers=auth, json={"name": "notes.md"}).json()   # overwrite
        new = tls.post(dup["upload_url"], data=dup["upload_params"], files={"file": ("notes.md", b"hello")}).json()
        assert new["display_name"] == "notes.md" and new["id"] > f["id"]
        assert emu.call("GET", f"files/{f['id']}", token=ANN).status_code == 404          # the overwritten one is gone
        sub = tls.post(f"/api/v1/courses/{cid}/assignments/{a['id']}/submissions", headers=auth, json={
            "submission": {"submission_type": "online_upload", "file_ids": [new["id"]]}}).json()
        assert sub["attachments"][0]["id"] == new["id"] and sub["workflow_state"] == "submitted"
        f = new
        download = httpx.get(f["url"])                                                    # the verifier is the key
        assert download.status_code == 200 and download.content == b"hello"
        assert f["url"].startswith(f"http://localhost:{emu.service.ports['http']}/files/{f['id']}/download")
        bare = emu.client.get(f"/files/{f['id']}/download")
        assert bare.status_code == 401
        assert emu.client.get(f"/files/{f['id']}/download", headers={"Authorization": f"Bearer {TEACHER}"}).content == b"hello"
        assert emu.client.get(f"/files/{f['id']}/download", headers={"Authorization": f"Bearer {BOB}"}).status_code == 401
        assert emu.call("GET", f"files/{f['id']}", token=BOB).json() == UNAUTHORIZED
        tls.close()
    finally:
        emu.close()


# --- isolation ------------------------------------------------------------------------------------

def test_two_instances_keep_separate_state():
    one, two = Emulator(), Emulator()
    try:
        assert one.base != two.base
        one.course("Only Here", "ONE1")
        assert [c["name"] for c in one.ok("GET", "accounts/1/courses")] == ["Only Here"]
        assert two.ok("GET", "accounts/1/courses") == []
        assert two.course("Other", "TWO1") == 1          # ids start over in each instance
    finally:
        one.close()
        two.close()


# --- bad input never breaks the emulator ------------------------------------------------------------

ODD_BODIES: list[dict[str, Any]] = [
    {}, {"json": None}, {"json": [1, 2]}, {"json": "text"},
    {"content": b"{not json", "headers": {"Content-Type": "application/json"}},
    {"json": {k: v for k in ("course", "assignment", "quiz", "question", "enrollment", "submission", "module",
                                "module_item", "wiki_page", "user", "pseudonym", "conversation", "calendar_event",
                                "comment", "quiz_submissions", "quiz_questions", "grade_data", "recipients", "event",
                                "title", "message", "name", "body", "attempt", "validation_token", "file_ids")
              for v in [["x", {"y": None}]]}},
    {"json": {"course": {"name": ["a"], "start_at": "soon", "event": 5}, "assignment": {"name": {"a": 1},
              "due_at": "never", "points_possible": "lots", "submission_types": [{"x": 1}], "published": "maybe"},
              "quiz": {"quiz_type": [], "due_at": 7, "allowed_attempts": "many"},
              "question": {"answers": "a", "points_possible": {}}, "enrollment": {"user_id": [35], "type": {}},
              "submission": {"submission_type": ["online_upload"], "file_ids": "1", "posted_grade": {"a": 1}},
              "quiz_questions": [{"id": "x", "answer": {"deep": [1]}}, "junk"], "recipients": [None, {"a": 1}],
              "module_item": {"type": "Assignment", "content_id": "abc"}, "wiki_page": {"title": ["t"]},
              "per_page": "-5", "page": "0", "include": {"a": "b"}, "state": 3, "search_term": ["xx"]}},
    {"data": {"course[name][]": "a", "assignment[name][x]": "b", "quiz_questions[][id]": "1", "include[][x]": "y",
              "event": "delete", "page": "99999", "per_page": "abc"}},
]


def test_no_route_answers_500_to_odd_input(emu):
    from decathlon.emulators.canvas.api import ROUTE_TABLES
    cid = emu.course()
    emu.ok("POST", f"courses/{cid}/assignments", json={"assignment": {"name": "A", "published": True}})
    quiz, _questions = make_quiz(emu, cid)
    emu.ok("POST", f"courses/{cid}/quizzes/{quiz['id']}/submissions", token=ANN)
    # one of everything, so that the id 1 in every path names something that exists
    emu.ok("POST", f"courses/{cid}/discussion_topics", json={"title": "t", "message": "m", "published": True})
    emu.client.post(f"/api/v1/courses/{cid}/discussion_topics/1/entries", json={"message": "e"},
                    headers={"Authorization": f"Bearer {ANN}"})
    emu.ok("POST", f"courses/{cid}/modules", json={"module": {"name": "m", "published": True}})
    emu.ok("POST", f"courses/{cid}/modules/1/items",
           json={"module_item": {"type": "Assignment", "content_id": 1,
                                 "completion_requirement": {"type": "must_mark_done"}}})
    emu.ok("POST", f"courses/{cid}/pages", json={"wiki_page": {"title": "x", "published": True}})
    emu.ok("POST", "conversations", json={"recipients": ["35"], "body": "hi"})
    step1 = emu.ok("POST", "users/self/files", token=ANN, json={"name": "a.txt"})
    emu.client.post(step1["upload_url"], files={"file": ("a.txt", b"a")})
    failures = []
    routes = [r for table in ROUTE_TABLES for r in table.items]
    # deletions last (deleting the course first would turn everything after it into a 404)
    routes.sort(key=lambda r: (r.method == "DELETE", r.path == "/api/v1/courses/{course_id}"))
    for route in routes:
        path = route.path.replace("/api/v1/", "")
        for name in ("course_id", "assignment_id", "quiz_id", "question_id", "user_id", "submission_id",
                     "quiz_submission_id", "topic_id", "entry_id", "conversation_id", "module_id", "item_id",
                     "file_id", "folder_id", "account_id", "enrollment_id", "group_id", "section_id",
                     "rubric_id", "url", "token"):
            path = path.replace("{" + name + "}", {"user_id": "self", "url": "x"}.get(name, "1"))
        for token in (ADMIN, ANN):
            for kw in ODD_BODIES:
                r = emu.call(route.method, path, token=token, **kw)
                if r.status_code >= 500:
                    failures.append((route.method, path, token, kw, r.status_code, r.text[:200]))
    assert not failures, failures[:5]
