"""Units of the Canvas emulator (parameter parsing, pagination links, grading, time parsing) and its
command line: the `ready` line, both ports, SIGTERM, and the refusals when it cannot start."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import httpx
import pytest
from aiohttp.test_utils import make_mocked_request

from lines import readline
from decathlon.emulators.canvas import grading
from decathlon.emulators.canvas.clock import parse_time
from decathlon.emulators.canvas.errors import ApiError
from decathlon.emulators.canvas.model import QuizQuestion
from decathlon.emulators.canvas.paging import paginate
from decathlon.emulators.canvas.params import parse_body
from decathlon.emulators.kit.params import as_bool, as_list, nest, split_key
from decathlon.emulators.canvas.views import truncate

REPO = Path(__file__).resolve().parents[1]


# --- parameters ----------------------------------------------------------------------------------

def test_rails_keys_nest_like_rails():
    assert split_key("a[b][]") == ["a", "b", ""]
    assert split_key("plain") == ["plain"] and split_key("bad[x") == ["bad[x"] and split_key("[x]") == ["[x]"]
    got = nest([("course[name]", "Film"), ("assignment[submission_types][]", "online_upload"),
                ("assignment[submission_types][]", "online_text_entry"),
                ("quiz_questions[][id]", "1"), ("quiz_questions[][answer]", "7"),
                ("quiz_questions[][id]", "2"), ("quiz_questions[][answer]", "8"), ("include[]", "user")])
    assert got == {"course": {"name": "Film"},
                   "assignment": {"submission_types": ["online_upload", "online_text_entry"]},
                   "quiz_questions": [{"id": "1", "answer": "7"}, {"id": "2", "answer": "8"}], "include": ["user"]}


def test_bodies_json_form_and_refusals():
    assert parse_body("application/json", b'{"course": {"name": "x"}}') == {"course": {"name": "x"}}
    assert parse_body("application/json; charset=utf-8", b"[1]") == {"_json": [1]}
    assert parse_body("application/x-www-form-urlencoded", b"a%5Bb%5D=1&c=2") == {"a": {"b": "1"}, "c": "2"}
    assert parse_body("", b"") == {}
    with pytest.raises(ApiError) as err:
        parse_body("application/json", b"{nope")
    assert err.value.status == 400 and err.value.body["errors"][0]["message"]


def test_typed_reads():
    assert [as_bool(v) for v in (True, "true", "1", "on", "false", "0", "", None)] == \
        [True, True, True, True, False, False, False, None]
    assert as_list({"1": "b", "0": "a"}) == ["a", "b"] and as_list("x") == ["x"] and as_list(None) == []


def test_link_header_keeps_query_and_names_neighbours():
    request = make_mocked_request("GET", "/api/v1/courses?include%5B%5D=term&page=2&per_page=2",
                                  headers={"Host": "localhost:20001"})
    page = paginate(request, list(range(5)))
    assert page.items == [2, 3]
    rels = {part.split("; rel=")[1].strip('"'): part.split(">")[0][1:] for part in page.link.split(",")}
    assert list(rels) == ["current", "next", "prev", "first", "last"]
    assert rels["next"] == "http://localhost:20001/api/v1/courses?include%5B%5D=term&page=3&per_page=2"
    assert rels["last"].endswith("page=3&per_page=2") and rels["first"].endswith("page=1&per_page=2")
    assert paginate(make_mocked_request("GET", "/x?per_page=1000&page=zz"), list(range(150))).items == list(range(100))
    assert paginate(make_mocked_request("GET", "/x"), list(range(15))).items == list(range(10))


# --- grading -------------------------------------------------------------------------------------

def question(kind: str, answers: list[dict], points: float = 4) -> QuizQuestion:
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    return QuizQuestion(1, 1, 1, kind, "Q", "text", points, now, now, answers)


def test_question_scoring_by_type():
    mc = question("multiple_choice_question", [{"id": 5, "weight": 0}, {"id": 6, "weight": 100}])
    assert (grading.score_question(mc, 6), grading.score_question(mc, "5"), grading.score_question(mc, None)) == (4, 0, 0)
    short = question("short_answer_question", [{"id": 1, "text": "Paris", "weight": 100}])
    assert grading.score_question(short, "  paris ") == 4 and grading.score_question(short, "Rome") == 0
    multi = question("multiple_answers_question", [{"id": 1, "weight": 100}, {"id": 2, "weight": 100}, {"id": 3, "weight": 0}])
    assert grading.score_question(multi, [1, 2]) == 4 and grading.score_question(multi, [1]) == 2
    assert grading.score_question(multi, [1, 3]) == 0
    num = question("numerical_question", [{"id": 1, "numerical_answer_type": "exact_answer", "exact": 3.0, "margin": 0.5}])
    assert grading.score_question(num, "3.4") == 4 and grading.score_question(num, 4) == 0
    blanks = question("fill_in_multiple_blanks_question", [{"id": 1, "blank_id": "a", "text": "x", "weight": 100},
                                                           {"id": 2, "blank_id": "b", "text": "y", "weight": 100}])
    assert grading.score_question(blanks, {"a": "X", "b": "z"}) == 2
    essay = question("essay_question", [])
    assert grading.score_attempt([mc, essay], {1: 6}) == (4, True)
    assert grading.kept_score("keep_highest", [3, 9, 5]) == 9 and grading.kept_score("keep_latest", [3, 9, 5]) == 5
    assert grading.kept_score("keep_average", [3, 4]) == 3.5


def test_posted_grades_by_grading_type():
    assert grading.parse_posted_grade("8", "points", 10) == ("8", 8)
    assert grading.parse_posted_grade(7.25, "points", 10) == ("7.25", 7.25)
    assert grading.parse_posted_grade("80%", "points", 10) == ("8", 8)
    assert grading.parse_posted_grade("80", "percent", 20) == ("80%", 16)
    assert grading.parse_posted_grade("pass", "pass_fail", 5) == ("complete", 5)
    assert grading.parse_posted_grade("B", "letter_grade", 100) == ("B", 84)
    assert grading.parse_posted_grade("", "points", 10) == (None, None)
    with pytest.raises(ApiError):
        grading.parse_posted_grade("lots", "points", 10)


def test_times_read_as_canvas_reads_them():
    assert parse_time("2025-09-21T23:59:00Z") == datetime(2025, 9, 21, 23, 59, tzinfo=timezone.utc)
    assert parse_time("2025-09-21T23:59:00-02:00") == datetime(2025, 9, 22, 1, 59, tzinfo=timezone.utc)
    # no offset: the account's zone, America/Denver (UTC-6 in September)
    assert parse_time("2025-09-21T12:00:00") == datetime(2025, 9, 21, 18, 0, tzinfo=timezone.utc)
    assert parse_time("") is None and parse_time(None) is None
    with pytest.raises(ValueError):
        parse_time("next tuesday")


def test_conversation_previews_cut_at_97_characters_even_mid_word():
    """Canvas's recorded previews end `Sinc...` and `Since ...`: a hard cut, spaces kept (truncate_text)."""
    text = "Dear James Thomas,\n\nWelcome to Introduction to AI-8! We're glad to have you in the course.\n\nSince you joined"
    assert truncate(text) == text[:97] + "..."
    assert truncate("short") == "short"
    assert truncate("word " * 30) == ("word " * 30)[:97] + "..." and truncate("word " * 30).endswith("wo...")


