"""The Canvas emulator against Canvas's own recorded answers: each recorded run's `canvas-*` calls replayed in order
through the stand-in's tool functions (decathlon.standins.canvas, `call_tool`, the text an agent is shown) on a fresh
emulator of its own, seeded with what the run showed of the Canvas it met, and each answer compared with the one the
model was shown. The stand-in and the emulator are both this project's Python and its virtualenv holds both (aiohttp,
httpx), so the emulator runs in the replay's own process (over its HTTPS port, as the stand-in reaches it in an
episode): no driver process.

What a run shows, and so what is rebuilt (canvas_seed.py writes it in the emulator's seed format, ids exact):
- users: those a user listing or the profile printed, whole; a course's teachers, whom a listing only names (id and
  display name); the agent (the profile's user, else the user of its own enrollments, grades or quiz attempts);
- courses: a course listing's or get_course's course (its settings, uuid, times), the agent's role in it and its
  teachers; courses the run creates are left for the replay to make;
- assignments (and the agent's own submission where listed with it), quizzes and announcements from their listings;
  a submission a grade's answer shows never submitted, with its id;
- ids of what the run creates: each creation takes the id its answer shows (the sequence is set there before the
  call; a new course's section, the one its enrollments show): Canvas's sequences skip (a rolled-back insert keeps
  its id) and concurrent requests interleave, which no run shows. Calls made at once (one assistant message) run in
  the order Canvas's ids show it ran them;
- the clock: the emulator's stands at the run's own moment (the latest event time its answers show), a second further
  at each call, so what hangs on the time (a submission `missing`, a quiz locked) is as Canvas had it then.

How an answer is judged: an error against an error by its text, exactly; an error against a result disagrees;
results by shape and content: the same JSON (the same keys in the same order, the same value types), the same
values, but for:
- values the vendor draws: a uuid Canvas drew during the run (one the seed does not hold; and the addresses made of
  it: calendar feeds), assignments' `secure_params` (an LTI id Canvas draws), a quiz submission's
  `validation_token`, quiz answers' ids (random on Canvas), a file's `verifier`, the stand-in's paging session id;
- times of the replay's clock: a timestamp inside the window the replay's clock ran through stands for Canvas's clock
  at that call (the run shows it only to the second, and not for every call), and matches any timestamp; every other
  time (a seeded record's) must be equal;
- values that hang on what the run never shows: a course's `total_students` (its students are never listed), a
  seeded quiz's `question_count`, `points_possible` and `question_types` (its questions are never shown with their
  points), the page count of an unfiltered user listing (the account's other users are never listed); these keep
  their type only.
A call is "cannot rebuild", with why, where it hangs on what the run does not show: a file of the run's own
workspace (uploads, file submissions, and later reads of what they made), the quiz-taking flow (a quiz's questions
are shown without their points and correct answers), an object of the seed the run only referenced.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from decathlon.emulators.fidelity.canvas_seed import Seen, build, write
from decathlon.emulators.fidelity.recorded import Case as BaseCase, Exchange, exchanges

PREFIX = "canvas-"
TOOL = "canvas-canvas_"
WORKSPACE_FILE = "reads a file of the run's own workspace, which the replay does not have"
NOT_REPLAYED = {
    "upload_file_from_path": WORKSPACE_FILE,
    "submit_assignment_with_file": WORKSPACE_FILE,
    "start_quiz_attempt": "the quiz's questions (their points) are not shown by the run",
    "list_quiz_questions": "the quiz's questions are shown without their points and correct answers",
    "submit_quiz_answers": "the score hangs on the quiz's correct answers, which the run does not show",
}
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
DRAWN_KEYS = {"secure_params", "validation_token"}
DRAWN_IN_TEXT = re.compile(r"(verifier=)[A-Za-z0-9]+")
UUID_KEY = "uuid"
EVENT_TIMES = {"created_at", "updated_at", "submitted_at", "posted_at", "graded_at", "started_at", "finished_at",
               "modified_at", "last_authored_message_at", "last_reply_at"}
USER_FEED = re.compile(r"/feeds/calendars/user_([A-Za-z0-9]+)\.ics")
SESSION = re.compile(r"\bsess_[a-z0-9]+")  # the stand-in's paging session, drawn at random
PAGES = re.compile(r"Total pages: \d+")  # of an unfiltered user listing: hangs on the account's users never listed
ADDRESS = "http://localhost:10001"  # where upstream's Canvas says it is (its links), the emulator's in an episode
PRINTS_USERS = {"enroll_user", "create_conversation"}  # tools whose answers print a user's own fields


Case = BaseCase  # an answer reads as its own lines: the JSON is printed with one member a line


# ---- reading what the run showed ----------------------------------------------------------------------------

def payload(text: str) -> tuple[str, Any] | None:
    """An answer's text around its JSON (a user listing's `Users (Page 1):` before, its paging session after, with
    the session's id masked) and the JSON; None for an error or a sentence."""
    if text.startswith("Error"):
        return None
    start = min([i for i in (text.find("["), text.find("{")) if i >= 0] or [-1])
    if start < 0:
        return None
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return None
    return text[:start] + "<json>" + SESSION.sub("sess_<drawn>", text[end:]), value


