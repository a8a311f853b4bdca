"""A small fake of the Google endpoints the Calendar and Forms stand-ins call, for their tests, reached as an episode
reaches Google: at the real host names, over TLS, through the project's SaaS front (decathlon.emulators.front) run in
this process with the fake behind every route. The stand-in under test runs as its own process on its own virtualenv
(ci/servers/google-workspace.txt), told the front and its CA bundle the way an episode tells every process.

What the fake answers, as Google's API references document it: the OAuth token endpoint (refresh_token grant),
Calendar v3 events on `primary` (insert, get, patch, delete, list with timeMin/timeMax/maxResults/orderBy), and Forms
v1 (create, get, batchUpdate createItem, responses.list), each refusal in Google's JSON error shape. Every request is
kept (`requests`), so a test can check what the stand-in sent. `workspace_emulators` puts the project's Workspace and
gcp emulators (started as tests/emulators/harness.py starts them) behind the same front instead; `recorded_calls`
reads a server's calls out of the recorded runs (at run time, never copied) and `replay` makes them again.
"""
from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from aiohttp import web
from decathlon.emulators.fidelity import google_mcp
from decathlon.emulators.fidelity.google_mcp import Session
from decathlon.emulators.front import ca, routes
from decathlon.emulators.front.proxy import Front
from recorded_runs import TRAJECTORIES, require_runs
from tests.saas_venv import SERVERS, require

CLIENT_ID = "1234-fake.apps.googleusercontent.com"
CLIENT_SECRET = "fake-secret"
REFRESH_TOKEN = "1//fake-refresh"
NOW = "2026-03-02T09:00:00.000Z"
FORM_CREATE_ONLY_TITLE = ("Only info.title can be set when creating a form. To add items and change settings, use "
                          "batchUpdate.")


def google_error(status: int, message: str, reason: str, state: str) -> web.Response:
    body = {"error": {"code": status, "message": message, "errors": [{"message": message, "domain": "global",
                                                                      "reason": reason}], "status": state}}
    return web.json_response(body, status=status)


def not_found(message: str = "Not Found") -> web.Response:
    return google_error(404, message, "notFound", "NOT_FOUND")


def bad_request(message: str) -> web.Response:
    return google_error(400, message, "invalid", "INVALID_ARGUMENT")


@dataclass
class Seen:
    method: str
    host: str
    path: str
    query: dict[str, str]
    body: Any


def _instant(text: str) -> datetime:
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


