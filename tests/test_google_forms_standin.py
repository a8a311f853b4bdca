"""End-to-end tests of the google-forms-mcp stand-in (decathlon/standins/google_forms).

The stand-in runs as its own process on its virtualenv, as an agent's MCP client starts it, signed in with the
client and refresh token of its environment as Toolathlon's yaml passes them, and reaches a fake of Google
(tests/google_fake.py) at forms.googleapis.com and oauth2.googleapis.com through the SaaS front, as in an episode. The
tests pin the reference's tool list and schemas, its result texts, the Forms v1 requests it makes, and its failures.
The recorded real runs' calls (read at run time, never copied) are checked against the schemas, their answers against
the stand-in's formatters, and made again through the stand-in against the project's Workspace emulator behind the
same front."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests import google_fake
from tests.google_fake import CLIENT_ID, CLIENT_SECRET, FORM_CREATE_ONLY_TITLE, REFRESH_TOKEN, Running, \
    assert_runs_the_stand_in, call, fake_google, workspace_emulators, workspace_python

from decathlon.sandbox.catalogue import plan_server
from decathlon.sandbox.launchers import parse_launch
from decathlon.standins.google_api import answer_message
from decathlon.standins.google_forms.schemas import TOOLS
from decathlon.standins.google_forms.tools import Args, answer_text, choice_added_text, created_text, failed_text, \
    text_added_text

MODULE = "decathlon.standins.google_forms"
FLAG = {"type": "boolean", "description": "Whether required (optional, default is false)"}
FORM_ID = {"formId": {"type": "string", "description": "Form ID"}}
EXPECTED_TOOLS = {
    "create_form": ("Create a new Google Form", {
        "type": "object", "properties": {"title": {"type": "string", "description": "Form title"},
                                         "description": {"type": "string", "description": "Form description (optional)"}},
        "required": ["title"]}),
    "add_text_question": ("Add a text question to the form", {
        "type": "object", "properties": {**FORM_ID, "questionTitle": {"type": "string", "description": "Question title"},
                                         "required": FLAG},
        "required": ["formId", "questionTitle"]}),
    "add_multiple_choice_question": ("Add a multiple choice question to the form", {
        "type": "object", "properties": {**FORM_ID, "questionTitle": {"type": "string", "description": "Question title"},
                                         "options": {"type": "array", "items": {"type": "string"},
                                                     "description": "Array of choices"},
                                         "required": FLAG},
        "required": ["formId", "questionTitle", "options"]}),
    "get_form": ("Get form details", {"type": "object", "properties": FORM_ID, "required": ["formId"]}),
    "get_form_responses": ("Get form responses", {"type": "object", "properties": FORM_ID, "required": ["formId"]}),
}
SCHEMAS = {tool["name"]: tool["inputSchema"] for tool in TOOLS}
SIGNED_IN = {"GOOGLE_CLIENT_ID": CLIENT_ID, "GOOGLE_CLIENT_SECRET": CLIENT_SECRET, "GOOGLE_REFRESH_TOKEN": REFRESH_TOKEN}


def run_session(running: Running, cwd: Path, steps: Any, **env: str) -> Any:
    return google_fake.run_session(MODULE, {**running.env, **SIGNED_IN, **env}, cwd, steps)


@pytest.fixture
def google(tmp_path: Path) -> Any:
    with fake_google(tmp_path) as running:
        yield running


def mcp_error(code: int, message: str) -> str:
    return f"Error: MCP error {code}: {message}"


# --- how the checkout's launch runs here ------------------------------------------------------------------------


def test_the_checkouts_launch_runs_the_stand_in():
    launch = parse_launch("google_forms", "node", ["${local_servers_paths}/google-forms-mcp/build/index.js", "--x"])
    assert (launch.kind, launch.local, launch.args) == ("local", "google-forms-mcp", ["--x"])
    raw = {"params": {"command": "node", "args": ["${local_servers_paths}/google-forms-mcp/build/index.js"],
                      "env": {"GOOGLE_CLIENT_ID": "${token.google_client_id}"}}}
    assert_runs_the_stand_in("google_forms", raw, MODULE)
    # another server of the checkout's tree is still replay only, for the old reason
    other = plan_server("youtube", {"params": {"command": "node",
                                               "args": ["${local_servers_paths}/youtube-mcp-server/dist/index.js"]}})
    assert other.runs == "replay" and other.entry is not None and other.entry.module is None
    assert "not runnable offline here" in other.how


# --- over MCP, against the fake ----------------------------------------------------------------------------------


def test_the_reference_tools_with_their_schemas_and_server_name(google, tmp_path):
    async def steps(session):
        return session

    session = run_session(google, tmp_path, steps)
    assert (session.server_info.name, session.server_info.version) == ("google-forms-mcp", "0.1.0")
    assert {t.name: (t.description, t.input_schema) for t in session.tools} == EXPECTED_TOOLS
    assert [t.name for t in session.tools] == list(EXPECTED_TOOLS)


def test_a_form_is_created_filled_read_and_its_responses_listed(google, tmp_path):
    fake = google.fake

    async def steps(session):
        out = {"refused": await call(session, "create_form", {"title": "Survey", "description": "Tell us"})}
        out["created"] = await call(session, "create_form", {"title": "Survey"})
        form_id = json.loads(out["created"][0])["formId"]
        out["id"] = form_id
        out["text"] = await call(session, "add_text_question", {"formId": form_id, "questionTitle": "Name",
                                                                "required": True})
        out["choice"] = await call(session, "add_multiple_choice_question", {
            "formId": form_id, "questionTitle": "Rating", "options": ["Good", "Bad"]})
        out["form"] = await call(session, "get_form", {"formId": form_id})
        out["no_responses"] = await call(session, "get_form_responses", {"formId": form_id})
        fake.responses[form_id] = [{"responseId": "r1", "createTime": "2026-03-02T10:00:00.000Z",
                                    "answers": {"q1": {"questionId": "q1",
                                                       "textAnswers": {"answers": [{"value": "Ann"}]}}}}]
        out["responses"] = await call(session, "get_form_responses", {"formId": form_id})
        return out

    out = run_session(google, tmp_path, steps)
    form_id = out["id"]
    assert out["refused"] == (mcp_error(-32603, f"Failed to create form: {FORM_CREATE_ONLY_TITLE}"), True)
    assert out["created"] == (json.dumps({"formId": form_id, "title": "Survey", "description": "",
                                          "responderUri": f"https://docs.google.com/forms/d/{form_id}/viewform"},
                                         indent=2), False)
    creates = [r.body for r in fake.requests if r.method == "POST" and r.path == "/v1/forms"]
    assert creates == [{"info": {"title": "Survey", "documentTitle": "Survey", "description": "Tell us"}},
                       {"info": {"title": "Survey", "documentTitle": "Survey"}}]
    assert out["text"] == (json.dumps({"success": True, "message": "Text question added successfully",
                                       "questionTitle": "Name", "required": True}, indent=2), False)
    assert out["choice"] == (json.dumps({"success": True, "message": "Multiple choice question added successfully",
                                         "questionTitle": "Rating", "options": ["Good", "Bad"], "required": False},
                                        indent=2), False)
    form_calls = [(r.method, r.path.removeprefix(f"/v1/forms/{form_id}")) for r in fake.requests
                  if r.host == "forms.googleapis.com" and r.path.startswith(f"/v1/forms/{form_id}")]
    # the text question reads the form first; each question goes first in the form
    assert form_calls[:3] == [("GET", ""), ("POST", ":batchUpdate"), ("POST", ":batchUpdate")]
    updates = [r.body for r in fake.requests if r.path.endswith(":batchUpdate")]
    assert updates == [
        {"requests": [{"createItem": {"item": {"title": "Name", "questionItem": {"question": {
            "required": True, "textQuestion": {}}}}, "location": {"index": 0}}}]},
        {"requests": [{"createItem": {"item": {"title": "Rating", "questionItem": {"question": {
            "required": False, "choiceQuestion": {"type": "RADIO", "options": [{"value": "Good"}, {"value": "Bad"}]}}}},
            "location": {"index": 0}}}]}]
    text, failed = out["form"]
    assert not failed and text == json.dumps(fake.forms[form_id], indent=2)
    assert [item["title"] for item in json.loads(text)["items"]] == ["Rating", "Name"]
    assert out["no_responses"] == ("{}", False)
    assert out["responses"] == (json.dumps({"responses": fake.responses[form_id]}, indent=2), False)
    tokens = [r for r in fake.requests if r.host == "oauth2.googleapis.com"]
    assert len(tokens) == 1 and tokens[0].body["refresh_token"] == REFRESH_TOKEN


def test_missing_arguments_and_failed_calls_are_the_references_mcp_errors(google, tmp_path):
    async def steps(session):
        return [await call(session, "create_form", {}),
                await call(session, "create_form", {"title": ""}),
                await call(session, "add_text_question", {"formId": "f"}),
                await call(session, "add_multiple_choice_question", {"formId": "f", "questionTitle": "q",
                                                                     "options": "a,b"}),
                await call(session, "get_form", {}),
                await call(session, "get_form_responses", {"formId": ""}),
                await call(session, "get_form", {"formId": "1missing"}),
                await call(session, "add_text_question", {"formId": "1missing", "questionTitle": "q"}),
                await call(session, "add_multiple_choice_question", {"formId": "1missing", "questionTitle": "q",
                                                                     "options": ["a"]}),
                await call(session, "get_form_responses", {"formId": "1missing"}),
                await call(session, "delete_form", {"formId": "x"})]

    out = run_session(google, tmp_path, steps)
    missing = "Requested entity was not found."
    assert out == [
        (mcp_error(-32602, "Title is required"), True),
        (mcp_error(-32602, "Title is required"), True),
        (mcp_error(-32602, "Form ID and question title are required"), True),
        (mcp_error(-32602, "Form ID, question title, and options array are required"), True),
        (mcp_error(-32602, "Form ID is required"), True),
        (mcp_error(-32602, "Form ID is required"), True),
        (mcp_error(-32603, f"Failed to get form: {missing}"), True),
        (mcp_error(-32603, f"Failed to add text question: {missing}"), True),
        (mcp_error(-32603, f"Failed to add multiple choice question: {missing}"), True),
        (mcp_error(-32603, f"Failed to get form responses: {missing}"), True),
        (mcp_error(-32601, "Unknown tool: delete_form"), True)]
    # the multiple-choice question goes straight to batchUpdate, without reading the form first
    assert [(r.method, r.path) for r in google.fake.requests if r.host == "forms.googleapis.com"] == [
        ("GET", "/v1/forms/1missing"), ("GET", "/v1/forms/1missing"), ("POST", "/v1/forms/1missing:batchUpdate"),
        ("GET", "/v1/forms/1missing/responses")]


def test_a_refused_refresh_token_is_the_token_endpoints_error(google, tmp_path):
    async def steps(session):
        return await call(session, "create_form", {"title": "T"})

    out = run_session(google, tmp_path, steps, GOOGLE_REFRESH_TOKEN="1//revoked")
    assert out == (mcp_error(-32603, "Failed to create form: invalid_grant"), True)


@pytest.mark.parametrize("missing", ["GOOGLE_CLIENT_ID", "GOOGLE_CLIENT_SECRET", "GOOGLE_REFRESH_TOKEN"])
def test_without_its_variables_it_stops_before_it_serves(tmp_path, missing):
    env = {k: v for k, v in SIGNED_IN.items() if k != missing}
    proc = subprocess.run([str(workspace_python()), "-m", MODULE], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, env={"PATH": "/usr/bin:/bin", **env})
    assert proc.returncode == 1 and proc.stdout == ""
    assert "GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET, and GOOGLE_REFRESH_TOKEN environment variables are required" in \
        proc.stderr


# --- against the Workspace emulator ------------------------------------------------------------------------------


def test_against_the_workspace_emulator(tmp_path):
    """The stand-in as an episode runs it: the front, the Workspace emulator's Forms, the gcp emulator's sign-in."""
    workspace_python()

    async def steps(session):
        out = {"refused": await call(session, "create_form", {"title": "Recall", "description": "Please answer"})}
        out["created"] = await call(session, "create_form", {"title": "Recall"})
        form_id = json.loads(out["created"][0])["formId"]
        out["text"] = await call(session, "add_text_question", {"formId": form_id, "questionTitle": "Order number",
                                                                "required": True})
        out["choice"] = await call(session, "add_multiple_choice_question", {
            "formId": form_id, "questionTitle": "Preference", "options": ["Refund", "Replacement"], "required": False})
        out["form"] = await call(session, "get_form", {"formId": form_id})
        out["responses"] = await call(session, "get_form_responses", {"formId": form_id})
        out["missing"] = await call(session, "get_form", {"formId": "1" + "x" * 43})
        return out

    with workspace_emulators(tmp_path) as running:
        out = run_session(running, tmp_path, steps)
    assert out["refused"] == (mcp_error(-32603, f"Failed to create form: {FORM_CREATE_ONLY_TITLE}"), True)
    text, failed = out["created"]
    form_id = json.loads(text)["formId"]
    assert not failed and text == json.dumps({"formId": form_id, "title": "Recall", "description": "",
                                              "responderUri": f"https://docs.google.com/forms/d/{form_id}/viewform"},
                                             indent=2)
    assert out["text"] == (text_added_text(Args({"questionTitle": "Order number", "required": True})), False)
    assert out["choice"] == (choice_added_text(Args({"questionTitle": "Preference", "options": ["Refund", "Replacement"],
                                                     "required": False})), False)
    text, failed = out["form"]
    form = json.loads(text)
    assert not failed and text == json.dumps(form, indent=2, ensure_ascii=False)
    assert form["formId"] == form_id and form["info"]["title"] == "Recall"
    questions = [(item["title"], item["questionItem"]["question"]) for item in form["items"]]
    assert [title for title, _ in questions] == ["Preference", "Order number"]  # each added first
    assert questions[0][1]["choiceQuestion"]["options"] == [{"value": "Refund"}, {"value": "Replacement"}]
    assert questions[1][1].get("required") is True and "textQuestion" in questions[1][1]
    assert out["responses"] == ("{}", False)
    text, failed = out["missing"]
    assert failed and text.startswith(mcp_error(-32603, "Failed to get form: ")), text


def test_an_interpreter_without_googles_client_is_told_where_the_stand_in_runs(tmp_path):
    hide = f"import runpy, sys; sys.modules['googleapiclient'] = None; runpy.run_module({MODULE!r}, run_name='__main__')"
    proc = subprocess.run([str(workspace_python()), "-c", hide], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, env={"PATH": "/usr/bin:/bin", **SIGNED_IN})
    assert proc.returncode == 1 and proc.stdout == ""
    assert "the Google stand-ins run on the google-workspace virtualenv" in proc.stderr, proc.stderr


# --- the recorded runs --------------------------------------------------------------------------------------------

RECORDED_TASKS = ("woocommerce-customer-survey", "woocommerce-product-recall")
PREFIX = "google_forms-"
FAILED = "Error: MCP error -32603: Failed to create form: "


def _items(form: dict[str, Any]) -> list[tuple[Any, ...]]:
    """A form's questions as what the model reads of them, ids and key order aside."""
    out = []
    for item in form.get("items", []):
        question = item["questionItem"]["question"]
        choice = question.get("choiceQuestion", {})
        out.append((item["title"], bool(question.get("required")), "textQuestion" in question, choice.get("type"),
                    [option["value"] for option in choice.get("options", [])]))
    return sorted(out)