def _objects(text: str) -> list[dict[str, Any]]:
    got = payload(text)
    if got is None:
        return []
    value = got[1]
    items = value if isinstance(value, list) else [value]
    return [x for x in items if isinstance(x, dict)]


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _agent(calls: list[Exchange]) -> int | None:
    for ex in calls:
        tool = ex.tool.removeprefix(TOOL)
        for obj in _objects(ex.answer):
            if tool == "get_user_profile":
                return _int(obj.get("id"))
    for ex in calls:
        tool = ex.tool.removeprefix(TOOL)
        for obj in _objects(ex.answer):
            if tool == "list_courses":
                for e in obj.get("enrollments") or []:
                    return _int(e.get("user_id"))
            if tool == "submit_grade" and obj.get("grader_id"):
                return _int(obj.get("grader_id"))
            if tool in ("start_quiz_attempt", "get_submission") and obj.get("user_id"):
                return _int(obj.get("user_id"))
            if tool == "create_conversation":
                for m in obj.get("messages") or []:
                    return _int(m.get("author_id"))
    return None


def rebuild(calls: list[Exchange]) -> Seen:
    """The Canvas the run met, as far as its answers show it (see the module's doc); first sightings only, and none
    of what the run made itself."""
    seen = Seen(agent=_agent(calls))
    made: set[tuple[str, int]] = set()
    for ex in calls:
        tool, args = ex.tool.removeprefix(TOOL), ex.arguments
        objs = _objects(ex.answer)
        if tool == "create_course":
            made |= {("course", int(c["id"])) for c in objs if _int(c.get("id")) is not None}
        elif tool == "enroll_user":
            for e in objs:
                if ("course", e.get("course_id")) not in made and _int(e.get("course_section_id")) is not None:
                    seen.sections.setdefault(int(e["course_id"]), int(e["course_section_id"]))
        elif tool == "create_quiz":
            for q in objs:
                made.add(("quiz", int(q["id"])))
                if _int(args.get("course_id")) is not None and _int(q.get("assignment_group_id")) is not None:
                    seen.groups.setdefault(int(args["course_id"]), int(q["assignment_group_id"]))
        elif tool == "list_account_users" or tool == "get_user_profile":
            for u in objs:
                if _int(u.get("id")) is not None:
                    seen.users.setdefault(int(u["id"]), u)
                    feed = USER_FEED.search(str((u.get("calendar") or {}).get("ics") or ""))
                    if feed:
                        seen.user_uuids.setdefault(int(u["id"]), feed.group(1))
        elif tool in ("list_courses", "list_account_courses", "get_course"):
            for c in objs:
                cid = _int(c.get("id"))
                if cid is None or ("course", cid) in made:
                    continue
                for k, v in c.items():  # a later answer may show more of it (get_course: its syllabus)
                    seen.courses.setdefault(cid, {}).setdefault(k, v)
                for e in c.get("enrollments") or []:
                    seen.roles.add((cid, int(e["user_id"]), str(e["role"]), str(e["enrollment_state"])))
                for t in c.get("teachers") or []:
                    seen.named.setdefault(int(t["id"]), str(t.get("display_name") or ""))
                    seen.roles.add((cid, int(t["id"]), "TeacherEnrollment", "active"))
        elif tool == "list_assignments":
            for a in objs:
                if _int(a.get("id")) is None:
                    continue
                seen.assignments.setdefault(int(a["id"]), a)
                seen.groups.setdefault(int(a["course_id"]), int(a["assignment_group_id"]))
                s = a.get("submission")
                if isinstance(s, dict) and _int(s.get("id")) is not None:
                    seen.submissions.setdefault(int(s["id"]), s)
        elif tool == "submit_grade":
            for s in objs:
                if s.get("attempt") is None and s.get("submitted_at") is None and _int(s.get("id")) is not None:
                    seen.submissions.setdefault(int(s["id"]), {"assignment_id": s["assignment_id"],
                                                               "user_id": s["user_id"]})
                    seen.named.setdefault(int(s["user_id"]), "")
                    seen.roles.add((_int(args.get("course_id")) or 0, int(s["user_id"]), "StudentEnrollment",
                                    "active"))
        elif tool == "list_quizzes":
            for q in objs:
                if _int(q.get("id")) is not None and ("quiz", int(q["id"])) not in made:
                    seen.quizzes.setdefault(int(q["id"]), {**q, "course_id": _int(args.get("course_id"))})
        elif tool == "list_announcements":
            for t in objs:
                if _int(t.get("id")) is not None:
                    seen.topics.setdefault(int(t["id"]), {**t, "course_id": _int(args.get("course_id"))})
    for uid in [u for u in seen.named if u in seen.users]:
        del seen.named[uid]
    return seen