@dataclass
class FakeGoogle:
    events: dict[str, dict[str, Any]] = field(default_factory=dict)
    forms: dict[str, dict[str, Any]] = field(default_factory=dict)
    responses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    requests: list[Seen] = field(default_factory=list)
    tokens: set[str] = field(default_factory=set)
    counter: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def new_id(self, alphabet: str, size: int) -> str:
        n = next(self.counter) * 7919
        return "".join(alphabet[(n * (i + 3)) % len(alphabet)] for i in range(size))

    async def handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        host = request.headers.get("Host", "").split(":")[0]
        body: Any = None
        if raw and request.content_type == "application/x-www-form-urlencoded":
            body = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        elif raw:
            body = json.loads(raw)
        self.requests.append(Seen(request.method, host, request.path, dict(request.query), body))
        if host == "oauth2.googleapis.com" and request.path == "/token":
            return self.token(body or {})
        if request.headers.get("Authorization", "").removeprefix("Bearer ") not in self.tokens:
            return google_error(401, "Request had invalid authentication credentials.", "authError", "UNAUTHENTICATED")
        if host == "www.googleapis.com" and request.path.startswith("/calendar/v3/calendars/primary/events"):
            return self.calendar(request.method, request.path.removeprefix("/calendar/v3/calendars/primary/events"),
                                 dict(request.query), body)
        if host == "forms.googleapis.com" and request.path.startswith("/v1/forms"):
            return self.form_call(request.method, request.path.removeprefix("/v1/forms"), body)
        return not_found()

    def token(self, form: dict[str, str]) -> web.Response:
        if form.get("grant_type") != "refresh_token" or form.get("refresh_token") != REFRESH_TOKEN or \
                form.get("client_id") != CLIENT_ID or form.get("client_secret") != CLIENT_SECRET:
            return web.json_response({"error": "invalid_grant", "error_description": "Bad Request"}, status=400)
        token = f"ya29.fake-{next(self.counter)}"
        self.tokens.add(token)
        return web.json_response({"access_token": token, "expires_in": 3599, "token_type": "Bearer",
                                  "scope": "https://www.googleapis.com/auth/calendar"})

    # --- Calendar v3 ---------------------------------------------------------------------------------------

    def calendar(self, method: str, rest: str, query: dict[str, str], body: Any) -> web.Response:
        event_id = rest.removeprefix("/")
        if method == "POST" and not event_id:
            return self.insert_event(body or {})
        if method == "GET" and not event_id:
            return self.list_events(query)
        event = self.events.get(event_id)
        if event is None:
            return not_found()
        if method == "GET":
            return web.json_response(event)
        if method == "PATCH":
            event.update(body or {})
            event["sequence"] += 1
            return web.json_response(event)
        if method == "DELETE":
            del self.events[event_id]
            return web.Response(status=204)
        return not_found()

    def insert_event(self, body: dict[str, Any]) -> web.Response:
        if "end" not in body:
            return google_error(400, "Missing end time.", "required", "INVALID_ARGUMENT")
        event_id = self.new_id("0123456789abcdefghijklmnopqrstuv", 26)
        event = {"kind": "calendar#event", "etag": f'"{event_id[:8]}"', "id": event_id, "status": "confirmed",
                 "htmlLink": f"https://www.google.com/calendar/event?eid={event_id}", "created": NOW, "updated": NOW,
                 **{k: body[k] for k in ("summary", "description", "location") if k in body},
                 "creator": {"email": "someone@example.com", "self": True},
                 "organizer": {"email": "someone@example.com", "self": True},
                 "start": body.get("start"), "end": body["end"], "iCalUID": f"{event_id}@google.com", "sequence": 0,
                 "reminders": {"useDefault": True}, "eventType": "default"}
        self.events[event_id] = event
        return web.json_response(event)

    def list_events(self, query: dict[str, str]) -> web.Response:
        if query.get("orderBy") == "startTime" and query.get("singleEvents") != "true":
            return bad_request("The requested ordering is not available for the particular query.")
        low, high = _instant(query["timeMin"]), _instant(query["timeMax"])
        hits = [e for e in self.events.values()
                if _instant(e["end"]["dateTime"]) > low and _instant(e["start"]["dateTime"]) < high]
        if query.get("orderBy") == "startTime":
            hits.sort(key=lambda e: _instant(e["start"]["dateTime"]))
        hits = hits[:min(int(query.get("maxResults", "250")), 2500)]
        return web.json_response({"kind": "calendar#events", "etag": '"p1"', "summary": "someone@example.com",
                                  "updated": NOW, "timeZone": "UTC", "accessRole": "owner", "defaultReminders": [],
                                  "items": hits})

    # --- Forms v1 ------------------------------------------------------------------------------------------

    def form_call(self, method: str, rest: str, body: Any) -> web.Response:
        if method == "POST" and not rest:
            return self.create_form(body or {})
        m = re.fullmatch(r"/([A-Za-z0-9_-]+)(:batchUpdate|/responses)?", rest)
        form = self.forms.get(m.group(1)) if m else None
        if m is None or form is None:
            return not_found("Requested entity was not found.")
        if method == "GET" and m.group(2) is None:
            return web.json_response(form)
        if method == "GET" and m.group(2) == "/responses":
            answers = self.responses.get(form["formId"], [])
            return web.json_response({"responses": answers} if answers else {})
        if method == "POST" and m.group(2) == ":batchUpdate":
            return self.batch_update(form, body or {})
        return not_found("Requested entity was not found.")

    def create_form(self, body: dict[str, Any]) -> web.Response:
        info = body.get("info") or {}
        if set(body) - {"info"} or set(info) - {"title", "documentTitle"} or not isinstance(info.get("title"), str):
            return bad_request(FORM_CREATE_ONLY_TITLE)
        form_id = "1" + self.new_id("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", 43)
        form = {"formId": form_id, "info": {"title": info["title"], "documentTitle": info.get("documentTitle",
                                                                                              info["title"])},
                "settings": {}, "revisionId": "00000002",
                "responderUri": f"https://docs.google.com/forms/d/e/{form_id[::-1]}/viewform"}
        self.forms[form_id] = form
        return web.json_response(form)

    def batch_update(self, form: dict[str, Any], body: dict[str, Any]) -> web.Response:
        replies = []
        for request in body.get("requests", []):
            create = request.get("createItem")
            if not isinstance(create, dict):
                return bad_request("Invalid requests[0]: no request specified.")
            item = json.loads(json.dumps(create["item"]))  # the request as sent stays in `requests`
            question = item.get("questionItem", {}).get("question", {})
            if not isinstance(question.get("required", False), bool):
                return bad_request(f"Invalid value at 'requests[0].create_item.item.question_item.question.required' "
                                   f"(TYPE_BOOL), \"{question['required']}\"")
            choice = question.get("choiceQuestion")
            if choice is not None and not choice.get("options"):
                return bad_request("Invalid requests[0].createItem: Choice question must have at least one option.")
            item["itemId"] = self.new_id("0123456789abcdef", 8)
            question["questionId"] = self.new_id("0123456789abcdef", 8)
            if question.get("required") is False:
                del question["required"]  # proto3: a false boolean is not written
            items = form.setdefault("items", [])
            index = create.get("location", {}).get("index", 0)
            if index > len(items):
                return bad_request(f"Invalid requests[0].createItem: index ({index}) must be less than or equal to "
                                   f"the number of items in the form ({len(items)}).")
            items.insert(index, item)
            replies.append({"createItem": {"itemId": item["itemId"], "questionId": [question["questionId"]]}})
        form["revisionId"] = f"{int(form['revisionId']) + 1:08d}"
        return web.json_response({"replies": replies, "writeControl": {"requiredRevisionId": form["revisionId"]}})


