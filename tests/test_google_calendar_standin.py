"""End-to-end tests of the `@gongrzhe/server-calendar-autoauth-mcp` stand-in (decathlon/standins/google_calendar).

The stand-in runs as its own process on its virtualenv, as an agent's MCP client starts it, signed in with the
reference's files in its HOME, and reaches a fake of Google (tests/google_fake.py) at www.googleapis.com and
oauth2.googleapis.com through the SaaS front, as in an episode. The tests pin the reference's tool list and schemas,
its result texts, the Calendar v3 requests it makes, and its failures. The recorded real runs' calls (read at run
time, never copied) are checked against the schemas, their answers against the stand-in's formatters, and made again
through the stand-in against the project's Workspace emulator behind the same front."""
from __future__ import annotations

import json
import re
import subprocess
import zoneinfo
from pathlib import Path
from typing import Any

import pytest

from tests import google_fake
from tests.google_fake import CLIENT_ID, CLIENT_SECRET, REFRESH_TOKEN, Running, assert_runs_the_stand_in, call, \
    fake_google, workspace_emulators, workspace_python

from decathlon.standins.google_calendar.schemas import TOOLS
from decathlon.standins.google_calendar.tools import created_text, listed_text

MODULE = "decathlon.standins.google_calendar"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"
TIME = {"type": "object", "properties": {"dateTime": {"type": "string", "description": "{}"},
                                         "timeZone": {"type": "string", "description": "Time zone"}},
        "required": ["dateTime"], "additionalProperties": False}


def _time(description: str) -> dict[str, Any]:
    return json.loads(json.dumps(TIME).replace('"{}"', json.dumps(description)))


def _event(title: str, start: str, end: str, description: str, location: str) -> dict[str, Any]:
    return {"summary": {"type": "string", "description": title}, "start": _time(start), "end": _time(end),
            "description": {"type": "string", "description": description},
            "location": {"type": "string", "description": location}}


def _closed(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False,
            "$schema": DRAFT_07}


# zod-to-json-schema's rendering of the reference's zod objects, written out.
EXPECTED_TOOLS = {
    "create_event": ("Creates a new event in Google Calendar", _closed(_event(
        "Event title", "Start time (ISO format)", "End time (ISO format)", "Event description", "Event location"),
        ["summary", "start", "end"])),
    "get_event": ("Retrieves details of a specific event", _closed(
        {"eventId": {"type": "string", "description": "ID of the event to retrieve"}}, ["eventId"])),
    "update_event": ("Updates an existing event", _closed({
        "eventId": {"type": "string", "description": "ID of the event to update"}, **_event(
            "New event title", "New start time (ISO format)", "New end time (ISO format)", "New event description",
            "New event location")}, ["eventId"])),
    "delete_event": ("Deletes an event from the calendar", _closed(
        {"eventId": {"type": "string", "description": "ID of the event to delete"}}, ["eventId"])),
    "list_events": ("Lists events within a specified time range", _closed({
        "timeMin": {"type": "string", "description": "Start of time range (ISO format)"},
        "timeMax": {"type": "string", "description": "End of time range (ISO format)"},
        "maxResults": {"type": "number", "description": "Maximum number of events to return"},
        "orderBy": {"type": "string", "enum": ["startTime", "updated"], "description": "Sort order"}},
        ["timeMin", "timeMax"])),
}
SCHEMAS = {tool["name"]: tool["inputSchema"] for tool in TOOLS}


def sign_in(home: Path, tokens: dict[str, Any] | None = None, keys_name: str = "installed") -> None:
    """The files Toolathlon's set-up puts there: the OAuth client, and its google_credentials.json as credentials."""
    folder = home / ".calendar-mcp"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gcp-oauth.keys.json").write_text(json.dumps({keys_name: {"client_id": CLIENT_ID,
                                                                        "client_secret": CLIENT_SECRET}}))
    (folder / "credentials.json").write_text(json.dumps(tokens if tokens is not None else {
        "token": "ya29.stale", "refresh_token": REFRESH_TOKEN, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
        "token_uri": "https://oauth2.googleapis.com/token"}))


def run_session(running: Running, home: Path, cwd: Path, steps: Any) -> Any:
    return google_fake.run_session(MODULE, {**running.env, "HOME": str(home)}, cwd, steps)


