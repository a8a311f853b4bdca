"""Discussion topics and announcements (topics with `is_announcement`), their entries, and the
cross-course announcements list."""
from __future__ import annotations

from datetime import timedelta

from decathlon.emulators.canvas import access, errors
from decathlon.emulators.canvas.api.courses import time_field
from decathlon.emulators.canvas.clock import parse_time
from decathlon.emulators.canvas.http import Ctx, Reply, Routes
from decathlon.emulators.canvas.model import Course, DiscussionEntry, DiscussionTopic
from decathlon.emulators.kit.params import as_bool, as_int, as_str_list
from decathlon.emulators.canvas.views import View

routes = Routes()

DISCUSSION_TYPES = ("side_comment", "threaded", "not_threaded")


def topic_of(ctx: Ctx, course: Course) -> DiscussionTopic:
    t = ctx.store.topics.get(ctx.id("topic_id"))
    if t is None or t.course_id != course.id or t.workflow_state == "deleted":
        raise errors.not_found()
    if not _visible(ctx, course, t):
        raise errors.unauthorized()
    return t


def _visible(ctx: Ctx, course: Course, t: DiscussionTopic) -> bool:
    if access.is_staff(ctx.store, ctx.user, course):
        return True
    if not t.published:
        return False
    return not (t.delayed_post_at and ctx.store.now() < t.delayed_post_at)


def _order(ctx: Ctx, topics: list[DiscussionTopic], announcements: bool) -> list[DiscussionTopic]:
    def stamp(t: DiscussionTopic) -> float:
        when = t.posted_at or t.delayed_post_at or t.created_at
        return when.timestamp()
    order_by = ctx.param("order_by")
    if order_by == "title":
        return sorted(topics, key=lambda t: (t.title.lower(), t.id))
    if announcements or order_by == "recent_activity":
        return sorted(topics, key=lambda t: (-stamp(t) if announcements else -(t.last_reply_at or t.created_at).timestamp(),
                                             -t.id))
    pinned = sorted((t for t in topics if t.pinned), key=lambda t: (t.position, t.id))
    rest = sorted((t for t in topics if not t.pinned), key=lambda t: (-(t.last_reply_at or t.created_at).timestamp(), -t.id))
    return pinned + rest