CREATED = {"create_course": "course", "enroll_user": "enrollment", "create_announcement": "discussion_topic",
           "create_quiz": "quiz", "create_quiz_question": "quiz_question", "create_conversation": "conversation"}


def pins(calls: list[Exchange]) -> dict[int, dict[str, int]]:
    """Per call (its position), the ids its creation took, by kind (the store's id kinds): the replay sets each
    sequence there before the call. Canvas's sequences skip (an insert rolled back keeps its id) and concurrent
    requests interleave, neither of which a run shows; the ids themselves are so not under test, what follows from
    them is. A course's section id is the one its later enrollments show."""
    sections: dict[int, int] = {}
    for ex in calls:
        if ex.tool == TOOL + "enroll_user":
            for e in _objects(ex.answer):
                if _int(e.get("course_id")) is not None and _int(e.get("course_section_id")) is not None:
                    sections.setdefault(int(e["course_id"]), int(e["course_section_id"]))
    out: dict[int, dict[str, int]] = {}
    for i, ex in enumerate(calls):
        tool, objs = ex.tool.removeprefix(TOOL), _objects(ex.answer)
        kind = CREATED.get(tool)
        if kind is None or not objs or _int(objs[0].get("id")) is None:
            continue
        first = objs[0]
        took = {kind: int(first["id"])}
        if tool == "create_course" and int(first["id"]) in sections:
            took["section"] = sections[int(first["id"])]
        if tool == "create_quiz" and _int(first.get("assignment_id")) is not None:
            took["assignment"] = int(first["assignment_id"])
        if tool == "create_conversation" and first.get("messages"):
            took["conversation_message"] = int(first["messages"][0]["id"])
        out[i] = took
    return out


# ---- judging ------------------------------------------------------------------------------------------------

