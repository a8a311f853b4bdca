"""The Canvas a recorded run met, as the emulator's own seed: the records a run's answers printed (decathlon.emulators.
fidelity.canvas reads them) turned into the emulator's model objects with their real ids, on the emulator's fresh
store (upstream's account and its three admins), and written as a snapshot-format folder (`manifest.json` +
`canvas.json`, decathlon.emulators.canvas.state) for `load_seed`.

What an answer never shows is filled so that it stays unseen: a record's creation time is a fixed instant, and an id
no answer printed (the section or assignment group of a course, an enrollment the run only saw as a role in a course
listing) comes from a range far above anything Canvas had handed out (UNSEEN_IDS), so it never meets a real one.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from decathlon.emulators.canvas import model
from decathlon.emulators.canvas.clock import parse_time, system_clock
from decathlon.emulators.canvas.state import CanvasState, fresh_store
from decathlon.emulators.canvas.store import Store
from decathlon.emulators.directory import Directory

UNSEEN_IDS = 10 ** 7
NEVER_SHOWN = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)  # when a seeded record was made: no answer shows it
AGENT_TOKEN = "fidelity-replay-agent"  # the token of an agent who is not one of upstream's admins
# the kind of id each record's "id" is, as the store numbers them
KINDS = {"courses": "course", "sections": "section", "groups": "assignment_group", "assignments": "assignment",
         "submissions": "submission", "quizzes": "quiz", "topics": "discussion_topic", "enrollments": "enrollment"}


@dataclass
class Seen:
    """What the run's answers printed of the Canvas it met, as plain records keyed by their real ids."""

    agent: int | None = None
    users: dict[int, dict[str, Any]] = field(default_factory=dict)  # complete: a listing's or profile's user
    named: dict[int, str] = field(default_factory=dict)  # only referenced (a course's teacher): id → display name
    courses: dict[int, dict[str, Any]] = field(default_factory=dict)
    sections: dict[int, int] = field(default_factory=dict)  # course → its section's id, where an answer shows it
    groups: dict[int, int] = field(default_factory=dict)  # course → its assignment group's id, where shown
    roles: set[tuple[int, int, str, str]] = field(default_factory=set)  # (course, user, type, state)
    assignments: dict[int, dict[str, Any]] = field(default_factory=dict)
    submissions: dict[int, dict[str, Any]] = field(default_factory=dict)
    quizzes: dict[int, dict[str, Any]] = field(default_factory=dict)  # with its "course_id"
    topics: dict[int, dict[str, Any]] = field(default_factory=dict)  # announcements, with their "course_id"
    user_uuids: dict[int, str] = field(default_factory=dict)  # from the profile's calendar feed

    def uuids(self) -> set[str]:
        return {str(c["uuid"]) for c in self.courses.values() if c.get("uuid")} | set(self.user_uuids.values())


def _fill(cls: type, record: dict[str, Any], **given: Any) -> Any:
    """`cls` from the record's fields of the same names (times read as Canvas writes them), then `given`."""
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name in given:
            values[f.name] = given[f.name]
        elif f.name in record:
            value = record[f.name]
            values[f.name] = parse_time(value) if "datetime" in str(f.type) and value is not None else value
        elif "datetime" in str(f.type) and f.default is dataclasses.MISSING:
            values[f.name] = NEVER_SHOWN
    return cls(**values)


def _unseen() -> Iterator[int]:
    n = UNSEEN_IDS
    while True:
        n += 1
        yield n


def build(seen: Seen, directory: Directory) -> Store:
    """The fresh store with everything `seen` holds added, its id sequences where the run's own creations start."""
    store = fresh_store(directory, system_clock)
    unseen = _unseen()
    for uid, u in sorted(seen.users.items()):
        known = store.users.get(uid)  # one of upstream's admins: its rights and token stay
        store.users[uid] = _fill(model.User, u, id=uid, password="", uuid=seen.user_uuids.get(uid) or store.random_string(),
                                 login_id=str(u.get("login_id") or ""), sis_user_id=u.get("sis_user_id"),
                                 tokens=list(known.tokens) if known else [], admin=bool(known and known.admin))
    for uid, name in sorted(seen.named.items()):
        if uid not in store.users:
            store.users[uid] = model.User(uid, name, name, name, "", None, "", NEVER_SHOWN, store.random_string())
    if seen.agent is not None:
        if seen.agent not in store.users:
            store.users[seen.agent] = model.User(seen.agent, "", "", "", "", None, "", NEVER_SHOWN, store.random_string())
        if not store.users[seen.agent].tokens:
            store.users[seen.agent].tokens.append(AGENT_TOKEN)
        for token in store.users[seen.agent].tokens:
            store.tokens[token] = seen.agent
    for cid, c in sorted(seen.courses.items()):
        section, group = seen.sections.get(cid) or next(unseen), seen.groups.get(cid) or next(unseen)
        store.courses[cid] = _fill(model.Course, c, id=cid, section_id=section, group_id=group,
                                   account_id=int(c.get("account_id") or 1))
        store.sections[section] = model.Section(section, cid, str(c.get("name") or ""), NEVER_SHOWN)
        store.groups[group] = model.AssignmentGroup(group, cid, "Assignments", 1)
    for course, user, type_, state in sorted(seen.roles):
        if course in store.courses and user in store.users:
            e = model.Enrollment(next(unseen), user, course, store.courses[course].section_id, type_, state,
                                 NEVER_SHOWN, NEVER_SHOWN)
            store.enrollments[e.id] = e
    for aid, a in sorted(seen.assignments.items()):
        gid = int(a.get("assignment_group_id") or store.courses[a["course_id"]].group_id)
        if gid not in store.groups:
            store.groups[gid] = model.AssignmentGroup(gid, a["course_id"], "Assignments", 1)
        store.assignments[aid] = _fill(model.Assignment, a, id=aid, group_id=gid,
                                       workflow_state="published" if a.get("published") else "unpublished")
    for sid, s in sorted(seen.submissions.items()):
        store.submissions[sid] = _fill(model.Submission, s, id=sid)
        store.submission_index[(s["assignment_id"], s["user_id"])] = sid
    for qid, q in sorted(seen.quizzes.items()):
        store.quizzes[qid] = _fill(model.Quiz, q, id=qid, workflow_state="available" if q.get("published")
                                   else "unpublished")
    for tid, t in sorted(seen.topics.items()):
        author = (t.get("author") or {}).get("id")
        store.topics[tid] = _fill(model.DiscussionTopic, t, id=tid, user_id=author, is_announcement=True,
                                  workflow_state="active" if t.get("published", True) else "unpublished")
    for part, kind in KINDS.items():
        held = [i for i in getattr(store, part) if i < UNSEEN_IDS]
        store._ids[kind] = max([store._ids[kind], *held])
    return store


async def write(store: Store, folder: Path) -> None:
    """The store as a seed folder of the emulator's own format."""
    await CanvasState(store, lambda: store).snapshot(folder)
