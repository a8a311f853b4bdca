"""End-to-end tests of the Canvas MCP stand-in (``canvas-mcp-server`` 2.2.3), driven over stdio with the mcp client.

Two kinds of Canvas answer it, both on ephemeral 127.0.0.1 ports over HTTPS with a throwaway
self-signed certificate (the stand-in, like the reference under NODE_TLS_REJECT_UNAUTHORIZED=0,
does not verify it):

* a scripted fake written here, which records every request and answers what a case needs
  (three and four pages of Link pagination, Canvas's error bodies, a quiz start that fails with
  500 or 409, a stalled or oversized answer, the three-step upload) — this pins the requests the
  stand-in makes and the text it makes of the answers;
* the Canvas emulator (decathlon.emulators.canvas), seeded from a small made-up directory, for a
  realistic course: an admin creates and publishes it, enrolls a student, adds an assignment, a
  quiz with questions and an announcement, writes to the student; the student takes the quiz,
  uploads a file from the workspace and submits it; the admin grades it.
"""

from __future__ import annotations

import datetime
import json
import re
import ssl
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, MCPError
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

REPO_ROOT = Path(__file__).resolve().parents[1]
INTERNAL_ERROR = -32603
NOT_FOUND = {"errors": [{"message": "The specified resource does not exist."}]}


# --------------------------------------------------------------------------- TLS for loopback servers


def _self_signed(directory: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


# --------------------------------------------------------------------------- a scripted fake Canvas


@dataclass
class Seen:
    method: str
    path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


Answer = tuple[int, dict[str, str], bytes]
FakeRoute = Callable[[Seen, "FakeCanvas"], Answer]


def _json(body: Any, status: int = 200, **headers: str) -> Answer:
    return status, {"content-type": "application/json; charset=utf-8", **headers}, json.dumps(body).encode()


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionError, ssl.SSLError, TimeoutError)):
            super().handle_error(request, client_address)