@pytest.fixture
def google(tmp_path: Path) -> Any:
    with fake_google(tmp_path) as running:
        yield running


def zod_required(*paths: list[str | int], expected: str = "object") -> str:
    issues = [{"code": "invalid_type", "expected": expected, "received": "undefined", "path": p, "message": "Required"}
              for p in paths]
    return "Error: " + json.dumps(issues, indent=2)


# --- how the checkout's launch runs here ------------------------------------------------------------------------


def test_the_checkouts_launch_runs_the_stand_in():
    raw = {"params": {"command": "npx", "args": ["-y", "@gongrzhe/server-calendar-autoauth-mcp"],
                      "cwd": "${agent_workspace}"}}
    assert_runs_the_stand_in("google_calendar", raw, MODULE)


# --- over MCP, against the fake ----------------------------------------------------------------------------------


def test_the_reference_tools_with_their_schemas_and_server_name(google, tmp_path):
    sign_in(tmp_path / "home")

    async def steps(session):
        return session

    session = run_session(google, tmp_path / "home", tmp_path, steps)
    assert (session.server_info.name, session.server_info.version) == ("google-calendar", "1.0.0")
    assert {t.name: (t.description, t.input_schema) for t in session.tools} == EXPECTED_TOOLS
    assert [t.name for t in session.tools] == list(EXPECTED_TOOLS)
    # as zod-to-json-schema writes it (the SDK sends the top-level keys in an order of its own)
    assert list(SCHEMAS["create_event"]) == ["type", "properties", "required", "additionalProperties", "$schema"]


def test_events_are_created_read_patched_listed_and_deleted_on_primary(google, tmp_path):
    sign_in(tmp_path / "home")
    fake = google.fake
    created_args = {"summary": "Design review", "description": "Room 4\nbring notes", "location": "Office",
                    "start": {"dateTime": "2026-03-03T10:00:00+08:00", "timeZone": "Asia/Hong_Kong"},
                    "end": {"dateTime": "2026-03-03T11:30:00+08:00", "timeZone": "Asia/Hong_Kong"},
                    "attendees": [{"email": "x@example.com"}]}

    async def steps(session):
        out = {"created": await call(session, "create_event", created_args)}
        event_id = next(iter(fake.events))
        out["id"] = event_id
        out["got"] = await call(session, "get_event", {"eventId": event_id})
        out["patched"] = await call(session, "update_event", {"eventId": event_id, "summary": "Design review (moved)",
                                                              "start": {"dateTime": "2026-03-03T14:00:00+08:00"},
                                                              "end": {"dateTime": "2026-03-03T15:00:00+08:00"}})
        out["patched_title_only"] = await call(session, "update_event", {"eventId": event_id, "summary": ""})
        out["listed"] = await call(session, "list_events", {"timeMin": "2026-03-03T00:00:00+08:00",
                                                            "timeMax": "2026-03-03T23:59:59+08:00"})
        out["listed_all"] = await call(session, "list_events", {"timeMin": "2020-01-01T00:00:00Z",
                                                                "timeMax": "2030-12-31T23:59:59Z", "maxResults": 2500,
                                                                "orderBy": "updated"})
        out["empty"] = await call(session, "list_events", {"timeMin": "2027-01-01T00:00:00Z",
                                                           "timeMax": "2027-01-02T00:00:00Z"})
        out["deleted"] = await call(session, "delete_event", {"eventId": event_id})
        out["gone"] = await call(session, "get_event", {"eventId": event_id})
        return out

    out = run_session(google, tmp_path / "home", tmp_path, steps)
    event_id = out["id"]
    assert out["created"] == (f"Event created with ID: {event_id}\nTitle: Design review\n"
                              "Start: 2026-03-03T10:00:00+08:00\nEnd: 2026-03-03T11:30:00+08:00", False)
    # zod strips what its schema lacks before the request goes out, in the schema's order
    insert = next(r for r in fake.requests if r.method == "POST" and r.path.endswith("/events"))
    assert insert.host == "www.googleapis.com" and insert.path == "/calendar/v3/calendars/primary/events"
    assert insert.body == {k: created_args[k] for k in ("summary", "start", "end", "description", "location")}
    assert list(insert.body) == ["summary", "start", "end", "description", "location"]
    text, failed = out["got"]
    assert not failed and json.loads(text)["summary"] == "Design review" and json.loads(text)["id"] == event_id
    assert text.startswith('{\n  "kind": "calendar#event",\n  "etag": "\\"')  # JSON.stringify(data, null, 2)
    assert out["patched"] == (f"Event updated: {event_id}\nNew title: Design review (moved)\n"
                              "New start: 2026-03-03T14:00:00+08:00\nNew end: 2026-03-03T15:00:00+08:00", False)
    assert out["patched_title_only"] == (f"Event updated: {event_id}\nNew title: (unchanged)\nNew start: (unchanged)\n"
                                         "New end: (unchanged)", False)
    patches = [r.body for r in fake.requests if r.method == "PATCH"]
    assert patches == [{"summary": "Design review (moved)", "start": {"dateTime": "2026-03-03T14:00:00+08:00"},
                        "end": {"dateTime": "2026-03-03T15:00:00+08:00"}}, {"summary": ""}]
    text, failed = out["listed"]
    items = json.loads(text.split("\n", 1)[1])
    assert not failed and text.startswith("Found 1 events:\n[\n  {\n") and [e["id"] for e in items] == [event_id]
    assert text == "Found 1 events:\n" + json.dumps(items, indent=2, ensure_ascii=False)
    lists = [r.query for r in fake.requests if r.method == "GET" and r.path.endswith("/events")]
    assert {k: lists[0][k] for k in ("maxResults", "orderBy", "singleEvents")} == \
        {"maxResults": "10", "orderBy": "startTime", "singleEvents": "true"}
    assert (lists[1]["maxResults"], lists[1]["orderBy"]) == ("2500", "updated")
    assert out["empty"] == ("Found 0 events:\n[]", False)
    assert out["deleted"] == (f"Event deleted: {event_id}", False)
    assert out["gone"] == ("Error: Not Found", True)
    # signed in with the refresh token (Toolathlon's `token` key is not one Node's OAuth2Client reads), once
    tokens = [r for r in fake.requests if r.host == "oauth2.googleapis.com"]
    assert len(tokens) == 1 and tokens[0].body["grant_type"] == "refresh_token"
    assert tokens[0].body["client_id"] == CLIENT_ID and tokens[0].body["refresh_token"] == REFRESH_TOKEN