@routes.get("/api/v1/courses/{course_id}/discussion_topics")
async def list_topics(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    announcements = bool(as_bool(ctx.param("only_announcements"), False))
    found = [t for t in store.course_topics(course.id) if t.is_announcement == announcements and _visible(ctx, course, t)]
    term = ctx.param("search_term")
    if term:
        needle = str(term).lower()
        found = [t for t in found if needle in t.title.lower() or needle in t.message.lower()]
    scopes = set(as_str_list(ctx.param("scope")))
    for scope in scopes:
        if scope == "locked":
            found = [t for t in found if t.locked]
        elif scope == "unlocked":
            found = [t for t in found if not t.locked]
        elif scope == "pinned":
            found = [t for t in found if t.pinned]
        elif scope == "unpinned":
            found = [t for t in found if not t.pinned]
    view = View(store, ctx.user, ctx.html_base)
    includes = ctx.includes()
    return ctx.paged(_order(ctx, found, announcements), lambda t: view.topic(t, includes))


@routes.get("/api/v1/courses/{course_id}/discussion_topics/{topic_id}")
async def get_topic(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    return View(ctx.store, ctx.user, ctx.html_base).topic(topic_of(ctx, course), ctx.includes())


def _apply(ctx: Ctx, t: DiscussionTopic) -> None:
    p = ctx.params
    if "title" in p:
        t.title = str(p["title"] or "")
    if "message" in p:
        t.message = str(p["message"] or "")
    if "discussion_type" in p and p["discussion_type"] in DISCUSSION_TYPES:
        t.discussion_type = str(p["discussion_type"])
    for key in ("require_initial_post", "pinned", "locked", "allow_rating", "only_graders_can_rate", "sort_by_rating",
                "podcast_enabled", "podcast_has_student_posts"):
        if key in p:
            setattr(t, key, bool(as_bool(p[key], False)))
    for key in ("delayed_post_at", "lock_at"):
        if key in p:
            setattr(t, key, time_field(p[key], key))
    if "published" in p and not t.is_announcement:
        t.published = bool(as_bool(p["published"], False))
    t.updated_at = ctx.store.now()
    if t.published and t.posted_at is None and not (t.delayed_post_at and ctx.store.now() < t.delayed_post_at):
        t.posted_at = ctx.store.now()
    if t.published and t.delayed_post_at and ctx.store.now() < t.delayed_post_at:
        t.posted_at = t.delayed_post_at


@routes.post("/api/v1/courses/{course_id}/discussion_topics")
async def create_topic(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    announcement = bool(as_bool(ctx.param("is_announcement"), False))
    staff = access.is_staff(store, ctx.user, course)
    if not staff and (announcement or not access.is_student(store, ctx.user, course)):
        raise errors.unauthorized()
    now = store.now()
    position = 1 + max((t.position for t in store.topics.values() if t.course_id == course.id), default=0)
    t = DiscussionTopic(id=store.next_id("discussion_topic"), course_id=course.id, user_id=ctx.user.id,
                        title="No Title", message="", created_at=now, updated_at=now, position=position,
                        is_announcement=announcement,
                        published=True if announcement or not staff else bool(as_bool(ctx.param("published"), False)))
    if not str(ctx.param("title") or "").strip():
        ctx.params["title"] = "No Title"
    _apply(ctx, t)
    if not t.discussion_type:
        t.discussion_type = "side_comment"
    store.topics[t.id] = t
    return View(store, ctx.user, ctx.html_base).topic(t)


@routes.put("/api/v1/courses/{course_id}/discussion_topics/{topic_id}")
async def update_topic(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    t = topic_of(ctx, course)
    if not access.is_staff(store, ctx.user, course) and t.user_id != ctx.user.id:
        raise errors.unauthorized()
    _apply(ctx, t)
    return View(store, ctx.user, ctx.html_base).topic(t)


@routes.delete("/api/v1/courses/{course_id}/discussion_topics/{topic_id}")
async def delete_topic(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    t = topic_of(ctx, course)
    if not access.is_staff(store, ctx.user, course) and t.user_id != ctx.user.id:
        raise errors.unauthorized()
    t.workflow_state = "deleted"
    return Reply(None, 204, raw=b"", content_type="text/plain")


# --- entries ---------------------------------------------------------------------------------------

@routes.get("/api/v1/courses/{course_id}/discussion_topics/{topic_id}/entries")
async def list_entries(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    t = topic_of(ctx, course)
    found = sorted((e for e in store.entries.values() if e.topic_id == t.id and e.parent_id is None
                    and e.workflow_state != "deleted"), key=lambda e: -e.id)
    view = View(store, ctx.user, ctx.html_base)
    return ctx.paged(found, view.entry)


def _post_entry(ctx: Ctx, parent_id: int | None):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    t = topic_of(ctx, course)
    if t.locked and not access.is_staff(store, ctx.user, course):
        raise errors.unauthorized()
    message = str(ctx.param("message") or "")
    if parent_id is not None:
        parent = store.entries.get(parent_id)
        if parent is None or parent.topic_id != t.id:
            raise errors.not_found()
    now = store.now()
    e = DiscussionEntry(store.next_id("discussion_entry"), t.id, ctx.user.id, message, now, now, parent_id)
    store.entries[e.id] = e
    t.last_reply_at = now
    return Reply(View(store, ctx.user, ctx.html_base).entry(e), 201)


@routes.post("/api/v1/courses/{course_id}/discussion_topics/{topic_id}/entries")
async def post_entry(ctx: Ctx):
    return _post_entry(ctx, None)


@routes.post("/api/v1/courses/{course_id}/discussion_topics/{topic_id}/entries/{entry_id}/replies")
async def post_reply(ctx: Ctx):
    return _post_entry(ctx, ctx.id("entry_id"))


@routes.get("/api/v1/courses/{course_id}/discussion_topics/{topic_id}/entries/{entry_id}/replies")
async def list_replies(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    t = topic_of(ctx, course)
    parent = ctx.id("entry_id")
    found = sorted((e for e in store.entries.values() if e.topic_id == t.id and e.parent_id == parent
                    and e.workflow_state != "deleted"), key=lambda e: -e.id)
    return ctx.paged(found, View(store, ctx.user, ctx.html_base).entry)


# --- /announcements --------------------------------------------------------------------------------

@routes.get("/api/v1/announcements")
async def announcements(ctx: Ctx):
    store = ctx.store
    codes = as_str_list(ctx.param("context_codes"))
    if not codes:
        raise errors.bad_request("Missing context_codes")
    now = store.now()
    start = parse_time(ctx.param("start_date")) if ctx.param("start_date") else now - timedelta(days=14)
    end = parse_time(ctx.param("end_date")) if ctx.param("end_date") else now
    # A blank or "null" date parses to None, and comparing with it fails (a server error, as it always has).
    assert start is not None and end is not None
    found = []
    view = View(store, ctx.user, ctx.html_base)
    for code in codes:
        cid = as_int(code[7:]) if code.startswith("course_") else None
        if cid is None:
            raise errors.bad_request(f"invalid context_codes: {code}")
        course = access.course_for_read(store, ctx.user, cid)
        for t in store.course_topics(course.id):
            if t.is_announcement and _visible(ctx, course, t) and t.posted_at and start <= t.posted_at <= end + timedelta(days=1):
                found.append(t)
    found.sort(key=lambda t: (-(t.posted_at or t.created_at).timestamp(), -t.id))

    def render(t: DiscussionTopic) -> dict:
        out = view.topic(t)
        out["context_code"] = f"course_{t.course_id}"
        return out
    return ctx.paged(found, render)