@dataclass
class Rules:
    """What may differ in one answer, and why (see the module's doc)."""

    clock: tuple[str, str]  # the times the replay's clock showed, first and last, as Canvas writes times
    seeded_uuids: frozenset[str]
    hanging: frozenset[str]  # keys whose values hang on what the run never shows
    drawn_ids_under: frozenset[str]  # lists whose members' ids Canvas draws at random

    def same_leaf(self, key: str, real: Any, ours: Any) -> bool:
        if key in self.hanging or key in DRAWN_KEYS:
            return type(real) is type(ours) or None in (real, ours)
        if key == UUID_KEY and isinstance(real, str) and real not in self.seeded_uuids:
            return isinstance(ours, str)  # one Canvas drew during the run
        if isinstance(ours, str) and ISO.fullmatch(ours) and self.clock[0] <= ours <= self.clock[1]:
            return isinstance(real, str) and ISO.fullmatch(real) is not None
        return real == ours and type(real) is type(ours)


def differences(real: Any, ours: Any, rules: Rules, path: str = "", key: str = "") -> list[str]:
    if key in rules.hanging:
        return [] if type(real) is type(ours) or None in (real, ours) else [f"{path}: {type(real)} != {type(ours)}"]
    if isinstance(real, dict) and isinstance(ours, dict):
        if list(real) != list(ours):
            missing, extra = [k for k in real if k not in ours], [k for k in ours if k not in real]
            if missing or extra:
                return [f"{path or '.'}: keys missing {missing}, extra {extra}"]
            at = next(i for i, (a, b) in enumerate(zip(real, ours)) if a != b)
            return [f"{path or '.'}: keys in another order from {list(real)[at:at + 3]} (emulator {list(ours)[at:at + 3]})"]
        out: list[str] = []
        for k in real:
            out += differences(real[k], ours[k], rules, f"{path}.{k}", k)
        return out
    if isinstance(real, list) and isinstance(ours, list):
        if len(real) != len(ours):
            return [f"{path}: {len(real)} items != {len(ours)}"]
        out = []
        for i, (r, o) in enumerate(zip(real, ours)):
            if key in rules.drawn_ids_under and isinstance(r, dict) and isinstance(o, dict) and "id" in r and "id" in o:
                r, o = {**r, "id": 0}, {**o, "id": 0}
            out += differences(r, o, rules, f"{path}[{i}]", key)
        return out
    if rules.same_leaf(key, real, ours):
        return []
    return [f"{path}: {json.dumps(real)} != {json.dumps(ours)}"]


def _uuids(value: Any) -> list[tuple[str, str]]:
    """(ours, real) for every uuid pair side by side in the two answers."""
    out: list[tuple[str, str]] = []
    real, ours = value
    if isinstance(real, dict) and isinstance(ours, dict):
        if isinstance(real.get(UUID_KEY), str) and isinstance(ours.get(UUID_KEY), str):
            out.append((ours[UUID_KEY], real[UUID_KEY]))
        for k in real:
            if k in ours:
                out += _uuids((real[k], ours[k]))
    elif isinstance(real, list) and isinstance(ours, list):
        for pair in zip(real, ours):
            out += _uuids(pair)
    return out