def test_bad_arguments_are_zods_issues_and_unknown_tools_are_named(google, tmp_path):
    sign_in(tmp_path / "home")

    async def steps(session):
        return [await call(session, "create_event", {"summary": "x"}),
                await call(session, "create_event", {"summary": 5, "start": {"dateTime": "a"}, "end": {}}),
                await call(session, "list_events", {"timeMin": "a", "timeMax": "b", "orderBy": "soon"}),
                await call(session, "get_event", {}),
                await call(session, "delete_events", {"eventId": "x"})]

    out = run_session(google, tmp_path / "home", tmp_path, steps)
    assert out[0] == (zod_required(["start"], ["end"]), True)
    assert out[1] == ("Error: " + json.dumps([
        {"code": "invalid_type", "expected": "string", "received": "number", "path": ["summary"],
         "message": "Expected string, received number"},
        {"code": "invalid_type", "expected": "string", "received": "undefined", "path": ["end", "dateTime"],
         "message": "Required"}], indent=2), True)
    assert out[2] == ("Error: " + json.dumps([
        {"received": "soon", "code": "invalid_enum_value", "options": ["startTime", "updated"], "path": ["orderBy"],
         "message": "Invalid enum value. Expected 'startTime' | 'updated', received 'soon'"}], indent=2), True)
    assert out[3] == (zod_required(["eventId"], expected="string"), True)
    assert out[4] == ("Error: Unknown tool: delete_events", True)
    # refused before any request to Google
    assert [r for r in google.fake.requests if r.host == "www.googleapis.com"] == []


def test_a_refused_sign_in_is_the_token_endpoints_error(google, tmp_path):
    sign_in(tmp_path / "home", tokens={"refresh_token": "1//revoked"})

    async def steps(session):
        return await call(session, "list_events", {"timeMin": "2026-01-01T00:00:00Z", "timeMax": "2026-01-02T00:00:00Z"})

    assert run_session(google, tmp_path / "home", tmp_path, steps) == ("Error: invalid_grant", True)


