"""Enrollments: list a course's or a user's, enroll (students, teachers, TAs...), conclude/delete, reactivate."""
from __future__ import annotations

from decathlon.emulators.canvas import access, errors
from decathlon.emulators.canvas.api.users import user_of
from decathlon.emulators.canvas.http import Ctx, Routes
from decathlon.emulators.canvas.model import ROLES, Course, Enrollment
from decathlon.emulators.kit.params import as_bool, as_int, as_str_list
from decathlon.emulators.canvas.views import View

routes = Routes()

DEFAULT_STATES = ("active", "invited", "creation_pending")
TASKS = {"conclude": "completed", "delete": "deleted", "inactivate": "inactive", "deactivate": "inactive"}
ROLE_BY_ID = {rid: t for t, (rid, _short) in ROLES.items()}


def _filtered(ctx: Ctx, enrollments: list[Enrollment]) -> list[Enrollment]:
    types = set(as_str_list(ctx.param("type")))
    roles = set(as_str_list(ctx.param("role")))
    states = set(as_str_list(ctx.param("state")))
    user_id = ctx.param("user_id")
    out = []
    for e in enrollments:
        if types and e.type not in types:
            continue
        if roles and e.type not in roles:
            continue
        if states:
            if e.workflow_state not in states and not ("current_and_invited" in states and e.workflow_state in DEFAULT_STATES):
                continue
        elif e.workflow_state not in DEFAULT_STATES:
            continue
        if user_id is not None and str(e.user_id) != str(user_id) and not (user_id == "self" and e.user_id == ctx.user.id):
            continue
        out.append(e)
    return out


def _sorted(store, enrollments: list[Enrollment]) -> list[Enrollment]:
    """Canvas lists a course's enrollments by type, then the user's sortable name."""
    def key(e: Enrollment):
        u = store.users.get(e.user_id)
        return (e.type, u.sortable_name.lower() if u else "", e.id)
    return sorted(enrollments, key=key)