# --- command line ----------------------------------------------------------------------------------

def write_users(root: Path) -> None:
    (root / "configs").mkdir(parents=True)
    users = [{"id": 1, "first_name": "Ann", "last_name": "Arbor", "full_name": "Ann Arbor", "email": "ann@mcp.com",
              "password": "pw", "canvas_token": "tok_ann"}]
    (root / "configs" / "users_data.json").write_text(json.dumps({"domain": "mcp.com", "users": users}))


def test_cli_prints_ready_serves_both_ports_and_stops_on_sigterm(tmp_path):
    write_users(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "decathlon.emulators.canvas", "--root", str(tmp_path),
                             "--port", "http=0", "--port", "https=0"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        line = readline(proc, what="the Canvas emulator's ready line").strip()
        assert line.startswith("ready canvas ")
        ports = json.loads(line[len("ready canvas "):])
        assert set(ports) == {"http", "https"} and all(p > 0 for p in ports.values())
        auth = {"Authorization": "Bearer tok_ann"}
        http = httpx.get(f"http://127.0.0.1:{ports['http']}/api/v1/users/self/profile", headers=auth)
        https = httpx.get(f"https://127.0.0.1:{ports['https']}/api/v1/users/self/profile", headers=auth, verify=False)
        assert http.json() == https.json() and http.json()["id"] == 34
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(10)
        rest, err = proc.communicate()
    assert code == 0 and rest == "" and "Traceback" not in err


def test_cli_refuses_a_missing_directory_and_bad_ports(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "decathlon.emulators.canvas", "--root", str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True, timeout=20, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2 and "users_data.json" in proc.stderr and proc.stdout == ""
    proc = subprocess.run([sys.executable, "-m", "decathlon.emulators.canvas", "--root", str(tmp_path), "--port", "ftp=1"],
                          cwd=REPO, capture_output=True, text=True, timeout=20, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode != 0 and "--port" in proc.stderr


def test_id_floors_start_ids_where_a_recording_did(tmp_path):
    import asyncio
    from decathlon.emulators.canvas import start
    from decathlon.emulators.directory import load_directory
    write_users(tmp_path)

    async def run() -> tuple[int, int]:
        service = await start(load_directory(tmp_path), "127.0.0.1", {"http": 0}, id_floors={"course": 45})
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{service.ports['http']}") as client:
                r = await client.post("/api/v1/accounts/1/courses", json={"course": {"name": "X"}},
                                      headers={"Authorization": "Bearer mcpcanvasadmintoken1"})
                q = await client.post(f"/api/v1/courses/{r.json()['id']}/quizzes", json={"quiz": {"title": "Q"}},
                                      headers={"Authorization": "Bearer mcpcanvasadmintoken1"})
                return r.json()["id"], q.json()["id"]
        finally:
            await service.close()
    assert asyncio.run(run()) == (46, 1)
    with pytest.raises(ValueError):
        asyncio.run(start(load_directory(tmp_path), "127.0.0.1", {"http": 0}, id_floors={"nonsense": 1}))


def test_cli_reports_a_busy_port(tmp_path):
    import socket
    write_users(tmp_path)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "decathlon.emulators.canvas", "--root", str(tmp_path),
                               "--port", f"http={port}", "--port", "https=0"], cwd=REPO, capture_output=True,
                              text=True, timeout=20, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 1 and "cannot listen" in proc.stderr and "Traceback" not in proc.stderr
