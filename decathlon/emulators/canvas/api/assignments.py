"""Assignments and assignment groups of a course."""
from __future__ import annotations

from typing import Any

from decathlon.emulators.canvas import access, errors
from decathlon.emulators.canvas.api.courses import time_field
from decathlon.emulators.canvas.http import Ctx, Routes
from decathlon.emulators.canvas.model import Assignment, AssignmentGroup, Course
from decathlon.emulators.canvas.params import number
from decathlon.emulators.kit.params import as_bool, as_float, as_int, as_str_list
from decathlon.emulators.canvas.views import View

routes = Routes()

SUBMISSION_TYPES = ("online_quiz", "none", "on_paper", "discussion_topic", "external_tool", "online_upload",
                    "online_text_entry", "online_url", "media_recording", "student_annotation", "not_graded")
GRADING_TYPES = ("pass_fail", "percent", "letter_grade", "gpa_scale", "points", "not_graded")
BOOL_FIELDS = ("peer_reviews", "automatic_peer_reviews", "omit_from_final_grade", "grade_group_students_individually",
               "only_visible_to_overrides", "post_to_sis", "anonymous_grading")


def assignment_of(ctx: Ctx, course: Course, name: str = "assignment_id") -> Assignment:
    a = ctx.store.assignments.get(ctx.id(name))
    if a is None or a.course_id != course.id or a.workflow_state == "deleted":
        raise errors.not_found()
    if not a.published and not access.is_staff(ctx.store, ctx.user, course):
        raise errors.unauthorized()
    return a


def apply_fields(ctx: Ctx, course: Course, a: Assignment, fields: dict) -> None:
    store = ctx.store
    if "name" in fields:
        name = str(fields["name"] or "").strip()
        if not name:
            raise errors.invalid("name", "can't be blank", "blank")
        if len(name) > 255:
            raise errors.invalid("name", "is too long (maximum is 255 characters)", "too_long")
        a.name = name
    if "description" in fields:
        a.description = None if fields["description"] is None else str(fields["description"])
    for key in ("due_at", "lock_at", "unlock_at"):
        if key in fields:
            setattr(a, key, time_field(fields[key], key))
    if "points_possible" in fields:
        raw = fields["points_possible"]
        value = as_float(raw)
        if raw not in (None, "") and value is None:
            raise errors.invalid("points_possible", "is not a number", "not_a_number")
        a.points_possible = value
    if "grading_type" in fields:
        gt = str(fields["grading_type"])
        if gt not in GRADING_TYPES:
            raise errors.invalid("grading_type", "is not included in the list", "inclusion")
        a.grading_type = gt
    if "submission_types" in fields:
        types = as_str_list(fields["submission_types"]) or ["none"]
        if any(t not in SUBMISSION_TYPES for t in types):
            raise errors.invalid("submission_types", "Invalid submission types", "invalid")
        a.submission_types = types
    if "allowed_extensions" in fields:
        a.allowed_extensions = [x.strip().lstrip(".").lower() for x in as_str_list(fields["allowed_extensions"])
                                if x and x.strip()]
    if "allowed_attempts" in fields:
        a.allowed_attempts = as_int(fields["allowed_attempts"], -1) or -1
    for key in BOOL_FIELDS:
        if key in fields:
            setattr(a, key, bool(as_bool(fields[key], False)))
    if "group_category_id" in fields:
        a.group_category_id = as_int(fields["group_category_id"])
    if "integration_id" in fields:
        a.integration_id = None if fields["integration_id"] is None else str(fields["integration_id"])
    if "assignment_group_id" in fields:
        gid = as_int(fields["assignment_group_id"])
        group = store.groups.get(gid) if gid is not None else None
        if group is not None and group.course_id == course.id and group.workflow_state != "deleted":
            a.group_id = group.id
    if "position" in fields and as_int(fields["position"]) is not None:
        a.position = max(1, as_int(fields["position"]) or 1)
    a.updated_at = store.now()