def test_the_recorded_calls_made_again_against_the_workspace_emulator(tmp_path):
    """Each recorded run's calls in order, against the episode's emulator: every creation and question answer is the
    recorded text (the form's id read as the live one); the form read back holds the same questions. Google's own
    order of the items and of their keys, its revision numbers and its omitted `required: false` are the emulator's
    concern, not the stand-in's (it prints Google's answer as it comes)."""

    def learn(tool: str, recorded: str, live: str) -> dict[str, str]:
        return {json.loads(recorded)["formId"]: json.loads(live)["formId"]} if tool == "create_form" else {}

    every = google_fake.checked_calls(RECORDED_TASKS, PREFIX, SCHEMAS)
    for task in sorted({c[0] for c in every}):
        calls = [c for c in every if c[0] == task]
        with workspace_emulators(tmp_path / task) as running:
            out = google_fake.run_session(MODULE, {**running.env, **SIGNED_IN}, tmp_path,
                                          lambda session: google_fake.replay(session, calls, learn))
        for tool, recorded, live, _ in out:
            if tool == "get_form":
                assert _items(json.loads(live)) == _items(json.loads(recorded)), task
                assert json.loads(live)["info"] == json.loads(recorded)["info"], task
            else:
                assert live == recorded, (task, tool)


def test_every_recorded_call_fits_the_schemas_and_its_answer_is_the_formatters():
    for task, tool, arguments, text in google_fake.checked_calls(RECORDED_TASKS, PREFIX, SCHEMAS):
        args = Args(arguments)
        if tool == "create_form" and text.startswith(FAILED):
            # Google's 400 carrying the message the run shows, through the stand-in's reading of an error answer
            body = json.dumps({"error": {"code": 400, "message": text.removeprefix(FAILED), "status": "INVALID_ARGUMENT"}})
            assert failed_text(tool, answer_message(body.encode(), 400)) == text
            assert arguments.get("description"), "Google refuses a description at creation only"
        elif tool == "create_form":
            assert created_text(json.loads(text)["formId"], args) == text, (task, text)
        elif tool == "add_text_question":
            assert text_added_text(args) == text, (task, text)
        elif tool == "add_multiple_choice_question":
            assert choice_added_text(args) == text, (task, text)
        elif tool in ("get_form", "get_form_responses"):
            assert answer_text(json.loads(text)) == text, (task, tool)
        else:
            pytest.fail(f"{task}: no check for a recorded {tool} call yet")
