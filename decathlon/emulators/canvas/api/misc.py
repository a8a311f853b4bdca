"""The smaller read-mostly endpoints the canvas MCP server exposes: calendar and upcoming events,
dashboard cards, favourites, tabs, rubrics (none exist), course activity."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from decathlon.emulators.canvas import access, errors
from decathlon.emulators.canvas.api.courses import time_field, visible_courses
from decathlon.emulators.canvas.clock import iso
from decathlon.emulators.canvas.http import Ctx, Routes
from decathlon.emulators.canvas.model import Assignment, CalendarEvent
from decathlon.emulators.kit.params import as_bool, as_int, as_str_list
from decathlon.emulators.canvas.views import View

routes = Routes()


def assignment_event(ctx: Ctx, a: Assignment, view: View) -> dict[str, Any]:
    return {"id": f"assignment_{a.id}", "title": a.name, "start_at": iso(a.due_at), "end_at": iso(a.due_at),
            "all_day": False, "all_day_date": a.due_at.date().isoformat() if a.due_at else None,
            "created_at": iso(a.created_at), "updated_at": iso(a.updated_at), "workflow_state": "published",
            "context_code": f"course_{a.course_id}", "type": "assignment",
            "html_url": f"{ctx.html_base}/courses/{a.course_id}/assignments/{a.id}", "assignment": view.assignment(a)}


def event_json(ctx: Ctx, e: CalendarEvent) -> dict[str, Any]:
    return {"id": e.id, "title": e.title, "start_at": iso(e.start_at), "end_at": iso(e.end_at),
            "description": e.description, "location_name": e.location_name, "location_address": e.location_address,
            "context_code": e.context_code, "workflow_state": e.workflow_state, "all_day": e.all_day,
            "created_at": iso(e.created_at), "updated_at": iso(e.updated_at), "type": "event",
            "html_url": f"{ctx.html_base}/calendar?event_id={e.id}&include_contexts={e.context_code}"}


def _contexts(ctx: Ctx) -> list[int]:
    codes = as_str_list(ctx.param("context_codes"))
    mine = [c.id for c in visible_courses(ctx, ctx.user.id)]
    if not codes:
        return mine
    out = []
    for code in codes:
        cid = as_int(code[7:]) if code.startswith("course_") else None
        if cid is not None:
            access.course_for_read(ctx.store, ctx.user, cid)
            out.append(cid)
    return out


@routes.get("/api/v1/calendar_events")
async def calendar_events(ctx: Ctx):
    store = ctx.store
    now = store.now()
    all_events = bool(as_bool(ctx.param("all_events"), False))
    start = time_field(ctx.param("start_date"), "start_date") if ctx.param("start_date") else None
    end = time_field(ctx.param("end_date"), "end_date") if ctx.param("end_date") else None
    if not all_events and start is None and end is None:
        start = now.replace(hour=0, minute=0, second=0, microsecond=0)
        end = start + timedelta(days=1)
    courses = set(_contexts(ctx))
    view = View(store, ctx.user, ctx.html_base)

    def in_range(when) -> bool:
        if all_events:
            return True
        if when is None:
            return bool(as_bool(ctx.param("undated"), False))
        return (start is None or when >= start) and (end is None or when < end + timedelta(days=1))
    if str(ctx.param("type") or "event") == "assignment":
        found = [a for cid in sorted(courses) for a in store.course_assignments(cid)
                 if a.published and in_range(a.due_at)]
        found.sort(key=lambda a: (a.due_at is None, a.due_at or now, a.id))
        return ctx.paged(found, lambda a: assignment_event(ctx, a, view))
    found_events = [e for e in store.events.values() if e.workflow_state != "deleted"
                    and e.context_code in {f"course_{c}" for c in courses} | {f"user_{ctx.user.id}"}
                    and in_range(e.start_at)]
    found_events.sort(key=lambda e: (e.start_at is None, e.start_at or now, e.id))
    return ctx.paged(found_events, lambda e: event_json(ctx, e))


@routes.post("/api/v1/calendar_events")
async def create_event(ctx: Ctx):
    store = ctx.store
    fields = ctx.param("calendar_event") if isinstance(ctx.param("calendar_event"), dict) else {}
    code = str(fields.get("context_code") or "")
    if code.startswith("course_"):
        cid = as_int(code[7:])
        if cid is None:
            raise errors.not_found()
        access.course_for_manage(store, ctx.user, cid)
    elif code != f"user_{ctx.user.id}":
        raise errors.invalid("context_code", "is invalid", "invalid")
    now = store.now()
    e = CalendarEvent(store.next_id("calendar_event"), code, str(fields.get("title") or ""), now, now,
                      time_field(fields.get("start_at"), "start_at"), time_field(fields.get("end_at"), "end_at"),
                      fields.get("description"), fields.get("location_name"), fields.get("location_address"),
                      bool(as_bool(fields.get("all_day"), False)))
    store.events[e.id] = e
    return event_json(ctx, e)


@routes.get("/api/v1/users/{user_id}/upcoming_events")
async def upcoming(ctx: Ctx):
    if ctx.request.match_info["user_id"] not in ("self", str(ctx.user.id)):
        raise errors.unauthorized()
    store = ctx.store
    now = store.now()
    view = View(store, ctx.user, ctx.html_base)
    out = []
    for course in visible_courses(ctx, ctx.user.id):
        for a in store.course_assignments(course.id):
            if a.published and a.due_at and now <= a.due_at <= now + timedelta(weeks=1):
                out.append((a.due_at, assignment_event(ctx, a, view)))
    for e in store.events.values():
        if e.start_at and now <= e.start_at <= now + timedelta(weeks=1) and e.workflow_state != "deleted":
            out.append((e.start_at, event_json(ctx, e)))
    out.sort(key=lambda pair: pair[0])
    limit = as_int(ctx.param("limit"))
    items = [x for _when, x in out]
    return items[:limit] if limit else items


@routes.get("/api/v1/dashboard/dashboard_cards")
async def dashboard_cards(ctx: Ctx):
    out: list[dict[str, Any]] = []
    for n, course in enumerate(visible_courses(ctx, ctx.user.id)):
        roles = ctx.store.user_enrollments(ctx.user.id, course.id)
        kind = {"StudentEnrollment": "StudentEnrollment", "TeacherEnrollment": "TeacherEnrollment"}.get(
            roles[0].type if roles else "", roles[0].type if roles else "StudentEnrollment")
        out.append({"longName": f"{course.name} - {course.course_code}" if course.course_code != course.name
                    else course.name, "shortName": course.name, "originalName": course.name,
                    "courseCode": course.course_code, "assetString": f"course_{course.id}",
                    "href": f"/courses/{course.id}", "term": None, "subtitle": f"enrolled as: {kind.replace('Enrollment', '')}",
                    "enrollmentType": kind, "observee": None, "id": course.id, "isFavorited": True,
                    "image": None, "color": None, "position": n, "links": [], "published": course.workflow_state == "available",
                    "canChangeCoursePublishState": access.is_staff(ctx.store, ctx.user, course),
                    "defaultView": course.default_view, "pagesUrl": f"{ctx.html_base}/courses/{course.id}/pages",
                    "frontPageTitle": None})
    return out


@routes.get("/api/v1/users/self/favorites/courses")
async def favorite_courses(ctx: Ctx):
    view = View(ctx.store, ctx.user, ctx.html_base)
    includes = ctx.includes()
    return ctx.paged(visible_courses(ctx, ctx.user.id), lambda c: view.course(c, includes))


@routes.get("/api/v1/courses/{course_id}/tabs")
async def tabs(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    names = [("home", "Home", ""), ("announcements", "Announcements", "announcements"),
             ("assignments", "Assignments", "assignments"), ("discussions", "Discussions", "discussion_topics"),
             ("grades", "Grades", "grades"), ("people", "People", "users"), ("pages", "Pages", "wiki"),
             ("files", "Files", "files"), ("syllabus", "Syllabus", "assignments/syllabus"),
             ("quizzes", "Quizzes", "quizzes"), ("modules", "Modules", "modules")]
    return [{"id": tid, "html_url": f"/courses/{course.id}/{path}".rstrip("/"),
             "full_url": f"{ctx.html_base}/courses/{course.id}/{path}".rstrip("/"), "position": n, "label": label,
             "type": "internal"} for n, (tid, label, path) in enumerate(names, start=1)]


@routes.get("/api/v1/courses/{course_id}/rubrics")
async def rubrics(ctx: Ctx):
    access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    return ctx.paged([])


@routes.get("/api/v1/courses/{course_id}/rubrics/{rubric_id}")
async def rubric(ctx: Ctx):
    access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    raise errors.not_found()


@routes.get("/api/v1/courses/{course_id}/activity_stream")
async def course_activity(ctx: Ctx):
    access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    return ctx.paged([])


@routes.get("/api/v1/courses/{course_id}/activity_stream/summary")
async def course_activity_summary(ctx: Ctx):
    access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    return []


@routes.get("/api/v1/courses/{course_id}/todo")
async def course_todo(ctx: Ctx):
    access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    return []