class Judge:
    """Judges one run's calls in order against the seed it was replayed on."""

    def __init__(self, seen: Seen, clock: tuple[str, str]) -> None:
        self.seen = seen
        self.clock = clock
        self.tainted: set[tuple[int | None, int | None]] = set()  # (course, assignment) a skipped write changed

    def why_not(self, ex: Exchange) -> str | None:
        tool, args = ex.tool.removeprefix(TOOL), ex.arguments
        target = (_int(args.get("course_id")), _int(args.get("assignment_id")))
        if tool in NOT_REPLAYED:
            self.tainted.add(target)
            return NOT_REPLAYED[tool]
        if target in self.tainted and target[1] is not None:
            return "reads what an earlier call the replay could not make wrote (" + WORKSPACE_FILE + ")"
        users = [_int(args.get("user_id"))] + [_int(r) for r in args.get("recipients") or []]
        partial = sorted(u for u in users if u is not None and u not in self.seen.users
                         and tool in PRINTS_USERS)
        if partial:
            return f"user(s) {partial}: the run shows no listing or profile of them, only a reference"
        return None

    def __call__(self, ex: Exchange, answer: str | None) -> Case:
        why = self.why_not(ex)
        if why is not None or answer is None:
            return Case(ex, "cannot-rebuild", why or "not replayed", ex.answer, answer or "")
        case = self.judge(ex, answer)
        case.recorded, case.emulated = ex.answer, answer
        return case

    def judge(self, ex: Exchange, answer: str) -> Case:
        real_error, ours_error = ex.answer.startswith("Error"), answer.startswith("Error")
        if real_error or ours_error:
            if real_error and ours_error:
                return Case(ex, "agreed" if ex.answer == answer else "disagreed", "error text")
            return Case(ex, "disagreed", "outcome")
        real, ours = payload(ex.answer), payload(answer)
        if real is None or ours is None:
            return Case(ex, "agreed" if ex.answer == answer else "disagreed", "text")
        tool = ex.tool.removeprefix(TOOL)
        hanging = {"total_students"}
        if tool == "list_quizzes":
            hanging |= {"question_count", "points_possible", "question_types"}
        rules = Rules(self.clock, frozenset(self.seen.uuids()), frozenset(hanging),
                      frozenset({"answers"} if tool == "create_quiz_question" else ()))
        text = answer
        for mine, theirs in _uuids((real[1], ours[1])):
            if theirs not in rules.seeded_uuids:
                text = text.replace(mine, theirs)
        text = DRAWN_IN_TEXT.sub(r"\1-", text)
        ours = payload(text) or ours
        real = payload(DRAWN_IN_TEXT.sub(r"\1-", ex.answer)) or real
        if tool == "list_account_users" and not ex.arguments.get("search_term"):
            real, ours = (PAGES.sub("Total pages: <unlisted>", real[0]), real[1]), \
                (PAGES.sub("Total pages: <unlisted>", ours[0]), ours[1])
        diffs = ([] if real[0] == ours[0] else [f"lead text {real[0]!r} != {ours[0]!r}"]) + \
            differences(real[1], ours[1], rules)
        case = Case(ex, "disagreed" if diffs else "agreed", "shape and content")
        if diffs:
            case.how = "shape and content: " + "; ".join(diffs[:5])
        return case


# ---- replaying ----------------------------------------------------------------------------------------------

CREATES = {"create_course", "enroll_user", "create_announcement", "create_conversation", "create_quiz",
           "create_quiz_question"}


def batches(path: Path) -> dict[int, int]:
    """Each tool call's index (as `exchanges` counts them) → the assistant message that made it: the calls of one
    message ran at once."""
    run = json.loads(path.read_text(encoding="utf-8"))
    out: dict[int, int] = {}
    index = 0
    for n, m in enumerate(run.get("messages") or []):
        for _ in m.get("tool_calls") or []:
            out[index] = n
            index += 1
    return out


def _first_id(text: str) -> int | None:
    objs = _objects(text)
    return _int(objs[0].get("id")) if objs else None


def replay_order(calls: list[Exchange], batch: dict[int, int]) -> list[int]:
    """The calls' positions in the order to replay them: the run's, except that creations made at once (in one
    message) go in the order Canvas ran them, which the ids it gave show."""
    groups: dict[int, list[int]] = {}
    for i, ex in enumerate(calls):
        groups.setdefault(batch.get(ex.index, -1 - i), []).append(i)
    order: list[int] = []
    for key in sorted(groups, key=lambda k: groups[k][0]):
        members = groups[key]
        ids = [_first_id(calls[i].answer) for i in members]
        tools = {calls[i].tool.removeprefix(TOOL) for i in members}
        if len(members) > 1 and len(tools) == 1 and tools <= CREATES and None not in ids:
            members = [i for _, i in sorted(zip(ids, members))]
        order.extend(members)
    return order