class FakeCanvas:
    """HTTPS on an ephemeral port; ``routes[(METHOD, path)]`` answers, everything else is Canvas's 404."""

    def __init__(self, tmp: Path) -> None:
        self.routes: dict[tuple[str, str], FakeRoute] = {}
        self.seen: list[Seen] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                seen = Seen(
                    self.command,
                    parts.path,
                    parse_qsl(parts.query, keep_blank_values=True),
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                fake.seen.append(seen)
                route = fake.routes.get((self.command, parts.path))
                status, headers, payload = route(seen, fake) if route else _json(NOT_FOUND, 404)
                if status == 0:
                    return  # the route handled (or dropped) the connection itself
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = _serve  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        cert, key = _self_signed(tmp)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.base = f"https://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def reset(self, routes: dict[tuple[str, str], FakeRoute]) -> None:
        self.routes = routes
        self.seen = []

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# --------------------------------------------------------------------------- the stand-in under test


@dataclass
class StandIn:
    portal: BlockingPortal
    session: ClientSession
    server_info: Any
    tools: list[Any]
    workspace: Path
    startup_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def call(self, name: str, arguments: dict[str, Any] | None) -> tuple[str, bool | None]:
        """(text, is_error) of a tool result, or (message, None) for a JSON-RPC error."""
        try:
            result = self.portal.call(self.session.call_tool, name, arguments)
        except MCPError as exc:
            assert exc.code == INTERNAL_ERROR, exc
            return exc.message, None
        assert len(result.content) == 1 and result.content[0].type == "text"
        return result.content[0].text, result.is_error

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        text, is_error = self.call(name, arguments or {})
        assert is_error is False, text
        return text

    def data(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return json.loads(self.ok(name, arguments))

    def failed(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        text, is_error = self.call(name, arguments or {})
        assert is_error is True, text
        return text


@asynccontextmanager
async def _connect(env: dict[str, str], cwd: Path) -> AsyncIterator[tuple[ClientSession, Any, list[Any], float]]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "decathlon.standins.canvas"],
        cwd=str(cwd),
        env={**get_default_environment(), "PYTHONPATH": str(REPO_ROOT), **env},
    )
    started = time.monotonic()
    async with stdio_client(params) as (read_stream, write_stream), ClientSession(read_stream, write_stream) as session:
        initialized = await session.initialize()
        tools = await session.list_tools()
        yield session, initialized.server_info, tools.tools, time.monotonic() - started


@contextmanager
def serve_standin(domain: str, token: str, workspace: Path, **env: str) -> Iterator[StandIn]:
    workspace.mkdir(parents=True, exist_ok=True)
    full_env = {"CANVAS_API_TOKEN": token, "CANVAS_DOMAIN": domain, "NODE_TLS_REJECT_UNAUTHORIZED": "0", **env}
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(_connect(full_env, workspace)) as conn:
        session, info, tools, startup = conn
        yield StandIn(portal, session, info, tools, workspace, startup)


@pytest.fixture(scope="module")
def fake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeCanvas]:
    running = FakeCanvas(tmp_path_factory.mktemp("fake-tls"))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def srv(fake: FakeCanvas, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    with serve_standin(f"127.0.0.1:{fake.port}", "fake-token", tmp_path_factory.mktemp("workspace")) as running:
        yield running


# --------------------------------------------------------------------------- identity and tools

EXPECTED_REQUIRED = {
    "canvas_health_check": [],
    "canvas_list_courses": [],
    "canvas_get_course": ["course_id"],
    "canvas_create_course": ["account_id", "name"],
    "canvas_update_course": ["course_id"],
    "canvas_list_assignments": ["course_id"],
    "canvas_get_assignment": ["course_id", "assignment_id"],
    "canvas_create_assignment": ["course_id", "name"],
    "canvas_update_assignment": ["course_id", "assignment_id"],
    "canvas_list_assignment_groups": ["course_id"],
    "canvas_get_submission": ["course_id", "assignment_id"],
    "canvas_submit_assignment": ["course_id", "assignment_id", "submission_type"],
    "canvas_submit_grade": ["course_id", "assignment_id", "user_id", "grade"],
    "canvas_list_files": ["course_id"],
    "canvas_get_file": ["file_id"],
    "canvas_list_folders": ["course_id"],
    "canvas_list_pages": ["course_id"],
    "canvas_get_page": ["course_id", "page_url"],
    "canvas_list_calendar_events": [],
    "canvas_get_upcoming_assignments": [],
    "canvas_get_dashboard": [],
    "canvas_get_dashboard_cards": [],
    "canvas_get_course_grades": ["course_id"],
    "canvas_get_user_grades": [],
    "canvas_get_user_profile": [],
    "canvas_update_user_profile": [],
    "canvas_enroll_user": ["course_id", "user_id"],
    "canvas_list_modules": ["course_id"],
    "canvas_get_module": ["course_id", "module_id"],
    "canvas_list_module_items": ["course_id", "module_id"],
    "canvas_get_module_item": ["course_id", "module_id", "item_id"],
    "canvas_mark_module_item_complete": ["course_id", "module_id", "item_id"],
    "canvas_list_discussion_topics": ["course_id"],
    "canvas_get_discussion_topic": ["course_id", "topic_id"],
    "canvas_post_to_discussion": ["course_id", "topic_id", "message"],
    "canvas_list_announcements": ["course_id"],
    "canvas_create_announcement": ["course_id", "title", "message"],
    "canvas_list_quizzes": ["course_id"],
    "canvas_get_quiz": ["course_id", "quiz_id"],
    "canvas_create_quiz": ["course_id", "title"],
    "canvas_start_quiz_attempt": ["course_id", "quiz_id"],
    "canvas_submit_quiz_answers": ["course_id", "quiz_id", "submission_id", "answers"],
    "canvas_list_quiz_questions": ["course_id", "quiz_id"],
    "canvas_get_quiz_question": ["course_id", "quiz_id", "question_id"],
    "canvas_create_quiz_question": [
        "course_id",
        "quiz_id",
        "question_name",
        "question_text",
        "question_type",
        "points_possible",
    ],
    "canvas_update_quiz_question": ["course_id", "quiz_id", "question_id"],
    "canvas_delete_quiz_question": ["course_id", "quiz_id", "question_id"],
    "canvas_upload_file_from_path": ["file_path"],
    "canvas_submit_assignment_with_file": ["course_id", "assignment_id", "file_path"],
    "canvas_list_rubrics": ["course_id"],
    "canvas_get_rubric": ["course_id", "rubric_id"],
    "canvas_list_conversations": [],
    "canvas_get_conversation": ["conversation_id"],
    "canvas_create_conversation": ["recipients", "body"],
    "canvas_list_notifications": [],
    "canvas_get_syllabus": ["course_id"],
    "canvas_delete_course": ["course_id"],
    "canvas_delete_assignment": ["course_id", "assignment_id"],
    "canvas_delete_announcement": ["course_id", "announcement_id"],
    "canvas_delete_quiz": ["course_id", "quiz_id"],
    "canvas_delete_conversation": ["conversation_id"],
    "canvas_unenroll_user": ["course_id", "enrollment_id"],
    "canvas_get_account": ["account_id"],
    "canvas_list_account_courses": ["account_id"],
    "canvas_list_account_users": [],
    "canvas_create_user": ["account_id", "user", "pseudonym"],
    "canvas_list_sub_accounts": ["account_id"],
    "canvas_get_account_reports": ["account_id"],
    "canvas_create_account_report": ["account_id", "report"],
}


def test_server_identifies_itself_as_the_reference_and_starts_quickly(srv: StandIn) -> None:
    assert (srv.server_info.name, srv.server_info.version) == ("canvas-mcp-server", "2.2.3")
    # initialize + tools/list from spawn; the MCP SDK's own import is most of it.
    assert srv.startup_seconds < 5, srv.startup_seconds


def test_tools_are_the_references_in_its_order_with_its_required_arguments(srv: StandIn) -> None:
    assert [tool.name for tool in srv.tools] == list(EXPECTED_REQUIRED)
    assert {tool.name: tool.input_schema.get("required") for tool in srv.tools} == EXPECTED_REQUIRED
    listed = {tool.name: tool for tool in srv.tools}
    quiz = listed["canvas_submit_quiz_answers"]
    assert "Use the 'id' from canvas_start_quiz_attempt as submission_id" in quiz.description
    answers = quiz.input_schema["properties"]["answers"]
    assert answers["items"]["required"] == ["question_id"]
    assert answers["items"]["properties"]["match"]["items"]["properties"] == {
        "answer_id": {"type": "number"},
        "match_id": {"type": "number"},
    }
    grade = listed["canvas_submit_grade"].input_schema["properties"]["grade"]
    assert grade["oneOf"] == [{"type": "number"}, {"type": "string"}]
    users = listed["canvas_list_account_users"].input_schema["properties"]
    assert users["page"]["default"] == 1 and users["per_page"]["default"] == 20
    assert listed["canvas_delete_course"].input_schema["properties"]["event"]["enum"] == ["delete", "conclude"]


# --------------------------------------------------------------------------- requests and result text


def test_results_are_json_stringified_with_two_spaces_unicode_as_is_and_js_numbers(
    srv: StandIn, fake: FakeCanvas
) -> None:
    course = {
        "id": 7,
        "name": "Caf\u00e9 \u2013 \u65e5\u672c \U0001f600",
        "score": 100.0,
        "ratio": 1.5,
        "big": 1e21,
        "tiny": 1e-7,
        "nested": {"empty": [], "obj": {}},
        "quote": 'a"b\\c\n\u0001',
    }
    fake.reset({("GET", "/api/v1/courses/7"): lambda s, f: _json(course)})
    text = srv.ok("canvas_get_course", {"course_id": 7})
    assert text == (
        '{\n  "id": 7,\n  "name": "Caf\u00e9 \u2013 \u65e5\u672c \U0001f600",\n  "score": 100,\n  "ratio": 1.5,\n'
        '  "big": 1e+21,\n  "tiny": 1e-7,\n  "nested": {\n    "empty": [],\n    "obj": {}\n  },\n'
        '  "quote": "a\\"b\\\\c\\n\\u0001"\n}'
    )
    (seen,) = fake.seen
    assert seen.headers["authorization"] == "Bearer fake-token"
    assert seen.query == [
        ("include[]", "total_students"),
        ("include[]", "teachers"),
        ("include[]", "term"),
        ("include[]", "course_progress"),
        ("include[]", "sections"),
        ("include[]", "syllabus_body"),
    ]


def test_list_courses_asks_for_current_courses_unless_ended_ones_are_wanted(srv: StandIn, fake: FakeCanvas) -> None:
    fake.reset({("GET", "/api/v1/courses"): lambda s, f: _json([])})
    assert srv.ok("canvas_list_courses", {}) == "[]"
    assert srv.ok("canvas_list_courses", {"include_ended": True}) == "[]"
    first, second = fake.seen
    assert ("state[]", "available") in first.query and ("state[]", "completed") in first.query
    assert not any(name == "state[]" for name, _ in second.query)


def _pages(count: int) -> dict[tuple[str, str], FakeRoute]:
    def page(seen: Seen, fake: FakeCanvas) -> Answer:
        number = int(dict(seen.query).get("page", "1"))
        links = [f'<{fake.base}/api/v1/courses/1/quizzes?page={number}&per_page=1>; rel="current"']
        if number < count:
            links.append(f'<{fake.base}/api/v1/courses/1/quizzes?page={number + 1}&per_page=1>; rel="next"')
        links.append(f'<{fake.base}/api/v1/courses/1/quizzes?page=1&per_page=1>; rel="first"')
        return _json([{"id": number}], link=",".join(links))

    return {("GET", "/api/v1/courses/1/quizzes"): page}


@pytest.mark.parametrize(("pages", "ids"), [(1, [1]), (2, [1, 2]), (3, [1, 2, 3, 3]), (4, [1, 2, 3, 4, 4, 3, 4, 4])])
def test_pagination_appends_next_pages_as_the_reference_does(
    srv: StandIn, fake: FakeCanvas, pages: int, ids: list[int]
) -> None:
    # Each next page is itself completed with its own next pages before being appended, and the
    # loop then resumes from that page's own next link: later pages repeat, as the model saw them.
    fake.reset(_pages(pages))
    assert [item["id"] for item in srv.data("canvas_list_quizzes", {"course_id": 1})] == ids
    assert len(fake.seen) == pages  # but every page is downloaded once


def test_canvas_errors_read_as_the_references_messages(srv: StandIn, fake: FakeCanvas) -> None:
    long_page = "<html>" + "x" * 300 + "</html>"
    fake.reset(
        {
            ("GET", "/api/v1/courses/2"): lambda s, f: _json(
                {"errors": [{"message": "user authorization required"}], "status": "unauthenticated"}, 401
            ),
            ("POST", "/api/v1/courses/2/quizzes"): lambda s, f: _json(
                {
                    "errors": {
                        "invalid_quiz_type": [
                            {
                                "attribute": "invalid_quiz_type",
                                "type": "Quiz type is not valid",
                                "message": "Quiz type is not valid",
                            }
                        ]
                    }
                },
                400,
            ),
            ("GET", "/api/v1/courses/3"): lambda s, f: (500, {"content-type": "text/html"}, long_page.encode()),
            ("GET", "/api/v1/courses/4"): lambda s, f: _json({"message": "Too many requests", "errors": []}, 403),
            ("GET", "/api/v1/courses/5"): lambda s, f: (404, {}, b""),
            ("GET", "/api/v1/courses/6"): lambda s, f: _json({"errors": ["plain", {"message": "object"}, 5, {}]}, 422),
            ("GET", "/api/v1/courses/8"): lambda s, f: _json({"errors": [None]}, 422),
        }
    )
    assert srv.failed("canvas_get_course", {"course_id": 999}) == (
        "Error: Canvas API Error (404): The specified resource does not exist."
    )
    assert (
        srv.failed("canvas_get_course", {"course_id": 2})
        == "Error: Canvas API Error (401): user authorization required"
    )
    assert srv.failed("canvas_create_quiz", {"course_id": 2, "title": "T", "quiz_type": "graded"}) == (
        'Error: Canvas API Error (400): {"errors":{"invalid_quiz_type":[{"attribute":"invalid_quiz_type",'
        '"type":"Quiz type is not valid","message":"Quiz type is not valid"}]}}'
    )
    assert srv.failed("canvas_get_course", {"course_id": 3}) == f"Error: Canvas API Error (500): {long_page[:200]}..."
    assert srv.failed("canvas_get_course", {"course_id": 4}) == "Error: Canvas API Error (403): Too many requests"
    assert srv.failed("canvas_get_course", {"course_id": 5}) == "Error: Canvas API Error (404): "
    assert srv.failed("canvas_get_course", {"course_id": 6}) == (
        "Error: Canvas API Error (422): plain, object, 5, [object Object]"
    )
    assert srv.failed("canvas_get_course", {"course_id": 8}) == "Error: Canvas API Error (422): [object Object]"
    assert len(fake.seen) == 8  # nothing is retried, not even the 500


def test_missing_or_falsy_required_arguments_and_unknown_tools(srv: StandIn, fake: FakeCanvas) -> None:
    fake.reset({})
    assert srv.failed("canvas_get_course", {}) == "Error: Missing required field: course_id"
    assert srv.failed("canvas_get_course", {"course_id": 0}) == "Error: Missing required field: course_id"
    assert (
        srv.failed("canvas_create_course", {"account_id": 1}) == "Error: Missing required fields: account_id and name"
    )
    assert srv.failed("canvas_submit_grade", {"course_id": 1, "assignment_id": 2, "user_id": 3}) == (
        "Error: Missing required fields for grade submission"
    )
    assert srv.failed(
        "canvas_create_quiz_question",
        {"course_id": 1, "quiz_id": 2, "question_name": "Q", "question_text": "?", "question_type": "essay_question"},
    ) == (
        "Error: Missing required fields: course_id, quiz_id, question_name, question_text, question_type, "
        "and points_possible"
    )
    assert srv.failed("canvas_submit_quiz_answers", {"course_id": 1, "quiz_id": 2}) == (
        "Error: Missing required fields: course_id, quiz_id, submission_id, and answers"
    )
    assert srv.failed("canvas_list_account_users", {}) == (
        "Error: Missing required field: account_id (required for new sessions)"
    )
    assert srv.failed("canvas_list_account_users", {"session_id": "sess_gone"}) == (
        "Error: Session sess_gone not found or expired. Please start a new search."
    )
    assert srv.failed("canvas_no_such_tool", {"x": 1}) == "Error: Unknown tool: canvas_no_such_tool"
    assert fake.seen == []


def test_write_tools_send_the_references_bodies(srv: StandIn, fake: FakeCanvas) -> None:
    echo: FakeRoute = lambda s, f: _json({"ok": True, "echo": json.loads(s.body or b"null")})  # noqa: E731
    fake.reset(
        {
            ("POST", "/api/v1/accounts/1/courses"): echo,
            ("PUT", "/api/v1/courses/9"): echo,
            ("POST", "/api/v1/courses/9/enrollments"): echo,
            ("PUT", "/api/v1/courses/9/assignments/4/submissions/12"): echo,
            ("POST", "/api/v1/courses/9/discussion_topics"): echo,
            ("POST", "/api/v1/courses/9/quizzes"): echo,
            ("POST", "/api/v1/courses/9/quizzes/3/questions"): echo,
            ("POST", "/api/v1/conversations"): lambda s, f: _json([{"id": 1, "echo": s.json()}], 201),
            ("DELETE", "/api/v1/courses/9"): echo,
        }
    )
    srv.ok("canvas_create_course", {"account_id": 1, "name": "N", "course_code": "C", "extra": 5})
    srv.ok("canvas_update_course", {"course_id": 9, "event": "offer"})
    srv.ok("canvas_enroll_user", {"course_id": 9, "user_id": 12})
    srv.ok("canvas_submit_grade", {"course_id": 9, "assignment_id": 4, "user_id": 12, "grade": 0})
    srv.ok("canvas_submit_grade", {"course_id": 9, "assignment_id": 4, "user_id": 12, "grade": "A", "comment": "Nice"})
    srv.ok("canvas_create_announcement", {"course_id": 9, "title": "T", "message": "M"})
    srv.ok(
        "canvas_create_announcement",
        {
            "course_id": 9,
            "title": "T",
            "message": "M",
            "is_announcement": False,
            "delayed_post_at": "2030-01-01T00:00:00Z",
        },
    )
    srv.ok("canvas_create_quiz", {"course_id": 9, "title": "Q", "published": True, "ignored": 1})
    srv.ok(
        "canvas_create_quiz_question",
        {
            "course_id": 9,
            "quiz_id": 3,
            "question_name": "Q1",
            "question_text": "?",
            "question_type": "multiple_choice_question",
            "points_possible": 0,
            "answers": [{"text": "a", "weight": 100}],
        },
    )
    conversation = srv.data("canvas_create_conversation", {"recipients": ["12"], "body": "Hello"})
    assert srv.ok("canvas_delete_course", {"course_id": 9, "event": "conclude"}) == "Successfully concluded course 9"
    bodies = [seen.json() for seen in fake.seen]
    assert bodies == [
        {"course": {"name": "N", "course_code": "C", "extra": 5}},
        {"course": {"event": "offer"}},
        {"enrollment": {"user_id": 12, "type": "StudentEnrollment", "enrollment_state": "active"}},
        {"submission": {"posted_grade": 0}},
        {"submission": {"posted_grade": "A", "comment": {"text_comment": "Nice"}}},
        {"title": "T", "message": "M", "is_announcement": True, "published": True},
        {"title": "T", "message": "M", "is_announcement": False, "delayed_post_at": "2030-01-01T00:00:00Z"},
        {"quiz": {"title": "Q", "published": True}},
        {
            "question": {
                "question_name": "Q1",
                "question_text": "?",
                "question_type": "multiple_choice_question",
                "points_possible": 0,
                "answers": [{"text": "a", "weight": 100}],
            }
        },
        {"recipients": ["12"], "body": "Hello"},
        {"event": "conclude"},
    ]
    assert conversation == [{"id": 1, "echo": {"recipients": ["12"], "body": "Hello"}}]
    assert all(seen.headers["content-type"] == "application/json" for seen in fake.seen)


def test_quiz_start_falls_back_to_the_existing_attempt_on_500_or_409(srv: StandIn, fake: FakeCanvas) -> None:
    attempt = {"id": 31, "quiz_id": 5, "validation_token": "tok", "workflow_state": "untaken"}
    listing: FakeRoute = lambda s, f: _json({"quiz_submissions": [attempt]})  # noqa: E731
    for status in (500, 409):
        fake.reset(
            {
                ("POST", "/api/v1/courses/2/quizzes/5/submissions"): lambda s, f, st=status: _json({"errors": []}, st),
                ("GET", "/api/v1/courses/2/quizzes/5/submissions"): listing,
            }
        )
        assert srv.data("canvas_start_quiz_attempt", {"course_id": 2, "quiz_id": 5}) == attempt
    fake.reset(
        {("POST", "/api/v1/courses/2/quizzes/5/submissions"): lambda s, f: _json({"quiz_submissions": [attempt]})}
    )
    assert srv.data("canvas_start_quiz_attempt", {"course_id": 2, "quiz_id": 5}) == {"quiz_submissions": [attempt]}
    fake.reset({("POST", "/api/v1/courses/2/quizzes/5/submissions"): lambda s, f: _json({"errors": []}, 403)})
    assert srv.failed("canvas_start_quiz_attempt", {"course_id": 2, "quiz_id": 5}) == "Error: Canvas API Error (403): "


def test_quiz_answers_are_posted_then_the_attempt_completed_even_if_posting_fails(
    srv: StandIn, fake: FakeCanvas
) -> None:
    done = {"quiz_submissions": [{"id": 31, "workflow_state": "complete", "score": 2}]}
    fake.reset(
        {
            ("POST", "/api/v1/quiz_submissions/31/questions"): lambda s, f: _json({"errors": []}, 403),
            ("POST", "/api/v1/courses/2/quizzes/5/submissions/31/complete"): lambda s, f: _json(done),
        }
    )
    answers = [
        {"question_id": 61, "answer_id": 340},
        {"question_id": 62, "answer": "free text"},
        {"question_id": 63, "match": [{"answer_id": 1, "match_id": 2}]},
    ]
    assert (
        srv.data(
            "canvas_submit_quiz_answers",
            {"course_id": 2, "quiz_id": 5, "submission_id": 31, "validation_token": "tok", "answers": answers},
        )
        == done
    )
    posted, completed = fake.seen
    assert posted.json() == {
        "attempt": 1,
        "validation_token": "tok",
        "quiz_questions": [
            {"id": "61", "answer": 340},
            {"id": "62", "answer": "free text"},
            {"id": "63", "answer": [{"answer_id": 1, "match_id": 2}]},
        ],
    }
    assert completed.json() == {"attempt": 1, "validation_token": "tok"}
    # Answers it cannot read are skipped with the TypeError logged; completing still happens.
    fake.seen.clear()
    srv.data("canvas_submit_quiz_answers", {"course_id": 2, "quiz_id": 5, "submission_id": 31, "answers": [{"x": 1}]})
    (only,) = fake.seen
    assert only.path.endswith("/complete") and only.json() == {"attempt": 1, "validation_token": None}


def test_account_users_pages_with_a_session(srv: StandIn, fake: FakeCanvas) -> None:
    def users(seen: Seen, fake: FakeCanvas) -> Answer:
        page = int(dict(seen.query)["page"])
        base = f"{fake.base}/api/v1/accounts/1/users?search_term=a&page="
        links = [f'<{base}{page}&per_page=20>; rel="current"', f'<{base}3&per_page=20>; rel="last"']
        if page < 3:
            links.insert(1, f'<{base}{page + 1}&per_page=20>; rel="next"')
        if page > 1:
            links.insert(1, f'<{base}{page - 1}&per_page=20>; rel="prev"')
        return _json([{"id": page, "name": f"User {page}"}], link=",".join(links))

    fake.reset({("GET", "/api/v1/accounts/1/users"): users})
    first = srv.ok("canvas_list_account_users", {"account_id": 1, "search_term": "a", "per_page": 50})
    session = re.search(r"Session ID: (sess_[0-9a-z]+)\n", first).group(1)
    assert first == (
        f'Users (Page 1):\n\n[\n  {{\n    "id": 1,\n    "name": "User 1"\n  }}\n]\n\n=== Session & Pagination Info ===\n'
        f"Session ID: {session}\nCurrent page: 1\nTotal pages: 3\n"
        f'Next page: Use {{"session_id": "{session}", "page": 2}}\n\n\U0001f4dd Session Usage:\n'
        f'\u2022 Continue browsing: Use session_id "{session}" with different page numbers\n'
        "\u2022 New search: Omit session_id and provide account_id with new parameters\n"
        "\u2022 Sessions expire after 30 minutes of inactivity"
    )
    second = srv.ok("canvas_list_account_users", {"session_id": session, "page": 2})
    assert "Users (Page 2):" in second and f'Previous page: Use {{"session_id": "{session}", "page": 1}}' in second
    assert f'Next page: Use {{"session_id": "{session}", "page": 3}}' in second
    assert [seen.query for seen in fake.seen] == [
        [("search_term", "a"), ("page", "1"), ("per_page", "20")],
        [("search_term", "a"), ("page", "2"), ("per_page", "20")],
    ]
    # That listing does not go through the interceptors: bare AxiosError text, no pagination.
    fake.reset({})
    assert srv.failed("canvas_list_account_users", {"account_id": 77}) == "Error: Request failed with status code 404"


def test_file_upload_takes_canvas_three_steps_from_the_workspace(srv: StandIn, fake: FakeCanvas) -> None:
    (srv.workspace / "notes").mkdir(exist_ok=True)
    (srv.workspace / "notes" / "essay.md").write_text("# Essay\n\nBody \u00e9\n", encoding="utf-8")
    size = len("# Essay\n\nBody \u00e9\n".encode())
    file_json = {"id": 30, "display_name": "essay.md", "content-type": "text/markdown", "size": size}
    fake.reset(
        {
            ("POST", "/api/v1/users/self/files"): lambda s, f: _json(
                {"upload_url": f"{f.base}/files_api", "upload_params": {"filename": "essay.md", "key": 17}}
            ),
            ("POST", "/files_api"): lambda s, f: _json({"location": f"{f.base}/api/v1/files/30?include[]=x"}, 201),
            ("GET", "/api/v1/files/30"): lambda s, f: _json(file_json),
            ("POST", "/api/v1/courses/4/assignments/25/submissions"): lambda s, f: _json(
                {"id": 154, "submission_type": "online_upload", "echo": s.json()}
            ),
        }
    )
    assert srv.data("canvas_upload_file_from_path", {"file_path": "notes/essay.md", "course_id": 4}) == file_json
    slot, upload, confirm = fake.seen
    assert slot.json() == {"name": "essay.md", "size": size, "on_duplicate": "rename"}
    assert "authorization" not in upload.headers and upload.headers["content-type"].startswith("multipart/form-data")
    form = upload.body.decode()
    assert form.index('name="filename"') < form.index('name="key"') < form.index('name="file"; filename="essay.md"')
    assert "Content-Type: text/markdown" in form and "Body \u00e9" in form and "\r\n17\r\n" in form
    assert confirm.headers["authorization"] == "Bearer fake-token"
    fake.seen.clear()
    submitted = srv.data(
        "canvas_submit_assignment_with_file",
        {"course_id": 4, "assignment_id": 25, "file_path": "notes/essay.md", "comment": "late"},
    )
    assert submitted["echo"] == {"submission": {"submission_type": "online_upload", "file_ids": [30]}}
    # Without a location, the upload's own answer is the result.
    fake.routes[("POST", "/files_api")] = lambda s, f: _json(file_json, 201)
    assert (
        srv.data("canvas_upload_file_from_path", {"file_path": str(srv.workspace / "notes" / "essay.md")}) == file_json
    )


def test_local_file_problems_read_like_node(srv: StandIn, fake: FakeCanvas) -> None:
    fake.reset({})
    assert srv.failed("canvas_upload_file_from_path", {"file_path": "missing.pdf"}) == (
        "Error: ENOENT: no such file or directory, stat 'missing.pdf'"
    )
    assert srv.failed("canvas_upload_file_from_path", {"file_path": 5}) == (
        'Error: The "path" argument must be of type string or an instance of Buffer or URL. Received type number (5)'
    )
    assert srv.failed(
        "canvas_submit_assignment_with_file", {"course_id": 1, "assignment_id": 2, "file_path": "/nowhere/x.md"}
    ) == ("Error: ENOENT: no such file or directory, stat '/nowhere/x.md'")
    assert fake.seen == []


def test_a_result_javascript_cannot_stringify_is_a_protocol_error(srv: StandIn, fake: FakeCanvas) -> None:
    fake.reset({("PUT", "/api/v1/courses/1/modules/2/items/3/done"): lambda s, f: (204, {}, b"")})
    message, is_error = srv.call("canvas_mark_module_item_complete", {"course_id": 1, "module_id": 2, "item_id": 3})
    assert is_error is None and "undefined" in message


# --------------------------------------------------------------------------- limits and unreachable Canvas


@pytest.fixture(scope="module")
def tight(fake: FakeCanvas, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    env = {"DECATHLON_CANVAS_TIMEOUT": "0.5", "DECATHLON_CANVAS_MAX_BYTES": "2000"}
    with serve_standin(f"127.0.0.1:{fake.port}", "fake-token", tmp_path_factory.mktemp("tight"), **env) as running:
        yield running


def test_stalled_and_oversized_answers_fail_cleanly(tight: StandIn, fake: FakeCanvas) -> None:
    def stall(seen: Seen, fake: FakeCanvas) -> Answer:
        time.sleep(2)
        return _json([])

    fake.reset(
        {
            ("GET", "/api/v1/courses/1/quizzes"): stall,
            ("GET", "/api/v1/courses/2/quizzes"): lambda s, f: _json([{"title": "x" * 5000}]),
        }
    )
    started = time.monotonic()
    assert tight.failed("canvas_list_quizzes", {"course_id": 1}) == "Error: Network error: timeout of 500ms exceeded"
    assert time.monotonic() - started < 1.9
    assert tight.failed("canvas_list_quizzes", {"course_id": 2}) == (
        "Error: Network error: maxContentLength size of 2000 exceeded"
    )
    # Twelve pages would come back 2048 times over: the total is bounded too.
    fake.routes = _pages(12)
    assert tight.failed("canvas_list_quizzes", {"course_id": 1}) == (
        "Error: Network error: maxContentLength size of 2000 exceeded"
    )


def test_an_unreachable_canvas_reads_like_node(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with serve_standin(f"127.0.0.1:{port}", "t", tmp_path / "ws") as running:
        assert running.failed("canvas_get_course", {"course_id": 1}) == (
            f"Error: Network error: connect ECONNREFUSED 127.0.0.1:{port}"
        )
        assert running.failed("canvas_list_account_users", {"account_id": 1}) == (
            f"Error: connect ECONNREFUSED 127.0.0.1:{port}"
        )
        health = running.data("canvas_health_check")
        assert health["status"] == "error" and re.fullmatch(
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", health["timestamp"]
        )


def test_missing_environment_exits_with_the_references_message(tmp_path: Path) -> None:
    import subprocess

    env = {**get_default_environment(), "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "decathlon.standins.canvas"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert "Missing required environment variables:" in proc.stderr and "CANVAS_DOMAIN" in proc.stderr


# --------------------------------------------------------------------------- against the Canvas emulator

PEOPLE = [
    {
        "id": 1,
        "first_name": "Ada",
        "last_name": "Quill",
        "email": "ada.quill@mcp.com",
        "password": "pw-ada",
        "canvas_token": "tok_ada_1",
    },
    {
        "id": 2,
        "first_name": "Bo",
        "last_name": "Reyna",
        "email": "bo.reyna@mcp.com",
        "password": "pw-bo",
        "canvas_token": "tok_bo_2",
    },
    {
        "id": 3,
        "first_name": "Cy",
        "last_name": "Tamsin",
        "email": "cy.tamsin@mcp.com",
        "password": "pw-cy",
        "canvas_token": "tok_cy_3",
    },
]
ADMIN_TOKEN = "mcpcanvasadmintoken1"


@dataclass
class Emulator:
    https: int
    students: dict[str, int]  # first name -> Canvas user id


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    from decathlon.emulators.canvas import start
    from decathlon.emulators.directory import load_directory

    root = tmp_path_factory.mktemp("canvas-root")
    (root / "configs").mkdir()
    (root / "configs" / "users_data.json").write_text(json.dumps({"domain": "mcp.com", "users": PEOPLE}))
    directory = load_directory(root)
    with start_blocking_portal() as portal:
        service = portal.call(start, directory, "127.0.0.1", {"http": 0, "https": 0})
        try:
            yield Emulator(service.ports["https"], {})
        finally:
            portal.call(service.close)


@contextmanager
def _as(emulator: Emulator, token: str, workspace: Path) -> Iterator[StandIn]:
    with serve_standin(f"127.0.0.1:{emulator.https}", token, workspace) as running:
        yield running


def test_a_course_from_creation_to_grading_on_the_emulator(emulator: Emulator, tmp_path: Path) -> None:
    with _as(emulator, ADMIN_TOKEN, tmp_path / "admin") as admin:
        profile = admin.data("canvas_get_user_profile")
        assert profile["name"] == "MCP Canvas Admin 1" and profile["login_id"] == "mcpcanvasadmin1@mcp.com"
        assert admin.data("canvas_get_account", {"account_id": 1})["id"] == 1
        course = admin.data("canvas_create_course", {"account_id": 1, "name": "Tide Pools 101", "course_code": "TP101"})
        assert (course["name"], course["course_code"], course["workflow_state"]) == (
            "Tide Pools 101",
            "TP101",
            "unpublished",
        )
        cid = course["id"]
        assert admin.data("canvas_update_course", {"course_id": cid, "event": "offer"})["workflow_state"] == "available"

        found = admin.ok("canvas_list_account_users", {"account_id": 1, "search_term": "Bo Reyna"})
        assert (
            found.startswith("Users (Page 1):\n\n[\n")
            and "\n\n=== Session & Pagination Info ===\nSession ID: sess_" in found
        )
        users = json.loads(found.split(":\n\n", 1)[1].split("\n\n=== Session", 1)[0])
        (bo,) = [u for u in users if u["name"] == "Bo Reyna"]
        enrollment = admin.data(
            "canvas_enroll_user",
            {"course_id": cid, "user_id": bo["id"], "role": "StudentEnrollment", "enrollment_state": "active"},
        )
        assert (enrollment["user_id"], enrollment["course_id"], enrollment["type"]) == (
            bo["id"],
            cid,
            "StudentEnrollment",
        )

        assignment = admin.data(
            "canvas_create_assignment",
            {
                "course_id": cid,
                "name": "Field notes",
                "submission_types": ["online_upload"],
                "points_possible": 10,
                "published": True,
                "allowed_extensions": ["md"],
            },
        )
        assert assignment["name"] == "Field notes" and assignment["points_possible"] == 10
        quiz = admin.data(
            "canvas_create_quiz",
            {"course_id": cid, "title": "Tides quiz", "quiz_type": "assignment", "published": True},
        )
        assert quiz["title"] == "Tides quiz"
        for n, (text, right, wrong) in enumerate(
            [("What drives tides?", "The Moon", "The wind"), ("How many high tides a day?", "Two", "Five")], start=1
        ):
            question = admin.data(
                "canvas_create_quiz_question",
                {
                    "course_id": cid,
                    "quiz_id": quiz["id"],
                    "question_name": f"Q{n}",
                    "question_text": text,
                    "question_type": "multiple_choice_question",
                    "points_possible": 5,
                    "answers": [{"text": right, "weight": 100}, {"text": wrong, "weight": 0}],
                },
            )
            assert question["question_text"] == text and len(question["answers"]) == 2
        listed = admin.data("canvas_list_quiz_questions", {"course_id": cid, "quiz_id": quiz["id"]})
        assert [q["question_name"] for q in listed] == ["Q1", "Q2"]

        note = admin.data(
            "canvas_create_announcement",
            {"course_id": cid, "title": "Welcome \u2013 tides", "message": "<p>Bring boots \U0001f97e</p>"},
        )
        assert note["title"] == "Welcome \u2013 tides"
        assert [a["title"] for a in admin.data("canvas_list_announcements", {"course_id": cid})] == [
            "Welcome \u2013 tides"
        ]
        conversation = admin.data(
            "canvas_create_conversation",
            {"recipients": [str(bo["id"])], "subject": "Hello", "body": "See you at low tide."},
        )
        assert isinstance(conversation, list) and conversation[0]["subject"] == "Hello"

    workspace = tmp_path / "bo"
    workspace.mkdir()
    (workspace / "field_notes.md").write_text("# Field notes\n\nAnemones: 12\n", encoding="utf-8")
    with _as(emulator, "tok_bo_2", workspace) as student:
        assert cid in [c["id"] for c in student.data("canvas_list_courses")]
        assert [q["id"] for q in student.data("canvas_list_quizzes", {"course_id": cid})] == [quiz["id"]]
        started = student.data("canvas_start_quiz_attempt", {"course_id": cid, "quiz_id": quiz["id"]})
        attempt = started["quiz_submissions"][0] if "quiz_submissions" in started else started
        assert attempt["workflow_state"] == "untaken" and attempt["validation_token"]
        questions = student.data(
            "canvas_list_quiz_questions",
            {
                "course_id": cid,
                "quiz_id": quiz["id"],
                "quiz_submission_id": attempt["id"],
                "use_submission_endpoint": True,
            },
        )
        answers = [
            {
                "question_id": q["id"],
                "answer_id": next(a["id"] for a in q["answers"] if a["text"] in ("The Moon", "Two")),
            }
            for q in questions
        ]
        done = student.data(
            "canvas_submit_quiz_answers",
            {
                "course_id": cid,
                "quiz_id": quiz["id"],
                "submission_id": attempt["id"],
                "validation_token": attempt["validation_token"],
                "answers": answers,
            },
        )
        (finished,) = done["quiz_submissions"]
        assert finished["workflow_state"] == "complete" and finished["score"] == 10

        uploaded = student.data("canvas_upload_file_from_path", {"file_path": "field_notes.md", "course_id": cid})
        assert uploaded["display_name"] == "field_notes.md" and uploaded["size"] == len(
            "# Field notes\n\nAnemones: 12\n"
        )
        submission = student.data(
            "canvas_submit_assignment_with_file",
            {"course_id": cid, "assignment_id": assignment["id"], "file_path": str(workspace / "field_notes.md")},
        )
        assert submission["submission_type"] == "online_upload" and submission["workflow_state"] == "submitted"
        assert submission["attachments"][0]["display_name"].startswith("field_notes")
        mine = student.data("canvas_get_submission", {"course_id": cid, "assignment_id": assignment["id"]})
        assert mine["id"] == submission["id"] and mine["assignment"]["name"] == "Field notes"
        assert student.failed("canvas_create_course", {"account_id": 1, "name": "Nope"}).startswith(
            "Error: Canvas API Error (401): "
        )

    with _as(emulator, ADMIN_TOKEN, tmp_path / "admin2") as admin:
        graded = admin.data(
            "canvas_submit_grade",
            {
                "course_id": cid,
                "assignment_id": assignment["id"],
                "user_id": bo["id"],
                "grade": 9,
                "comment": "Neat notes",
            },
        )
        assert (graded["score"], graded["grade"], graded["workflow_state"]) == (9, "9", "graded")
        listed = admin.data("canvas_list_assignments", {"course_id": cid})
        assert {a["name"] for a in listed} >= {"Field notes"}


def test_emulator_errors_come_back_in_the_references_words(emulator: Emulator, tmp_path: Path) -> None:
    with _as(emulator, ADMIN_TOKEN, tmp_path / "admin") as admin:
        assert admin.failed("canvas_get_course", {"course_id": 987654}) == (
            "Error: Canvas API Error (404): The specified resource does not exist."
        )
        assert admin.failed("canvas_list_quizzes", {"course_id": 987654}) == (
            "Error: Canvas API Error (404): The specified resource does not exist."
        )
        assert admin.failed("canvas_get_course", {"course_id": "no-such"}) == (
            "Error: Canvas API Error (404): The specified resource does not exist."
        )
    with _as(emulator, "not-a-token", tmp_path / "nobody") as nobody:
        assert nobody.failed("canvas_list_courses") == "Error: Canvas API Error (401): Invalid access token."


def test_list_account_users_pages_through_the_emulator(emulator: Emulator, tmp_path: Path) -> None:
    with _as(emulator, ADMIN_TOKEN, tmp_path / "admin") as admin:
        first = admin.ok("canvas_list_account_users", {"account_id": 1, "per_page": 2})
        session = re.search(r"Session ID: (sess_[0-9a-z]+)\n", first).group(1)
        assert f'Next page: Use {{"session_id": "{session}", "page": 2}}' in first
        second = admin.ok("canvas_list_account_users", {"session_id": session, "page": 2})
        assert second.startswith("Users (Page 2):") and '"page": 1}' in second
        names = [json.loads(t.split(":\n\n", 1)[1].split("\n\n=== Session", 1)[0]) for t in (first, second)]
        assert len(names[0]) == 2 and {u["id"] for u in names[0]}.isdisjoint({u["id"] for u in names[1]})


def test_resources_list_the_courses_and_read_as_json(srv: StandIn, fake: FakeCanvas) -> None:
    course = {"id": 7, "name": "Optics", "course_code": "OPT-7"}
    fake.reset(
        {
            ("GET", "/api/v1/courses"): lambda s, f: _json([course]),
            ("GET", "/api/v1/courses/7"): lambda s, f: _json(course),
        }
    )
    listed = srv.portal.call(srv.session.list_resources).resources
    uris = [str(r.uri) for r in listed]
    assert uris[:3] == ["canvas://health", "courses://list", "course://7"]
    assert "quizzes://7" in uris and uris[-1] == "calendar://upcoming" and len(uris) == 2 + 8 + 3
    assert {r.name for r in listed} >= {"Course: Optics", "Files: Optics"}

    def read(uri: str) -> str:
        (content,) = srv.portal.call(srv.session.read_resource, uri).contents
        return content.text

    assert json.loads(read("course://7")) == course
    assert json.loads(read("bogus://1")) == {"error": "Unknown resource type: bogus"}
    assert json.loads(read("course://8")) == {"error": "Canvas API Error (404): The specified resource does not exist."}