class Running:
    """The front, and behind it the fake (or the emulators `ports` names: {"workspace": N, "gcp": M}), in a thread of
    their own; `env` is what a stand-in process gets to reach them."""

    def __init__(self, folder: Path, ports: dict[str, int] | None = None) -> None:
        self.fake = FakeGoogle()
        self.ports = ports
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        certs = ca.make(routes.certificate_names())
        self.bundle = ca.write_bundle(certs, folder / "saas")
        self.runner, self.front_server, front_port = asyncio.run_coroutine_threadsafe(
            self._start(certs), self.loop).result(30)
        proxy = f"http://127.0.0.1:{front_port}"
        self.env = {"HTTPS_PROXY": proxy, "https_proxy": proxy, "NO_PROXY": "localhost,127.0.0.1,::1",
                    "no_proxy": "localhost,127.0.0.1,::1", "HTTPLIB2_CA_CERTS": str(self.bundle),
                    "SSL_CERT_FILE": str(self.bundle), "REQUESTS_CA_BUNDLE": str(self.bundle)}

    async def _start(self, certs: ca.Certificates) -> tuple[web.AppRunner, asyncio.Server, int]:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.fake.handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        fake_port = runner.addresses[0][1]
        ports = self.ports

        class Behind:
            """The emulator behind each route: the fake, or the one named (the front asks only for a port)."""

            async def port(self, name: str) -> int:
                return fake_port if ports is None else ports[name]

        front = Front(certs, Behind())  # type: ignore[arg-type]
        server = await asyncio.start_server(front.handle, "127.0.0.1", 0)
        return runner, server, server.sockets[0].getsockname()[1]

    def close(self) -> None:
        async def stop() -> None:
            self.front_server.close()
            await self.runner.cleanup()
        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def workspace_python() -> Path:
    return require(SERVERS / "google-workspace" / "bin" / "python",
                   "`python ci/install_servers.py google-workspace` builds the Google stand-ins' virtualenv")


@asynccontextmanager
async def connect(module: str, env: dict[str, str], cwd: Path) -> AsyncIterator[Session]:
    """The stand-in started as an agent's MCP client starts a server: a bare environment plus what it is given."""
    async with google_mcp.connect(workspace_python(), ["-m", module], env, cwd) as session:
        yield session


def run_session(module: str, env: dict[str, str], cwd: Path, steps: Callable[[Session], Awaitable[Any]]) -> Any:
    """`steps` over one session of the stand-in `module`, bounded."""
    async def main() -> Any:
        async with connect(module, env, cwd) as session:
            return await steps(session)
    return asyncio.run(asyncio.wait_for(main(), 180))