@routes.get("/api/v1/courses/{course_id}/enrollments")
async def course_enrollments(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    found = _filtered(ctx, store.course_enrollments(course.id))
    if not access.is_staff(store, ctx.user, course):
        found = [e for e in found if e.workflow_state == "active" or e.user_id == ctx.user.id]
    view = View(store, ctx.user, ctx.html_base)
    return ctx.paged(_sorted(store, found), lambda e: view.enrollment(e, with_user=True))


@routes.get("/api/v1/sections/{section_id}/enrollments")
async def section_enrollments(ctx: Ctx):
    store = ctx.store
    section = store.sections.get(ctx.id("section_id"))
    if section is None:
        raise errors.not_found()
    access.course_for_read(store, ctx.user, section.course_id)
    found = [e for e in _filtered(ctx, store.course_enrollments(section.course_id)) if e.section_id == section.id]
    view = View(store, ctx.user, ctx.html_base)
    return ctx.paged(_sorted(store, found), lambda e: view.enrollment(e, with_user=True))


@routes.get("/api/v1/users/{user_id}/enrollments")
async def user_enrollments(ctx: Ctx):
    store = ctx.store
    user = user_of(ctx)
    if user.id != ctx.user.id and not ctx.user.admin:
        raise errors.unauthorized()
    found = [e for e in store.enrollments.values() if e.user_id == user.id
             and store.courses.get(e.course_id) is not None and store.courses[e.course_id].workflow_state != "deleted"]
    view = View(store, ctx.user, ctx.html_base)
    return ctx.paged(sorted(_filtered(ctx, found), key=lambda e: e.id), lambda e: view.enrollment(e, with_user=True))


def _enroll(ctx: Ctx, course: Course, section_id: int | None):
    store = ctx.store
    if not access.is_staff(store, ctx.user, course):
        raise errors.unauthorized()
    fields = ctx.param("enrollment")
    if not isinstance(fields, dict) or not fields:
        raise errors.ApiError(403, {"message": "No parameters given"})
    if fields.get("user_id") in (None, ""):
        raise errors.ApiError(403, {"message": "Can't create an enrollment without a user. Include enrollment[user_id] "
                                               "to create an enrollment"})
    if course.workflow_state == "completed":
        raise errors.ApiError(403, {"message": "Can't add an enrollment to a concluded course."})
    type_ = fields.get("type")
    role = fields.get("role")
    role_id = as_int(fields.get("role_id"))
    if not type_ and role_id is not None:
        type_ = ROLE_BY_ID.get(role_id)
        if type_ is None:
            raise errors.ApiError(403, {"message": "Invalid role"})
    if not type_ and role:
        type_ = role if role in ROLES else None
        if type_ is None:
            raise errors.ApiError(403, {"message": "Invalid role"})
    type_ = str(type_ or "StudentEnrollment")
    if type_ not in ROLES:
        raise errors.ApiError(403, {"message": "Invalid type"})
    raw_user = str(fields["user_id"])
    user = ctx.user if raw_user == "self" else store.users.get(as_int(raw_user, -1) or -1)
    if user is None:
        raise errors.not_found()
    state = str(fields.get("enrollment_state") or "")
    if state not in ("active", "invited", "inactive"):
        state = "invited"
    if state == "invited" and course.workflow_state == "unpublished":
        state = "creation_pending"
    section = as_int(fields.get("course_section_id")) or section_id
    if section is not None:
        sec = store.sections.get(section)
        if sec is None or sec.course_id != course.id:
            raise errors.not_found()
    limit = bool(as_bool(fields.get("limit_privileges_to_course_section"), False))
    e = store.enroll(course, user, type_, state, section, limit)
    return View(store, ctx.user, ctx.html_base).enrollment(e)


@routes.post("/api/v1/courses/{course_id}/enrollments")
async def enroll(ctx: Ctx):
    course = ctx.store.courses.get(ctx.id("course_id"))
    if course is None or course.workflow_state == "deleted":
        raise errors.not_found()
    return _enroll(ctx, course, None)


@routes.post("/api/v1/sections/{section_id}/enrollments")
async def enroll_in_section(ctx: Ctx):
    section = ctx.store.sections.get(ctx.id("section_id"))
    if section is None:
        raise errors.not_found()
    course = ctx.store.courses.get(section.course_id)
    if course is None or course.workflow_state == "deleted":
        raise errors.not_found()
    return _enroll(ctx, course, section.id)


def _enrollment_of(ctx: Ctx) -> tuple[Course, Enrollment]:
    store = ctx.store
    course = store.courses.get(ctx.id("course_id"))
    e = store.enrollments.get(ctx.id("enrollment_id"))
    if course is None or course.workflow_state == "deleted" or e is None or e.course_id != course.id:
        raise errors.not_found()
    return course, e


@routes.delete("/api/v1/courses/{course_id}/enrollments/{enrollment_id}")
async def unenroll(ctx: Ctx):
    course, e = _enrollment_of(ctx)
    if not access.is_staff(ctx.store, ctx.user, course):
        raise errors.unauthorized()
    task = str(ctx.param("task", "conclude"))
    if task not in TASKS:
        raise errors.bad_request(f"{task} is not a valid task")
    if e.workflow_state == "deleted":
        raise errors.not_found()
    e.workflow_state = TASKS[task]
    e.updated_at = ctx.store.now()
    return View(ctx.store, ctx.user, ctx.html_base).enrollment(e)


@routes.put("/api/v1/courses/{course_id}/enrollments/{enrollment_id}/reactivate")
async def reactivate(ctx: Ctx):
    course, e = _enrollment_of(ctx)
    if not access.is_staff(ctx.store, ctx.user, course):
        raise errors.unauthorized()
    if e.workflow_state != "inactive":
        raise errors.bad_request("enrollment not inactive")
    e.workflow_state = "active"
    e.updated_at = ctx.store.now()
    return View(ctx.store, ctx.user, ctx.html_base).enrollment(e)


@routes.post("/api/v1/courses/{course_id}/enrollments/{enrollment_id}/accept")
async def accept(ctx: Ctx):
    _course, e = _enrollment_of(ctx)
    if e.user_id != ctx.user.id:
        raise errors.unauthorized()
    if e.workflow_state in ("invited", "creation_pending"):
        e.workflow_state = "active"
    return {"success": True}


@routes.post("/api/v1/courses/{course_id}/enrollments/{enrollment_id}/reject")
async def reject(ctx: Ctx):
    _course, e = _enrollment_of(ctx)
    if e.user_id != ctx.user.id:
        raise errors.unauthorized()
    if e.workflow_state in ("invited", "creation_pending"):
        e.workflow_state = "rejected"
    return {"success": True}