@dataclass
class ReplayClock:
    """The emulator's clock in a replay: the run's own moment (the latest event its answers show), a second further
    at each call, so what hangs on the time (a submission missing, a quiz locked) comes out as Canvas's then."""

    now: dt.datetime

    def __call__(self) -> dt.datetime:
        return self.now


def run_moment(calls: list[Exchange]) -> dt.datetime:
    """The latest time of an event (not of a schedule: due dates lie ahead) any answer of the run shows."""
    times: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if k in EVENT_TIMES and isinstance(v, str) and ISO.fullmatch(v):
                    times.append(v)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for ex in calls:
        got = payload(ex.answer)
        if got is not None:
            walk(got[1])
    latest = max(times, default="2025-01-01T00:00:00Z")
    return dt.datetime.strptime(latest, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)


async def _replay_run(calls: list[Exchange], order: list[int], seen: Seen,
                      root: Path) -> tuple[list[str | None], tuple[str, str]]:
    from decathlon.emulators import canvas as emulator
    from decathlon.emulators.canvas.clock import iso, system_clock
    from decathlon.emulators.canvas.http import BASE_KEY
    from decathlon.emulators.canvas.state import CanvasState, fresh_store
    from decathlon.emulators.directory import load_directory
    from decathlon.standins.canvas.api import CanvasApi
    from decathlon.standins.canvas.client import CanvasClient
    from decathlon.standins.canvas.dispatch import call_tool
    from decathlon.standins.canvas.tools import Context
    from decathlon.standins.canvas.transport import Transport

    (root / "configs").mkdir(parents=True)
    (root / "configs" / "users_data.json").write_text(json.dumps({"users": []}))
    directory = load_directory(root)
    seed = build(seen, directory)
    await write(seed, root / "seed")
    clock = ReplayClock(run_moment(calls))
    first = iso(clock.now) or ""
    service = await emulator.start(directory, ports={"https": 0, "http": 0}, clock=clock)
    assert service._runner is not None
    service._runner.app[BASE_KEY][0] = ADDRESS  # the replay's port is a free one; Canvas's links name upstream's
    transport = Transport()
    try:
        assert service.store is not None
        state = CanvasState(service.store, lambda: fresh_store(directory, system_clock))
        await state.load_seed(root / "seed")
        token = seed.users[seen.agent].tokens[0] if seen.agent in seed.users else "none"
        api = CanvasApi(token, f"127.0.0.1:{service.ports['https']}", transport)
        ctx = Context(api=api, client=CanvasClient(api))
        answers: list[str | None] = [None] * len(calls)
        taking = pins(calls)
        for i in order:
            tool = calls[i].tool.removeprefix(PREFIX)
            clock.now += dt.timedelta(seconds=1)
            for kind, taken in taking.get(i, {}).items():
                service.store._ids[kind] = taken - 1  # the store's own sequence: the next id it hands out is `taken`
            if tool.removeprefix("canvas_") not in NOT_REPLAYED:
                answers[i], _ = await asyncio.wait_for(call_tool(ctx, tool, calls[i].arguments), 120)
        return answers, (first, iso(clock.now) or "")
    finally:
        await transport.aclose()
        await service.close()


def replay_runs(paths: list[Path], *, servers: Path | None = None) -> list[Case]:
    """The runs' Canvas calls, each run on a fresh emulator of its own, each call judged against its recorded answer
    (`servers` is taken for the other tiers' signature: the replay needs no server virtualenv)."""
    cases: list[Case] = []
    for path in paths:
        calls = exchanges(path, PREFIX)
        if not calls:
            continue
        seen = rebuild(calls)
        with tempfile.TemporaryDirectory(prefix="fidelity-canvas-") as root:
            answers, clock = asyncio.run(_replay_run(calls, replay_order(calls, batches(path)), seen, Path(root)))
        judge = Judge(seen, clock)
        cases.extend(judge(ex, answer) for ex, answer in zip(calls, answers))
    return cases


def replay(runs: Path, **kwargs: Any) -> list[Case]:
    return replay_runs(sorted(runs.glob("*.json")), **kwargs)