def test_no_tokens_at_all_is_node_oauth2clients_refusal(google, tmp_path):
    sign_in(tmp_path / "home", tokens={})

    async def steps(session):
        return await call(session, "get_event", {"eventId": "e1"})

    assert run_session(google, tmp_path / "home", tmp_path, steps) == \
        ("Error: No access, refresh token, API key or refresh handler callback is set.", True)
    assert google.fake.requests == []


def test_keys_in_the_working_folder_are_copied_to_the_config_folder_and_used(google, tmp_path):
    home, cwd = tmp_path / "home", tmp_path / "ws"
    cwd.mkdir()
    (cwd / "gcp-oauth.keys.json").write_text(json.dumps({"web": {"client_id": CLIENT_ID,
                                                                 "client_secret": CLIENT_SECRET}}))
    (home / ".calendar-mcp").mkdir(parents=True)
    (home / ".calendar-mcp" / "credentials.json").write_text(json.dumps({"refresh_token": REFRESH_TOKEN}))

    async def steps(session):
        return await call(session, "list_events", {"timeMin": "2026-01-01T00:00:00Z", "timeMax": "2026-01-02T00:00:00Z"})

    assert run_session(google, home, cwd, steps) == ("Found 0 events:\n[]", False)
    assert json.loads((home / ".calendar-mcp" / "gcp-oauth.keys.json").read_text())["web"]["client_id"] == CLIENT_ID