def set_published(ctx: Ctx, a: Assignment, fields: dict) -> None:
    if "published" not in fields:
        return
    want = as_bool(fields["published"], False)
    if want and not a.published:
        ctx.store.publish_assignment(a)
    elif not want and a.published:
        if any(s.submitted_at for s in _subs(ctx, a)):
            raise errors.invalid("published", "Can't unpublish if there are student submissions", "unpublish")
        a.workflow_state = "unpublished"


def _subs(ctx: Ctx, a: Assignment):
    return [ctx.store.submissions[i] for (aid, _u), i in ctx.store.submission_index.items() if aid == a.id]


def _bucket(ctx: Ctx, a: Assignment, bucket: str) -> bool:
    now = ctx.store.now()
    sub = ctx.store.existing_submission(a.id, ctx.user.id)
    submitted = bool(sub and sub.submitted_at)
    if bucket == "past":
        return bool(a.due_at and a.due_at < now)
    if bucket == "overdue":
        return bool(a.due_at and a.due_at < now and not submitted)
    if bucket == "undated":
        return a.due_at is None
    if bucket == "ungraded":
        return bool(sub and sub.submitted_at and sub.score is None)
    if bucket == "unsubmitted":
        return not submitted
    if bucket == "upcoming":
        return bool(a.due_at and a.due_at >= now)
    if bucket == "future":
        return a.due_at is None or a.due_at >= now
    return True