async def call(session: Session, name: str, arguments: dict[str, Any] | None) -> tuple[str, bool]:
    result = await asyncio.wait_for(session.session.call_tool(name, arguments), 60)
    assert len(result.content) == 1 and result.content[0].type == "text", result
    return google_mcp.shown(result.content), bool(result.is_error)


@contextmanager
def fake_google(folder: Path, ports: dict[str, int] | None = None) -> Iterator[Running]:
    workspace_python()  # before anything starts: without the stand-ins' virtualenv the test skips or fails at once
    running = Running(folder, ports)
    try:
        yield running
    finally:
        running.close()


@contextmanager
def workspace_emulators(folder: Path) -> Iterator[Running]:
    """The Workspace emulator (Calendar, Forms) and the gcp one (the token endpoint) behind the front."""
    from tests.emulators.harness import Target, start_emulator

    started: list[Target] = []
    try:
        ports = {}
        for name in ("workspace", "gcp"):
            proc, named = start_emulator(name, folder / name)
            started.append(Target(name, False, "", {}, proc))
            ports[name] = named["http"]
        with fake_google(folder, ports) as running:
            yield running
    finally:
        for target in started:
            target.stop()


def assert_runs_the_stand_in(server: str, raw: dict[str, Any], module: str) -> None:
    """The checkout's launch of `server` runs `module` on the stand-ins' virtualenv."""
    from decathlon.sandbox import catalogue

    plan = catalogue.plan_server(server, raw)
    assert plan.entry is not None and (plan.entry.module, plan.entry.env) == (module, "google-workspace")
    assert (plan.runs, plan.command, plan.args) == ("live", "${decathlon_servers}/google-workspace/bin/python",
                                                    ["-m", module])


def recorded_calls(tasks: tuple[str, ...], prefix: str) -> list[tuple[str, str, dict[str, Any], str]]:
    """(task, tool, arguments, result text) of every call of the server in the recorded runs, in order (a task the
    runs' folder lacks, as another model's may, has none)."""
    calls = []
    for task in tasks:
        if not (TRAJECTORIES / f"{task}.json").is_file():
            continue
        messages = json.loads((TRAJECTORIES / f"{task}.json").read_text())["messages"]
        answers = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
        for message in messages:
            for tool_call in message.get("tool_calls") or []:
                name = tool_call["function"]["name"]
                if name.startswith(prefix):
                    content = answers[tool_call["id"]]
                    text = json.loads(content)["text"] if content.startswith("{") else content
                    calls.append((task, name[len(prefix):], json.loads(tool_call["function"]["arguments"]), text))
    return calls


def checked_calls(tasks: tuple[str, ...], prefix: str, schemas: dict[str, dict[str, Any]]
                  ) -> list[tuple[str, str, dict[str, Any], str]]:
    """The server's recorded calls, each a tool of `schemas` whose arguments validate against its schema."""
    import jsonschema

    require_runs()
    calls = recorded_calls(tasks, prefix)
    assert calls, "the runs hold no call of this server"
    for task, tool, arguments, _ in calls:
        assert tool in schemas, (task, tool)
        jsonschema.Draft7Validator(schemas[tool]).validate(arguments)
    return calls


Learn = Callable[[str, str, str], "dict[str, str]"]


async def replay(session: Session, calls: list[tuple[str, str, dict[str, Any], str]], learn: Learn
                 ) -> list[tuple[str, str, str, bool]]:
    """The recorded calls made again in order, each recorded id in their arguments and answers read as the one the
    live server gave the same object (`learn(tool, recorded text, live text)` says which): (tool, the recorded answer
    with live ids, the live answer, its error flag)."""
    ids: dict[str, str] = {}

    def live_ids(text: str) -> str:
        for recorded, live in ids.items():
            text = text.replace(recorded, live)
        return text

    out = []
    for _, tool, arguments, recorded in calls:
        text, failed = await call(session, tool, json.loads(live_ids(json.dumps(arguments))))
        if not failed:
            ids.update(learn(tool, recorded, text))
        out.append((tool, live_ids(recorded), text, failed))
    return out