@pytest.mark.parametrize("keys,words", [
    (None, "Error: OAuth keys file not found. Please place gcp-oauth.keys.json in current directory or "),
    ({"other": {}}, 'Error: Invalid OAuth keys file format. File should contain either "installed" or "web"'),
    ("{not json", "Error loading credentials: "),
])
def test_a_missing_or_malformed_keys_file_stops_the_server_before_it_serves(tmp_path, keys, words):
    home = tmp_path / "home"
    (home / ".calendar-mcp").mkdir(parents=True)
    if keys is not None:
        (home / ".calendar-mcp" / "gcp-oauth.keys.json").write_text(keys if isinstance(keys, str) else json.dumps(keys))
    proc = subprocess.run([str(workspace_python()), "-m", MODULE], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, env={"HOME": str(home), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 1 and words in proc.stderr and proc.stdout == "", proc.stderr


# --- against the Workspace emulator ------------------------------------------------------------------------------


def test_against_the_workspace_emulator(tmp_path):
    """The stand-in as an episode runs it: the front, the Workspace emulator's Calendar, the gcp emulator's sign-in."""
    workspace_python()
    home = tmp_path / "home"
    sign_in(home)

    async def steps(session):
        window = {"timeMin": "2026-03-03T00:00:00+08:00", "timeMax": "2026-03-04T23:59:59+08:00"}
        out = {"empty": await call(session, "list_events", window)}
        for summary, start, end in (("Later", "2026-03-04T09:00:00+08:00", "2026-03-04T10:00:00+08:00"),
                                    ("Sooner", "2026-03-03T15:00:00+08:00", "2026-03-03T17:00:00+08:00")):
            out[summary] = await call(session, "create_event", {
                "summary": summary, "location": "Room A", "start": {"dateTime": start, "timeZone": "Asia/Hong_Kong"},
                "end": {"dateTime": end, "timeZone": "Asia/Hong_Kong"}})
        out["listed"] = await call(session, "list_events", {**window, "orderBy": "startTime"})
        later = out["Later"][0].split("\n", 1)[0].removeprefix("Event created with ID: ")
        out["got"] = await call(session, "get_event", {"eventId": later})
        out["patched"] = await call(session, "update_event", {"eventId": later, "summary": "Later (moved)"})
        out["deleted"] = await call(session, "delete_event", {"eventId": later})
        out["gone"] = await call(session, "get_event", {"eventId": "nosuchevent1"})
        out["after"] = await call(session, "list_events", window)
        return out

    with workspace_emulators(tmp_path) as running:
        out = run_session(running, home, tmp_path, steps)
    assert out["empty"] == ("Found 0 events:\n[]", False)
    ids = {}
    for summary, start, end in (("Later", "2026-03-04T09:00:00+08:00", "2026-03-04T10:00:00+08:00"),
                                ("Sooner", "2026-03-03T15:00:00+08:00", "2026-03-03T17:00:00+08:00")):
        text, failed = out[summary]
        first, rest = text.split("\n", 1)
        ids[summary] = first.removeprefix("Event created with ID: ")
        assert not failed and first.startswith("Event created with ID: ") and ids[summary]
        assert rest == f"Title: {summary}\nStart: {start}\nEnd: {end}"
    text, failed = out["listed"]
    items = json.loads(text.split("\n", 1)[1])
    assert not failed and text == "Found 2 events:\n" + json.dumps(items, indent=2, ensure_ascii=False)
    assert [(e["id"], e["summary"], e["start"]["dateTime"]) for e in items] == [
        (ids["Sooner"], "Sooner", "2026-03-03T15:00:00+08:00"), (ids["Later"], "Later", "2026-03-04T09:00:00+08:00")]
    text, failed = out["got"]
    assert not failed and text == json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    assert (json.loads(text)["id"], json.loads(text)["location"]) == (ids["Later"], "Room A")
    assert out["patched"] == (f"Event updated: {ids['Later']}\nNew title: Later (moved)\nNew start: (unchanged)\n"
                              "New end: (unchanged)", False)
    assert out["deleted"] == (f"Event deleted: {ids['Later']}", False)
    assert out["gone"] == ("Error: Not Found", True)
    assert [e["summary"] for e in json.loads(out["after"][0].split("\n", 1)[1])] == ["Sooner"]


# --- the recorded runs --------------------------------------------------------------------------------------------

RECORDED_TASKS = ("set-conf-cr-ddl", "student-interview")
PREFIX = "google_calendar-"


def _unmasked(arguments: dict[str, Any]) -> dict[str, Any]:
    """The recorder masked values it took for secrets (the task's time zone, `As**********ng`): each masked time zone
    read as an IANA zone of its length, first and last letters (the first of those in order: the answer's text names
    no time zone, so which one cannot show)."""
    def zone(masked: str) -> str:
        m = re.fullmatch(r"(\w+?)(\*{3,})(\w+)", masked)
        if m is None:
            return masked
        fits = [z for z in zoneinfo.available_timezones() if len(z) == len(masked) and z.startswith(m.group(1))
                and z.endswith(m.group(3))]
        assert fits, masked
        return sorted(fits)[0]

    out = json.loads(json.dumps(arguments))
    for key in ("start", "end"):
        if isinstance(out.get(key), dict) and isinstance(out[key].get("timeZone"), str):
            out[key]["timeZone"] = zone(out[key]["timeZone"])
    return out


def test_the_recorded_calls_made_again_against_the_workspace_emulator(tmp_path):
    """Each recorded run's calls in order, against the episode's (empty) calendar: every answer is the recorded text,
    the event's id read as the one the emulator gave it."""
    head = "Event created with ID: "

    def learn(tool: str, recorded: str, live: str) -> dict[str, str]:
        if tool != "create_event":
            return {}
        return {recorded.split("\n", 1)[0].removeprefix(head): live.split("\n", 1)[0].removeprefix(head)}

    home = tmp_path / "home"
    sign_in(home)
    every = google_fake.checked_calls(RECORDED_TASKS, PREFIX, SCHEMAS)
    for task in sorted({c[0] for c in every}):
        calls = [(t, tool, _unmasked(arguments), text) for t, tool, arguments, text in every if t == task]
        with workspace_emulators(tmp_path / task) as running:
            out = google_fake.run_session(MODULE, {**running.env, "HOME": str(home)}, tmp_path,
                                          lambda session: google_fake.replay(session, calls, learn))
        assert [(tool, live) for tool, _, live, _ in out] == [(tool, recorded) for tool, recorded, _, _ in out], task


def test_every_recorded_call_fits_the_schemas_and_its_answer_is_the_formatters():
    for task, tool, arguments, text in google_fake.checked_calls(RECORDED_TASKS, PREFIX, SCHEMAS):
        if tool == "create_event":
            event_id = text.split("\n", 1)[0].removeprefix("Event created with ID: ")
            assert created_text({"id": event_id}, arguments) == text, (task, text)
        elif tool == "list_events":
            items = json.loads(text.split("\n", 1)[1])
            assert listed_text({"items": items}) == text, (task, text)
        else:
            pytest.fail(f"{task}: no check for a recorded {tool} call yet")