@routes.get("/api/v1/courses/{course_id}/assignments")
async def list_assignments(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    staff = access.is_staff(store, ctx.user, course)
    found = [a for a in store.course_assignments(course.id) if staff or a.published]
    term = ctx.param("search_term")
    if term:
        found = [a for a in found if str(term).lower() in a.name.lower()]
    bucket = ctx.param("bucket")
    if bucket:
        found = [a for a in found if _bucket(ctx, a, str(bucket))]
    ids = {as_int(x) for x in as_str_list(ctx.param("assignment_ids"))}
    if ids:
        found = [a for a in found if a.id in ids]
    order = ctx.param("order_by")
    if order == "name":
        found.sort(key=lambda a: (a.name.lower(), a.id))
    elif order == "due_at":
        found.sort(key=lambda a: (a.due_at is None, a.due_at or store.now(), a.id))
    view = View(store, ctx.user, ctx.html_base)
    includes = ctx.includes()
    return ctx.paged(found, lambda a: view.assignment(a, includes))


@routes.get("/api/v1/users/{user_id}/courses/{course_id}/assignments")
async def user_course_assignments(ctx: Ctx):
    return await list_assignments(ctx)


@routes.get("/api/v1/courses/{course_id}/assignments/{assignment_id}")
async def get_assignment(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    a = assignment_of(ctx, course)
    return View(ctx.store, ctx.user, ctx.html_base).assignment(a, ctx.includes())


@routes.post("/api/v1/courses/{course_id}/assignments")
async def create_assignment(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    fields = ctx.param("assignment")
    if not isinstance(fields, dict):
        raise errors.invalid("name", "can't be blank", "blank")
    fields = dict(fields)
    if not str(fields.get("name") or "").strip():
        raise errors.invalid("name", "can't be blank", "blank")
    a = store.add_assignment(course, str(fields["name"]).strip(), as_int(fields.get("assignment_group_id")))
    try:
        apply_fields(ctx, course, a, fields)
        set_published(ctx, a, fields)
    except errors.ApiError:
        del store.assignments[a.id]
        raise
    return View(store, ctx.user, ctx.html_base).assignment(a)


@routes.put("/api/v1/courses/{course_id}/assignments/{assignment_id}")
async def update_assignment(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    a = assignment_of(ctx, course)
    fields = ctx.param("assignment") if isinstance(ctx.param("assignment"), dict) else {}
    apply_fields(ctx, course, a, fields)
    set_published(ctx, a, fields)
    if a.quiz_id is not None and a.quiz_id in store.quizzes:
        quiz = store.quizzes[a.quiz_id]
        quiz.title, quiz.due_at, quiz.lock_at, quiz.unlock_at = a.name, a.due_at, a.lock_at, a.unlock_at
    return View(store, ctx.user, ctx.html_base).assignment(a)


@routes.delete("/api/v1/courses/{course_id}/assignments/{assignment_id}")
async def delete_assignment(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    a = assignment_of(ctx, course)
    a.workflow_state = "deleted"
    a.updated_at = store.now()
    if a.quiz_id is not None and a.quiz_id in store.quizzes:
        store.quizzes[a.quiz_id].workflow_state = "deleted"
    out = View(store, ctx.user, ctx.html_base).assignment(a)
    out["workflow_state"] = "deleted"
    return out


# --- assignment groups -----------------------------------------------------------------------------

def group_json(ctx: Ctx, g: AssignmentGroup, includes: set[str], staff: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"id": g.id, "name": g.name, "position": g.position, "group_weight": number(g.group_weight),
                           "sis_source_id": None, "integration_data": {}, "rules": {}}
    if "assignments" in includes:
        view = View(ctx.store, ctx.user, ctx.html_base)
        out["assignments"] = [view.assignment(a) for a in ctx.store.course_assignments(g.course_id)
                              if a.group_id == g.id and (staff or a.published)]
    return out


def group_of(ctx: Ctx, course: Course) -> AssignmentGroup:
    g = ctx.store.groups.get(ctx.id("group_id"))
    if g is None or g.course_id != course.id or g.workflow_state == "deleted":
        raise errors.not_found()
    return g


@routes.get("/api/v1/courses/{course_id}/assignment_groups")
async def list_groups(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    staff = access.is_staff(store, ctx.user, course)
    groups = sorted((g for g in store.groups.values() if g.course_id == course.id and g.workflow_state != "deleted"),
                    key=lambda g: (g.position, g.id))
    includes = ctx.includes()
    return ctx.paged(groups, lambda g: group_json(ctx, g, includes, staff))


@routes.get("/api/v1/courses/{course_id}/assignment_groups/{group_id}")
async def get_group(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    return group_json(ctx, group_of(ctx, course), ctx.includes(), access.is_staff(ctx.store, ctx.user, course))


@routes.post("/api/v1/courses/{course_id}/assignment_groups")
async def create_group(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    position = 1 + max((g.position for g in store.groups.values() if g.course_id == course.id), default=0)
    g = AssignmentGroup(store.next_id("assignment_group"), course.id, str(ctx.param("name") or "Assignments"),
                        as_int(ctx.param("position"), position) or position,
                        as_float(ctx.param("group_weight"), 0.0) or 0.0)
    store.groups[g.id] = g
    return group_json(ctx, g, set(), True)


@routes.put("/api/v1/courses/{course_id}/assignment_groups/{group_id}")
async def update_group(ctx: Ctx):
    course = access.course_for_manage(ctx.store, ctx.user, ctx.id("course_id"))
    g = group_of(ctx, course)
    if ctx.param("name") is not None:
        g.name = str(ctx.param("name"))
    if ctx.param("position") is not None:
        g.position = as_int(ctx.param("position"), g.position) or g.position
    if ctx.param("group_weight") is not None:
        g.group_weight = as_float(ctx.param("group_weight"), g.group_weight) or 0.0
    return group_json(ctx, g, set(), True)


@routes.delete("/api/v1/courses/{course_id}/assignment_groups/{group_id}")
async def delete_group(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    g = group_of(ctx, course)
    target = as_int(ctx.param("move_assignments_to"))
    for a in store.course_assignments(course.id):
        if a.group_id == g.id:
            if target in store.groups and store.groups[target].course_id == course.id:
                a.group_id = target
            else:
                a.workflow_state = "deleted"
    g.workflow_state = "deleted"
    return group_json(ctx, g, set(), True)
