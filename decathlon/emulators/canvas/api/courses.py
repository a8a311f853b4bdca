"""Courses: the caller's courses, the account's courses, create/update/publish/conclude/delete, settings,
the people and sections of a course."""
from __future__ import annotations

from typing import Any

from decathlon.emulators.canvas import access, errors
from decathlon.emulators.canvas.api.users import account_of, search_term
from decathlon.emulators.canvas.clock import parse_time
from decathlon.emulators.canvas.http import Ctx, Routes
from decathlon.emulators.canvas.model import Course
from decathlon.emulators.kit.params import as_bool, as_int, as_str_list
from decathlon.emulators.canvas.views import View

routes = Routes()

EVENTS = ("offer", "claim", "conclude", "delete", "undelete")
TEXT_FIELDS = ("name", "course_code", "license", "public_description", "syllabus_body", "time_zone", "default_view",
               "course_format", "integration_id")
BOOL_FIELDS = ("is_public", "is_public_to_auth_users", "public_syllabus", "public_syllabus_to_auth",
               "allow_student_wiki_edits", "allow_wiki_comments", "allow_student_forum_attachments", "open_enrollment",
               "self_enrollment", "restrict_enrollments_to_course_dates", "hide_final_grades",
               "apply_assignment_group_weights")
DEFAULT_VIEWS = ("feed", "wiki", "modules", "syllabus", "assignments")
TYPE_NAMES = {"student": "StudentEnrollment", "teacher": "TeacherEnrollment", "ta": "TaEnrollment",
              "observer": "ObserverEnrollment", "designer": "DesignerEnrollment"}


def time_field(value: Any, attribute: str):
    try:
        return parse_time(value)
    except ValueError:
        raise errors.invalid(attribute, "invalid_datetime") from None


def apply_course_fields(ctx: Ctx, course: Course, fields: dict) -> None:
    for key in TEXT_FIELDS:
        if key in fields:
            value = fields[key]
            setattr(course, key, None if value is None else str(value))
    if "default_view" in fields and course.default_view not in DEFAULT_VIEWS:
        raise errors.invalid("default_view", "Home page is not valid", "inclusion")
    for key in BOOL_FIELDS:
        if key in fields:
            setattr(course, key, bool(as_bool(fields[key], False)))
    if "start_at" in fields:
        course.start_at = time_field(fields["start_at"], "start_at")
    for key in ("end_at", "conclude_at"):
        if key in fields:
            course.end_at = time_field(fields[key], key)
    if "sis_course_id" in fields:
        sis = fields["sis_course_id"]
        sis = None if sis in (None, "") else str(sis)
        if sis and any(c.sis_course_id == sis and c.id != course.id for c in ctx.store.courses.values()):
            raise errors.invalid("sis_source_id", f'SIS ID "{sis}" is already in use', "taken")
        course.sis_course_id = sis
    if "grading_standard_id" in fields:
        course.grading_standard_id = as_int(fields["grading_standard_id"])
    if "term_id" in fields or "enrollment_term_id" in fields:
        term = as_int(fields.get("term_id", fields.get("enrollment_term_id")), 1)
        course.enrollment_term_id = term if term == 1 else course.enrollment_term_id


def apply_event(ctx: Ctx, course: Course, event: str) -> None:
    now = ctx.store.now()
    if event == "offer":
        if course.workflow_state == "deleted":
            raise errors.bad_request("course is deleted")
        course.workflow_state = "available"
        if course.start_at is None:
            course.start_at = now
    elif event == "claim":
        if course.workflow_state == "available":
            course.workflow_state = "unpublished"
    elif event == "conclude":
        course.workflow_state = "completed"
    elif event == "delete":
        course.workflow_state = "deleted"
    elif event == "undelete" and course.workflow_state == "deleted":
        course.workflow_state = "unpublished"


def course_includes(ctx: Ctx) -> set[str]:
    return ctx.includes()


# --- the caller's courses ------------------------------------------------------------------------

@routes.get("/api/v1/courses")
async def my_courses(ctx: Ctx):
    return ctx.paged(visible_courses(ctx, ctx.user.id), course_renderer(ctx))


@routes.get("/api/v1/users/{user_id}/courses")
async def user_courses(ctx: Ctx):
    from decathlon.emulators.canvas.api.users import user_of
    user = user_of(ctx)
    if user.id != ctx.user.id and not ctx.user.admin:
        raise errors.unauthorized()
    return ctx.paged(visible_courses(ctx, user.id), course_renderer(ctx))


def course_renderer(ctx: Ctx):
    view = View(ctx.store, ctx.user, ctx.html_base)
    includes = course_includes(ctx)
    return lambda c: view.course(c, includes)


def visible_courses(ctx: Ctx, user_id: int) -> list[Course]:
    store = ctx.store
    states = set(as_str_list(ctx.param("state")))
    enrollment_state = ctx.param("enrollment_state")
    etype = ctx.param("enrollment_type")
    wanted_type = TYPE_NAMES.get(str(etype).lower()) if etype else None
    found: dict[int, Course] = {}
    for e in store.enrollments.values():
        if e.user_id != user_id:
            continue
        course = store.courses.get(e.course_id)
        if course is None:
            continue
        if wanted_type and e.type != wanted_type:
            continue
        if enrollment_state == "active":
            if e.workflow_state != "active" or course.workflow_state == "completed":
                continue
        elif enrollment_state == "invited_or_pending":
            if e.workflow_state not in ("invited", "creation_pending"):
                continue
        elif enrollment_state == "completed":
            if e.workflow_state != "completed" and course.workflow_state != "completed":
                continue
        elif e.workflow_state not in ("active", "invited", "creation_pending"):
            continue
        if states:
            if course.workflow_state not in states:
                continue
        elif e.type in ("StudentEnrollment", "ObserverEnrollment"):
            if course.workflow_state != "available":
                continue
        elif course.workflow_state == "deleted":
            continue
        found[course.id] = course
    return sorted(found.values(), key=lambda c: (c.name.lower(), c.id))


# --- the account's courses -----------------------------------------------------------------------

@routes.get("/api/v1/accounts/{account_id}/courses")
async def account_courses(ctx: Ctx):
    account_of(ctx)
    access.require_admin(ctx.user)
    store = ctx.store
    term = search_term(ctx)
    states = set(as_str_list(ctx.param("state")))
    courses = [c for c in store.courses.values()]
    if "all" in states:
        pass
    elif states:
        mapped = {"created": "unpublished", "claimed": "unpublished"}
        courses = [c for c in courses if c.workflow_state in {mapped.get(s, s) for s in states}]
    else:
        courses = [c for c in courses if c.workflow_state != "deleted"]
    published = as_bool(ctx.param("published"))
    if published is not None:
        courses = [c for c in courses if (c.workflow_state == "available") == published]
    completed = as_bool(ctx.param("completed"))
    if completed is not None:
        courses = [c for c in courses if (c.workflow_state == "completed") == completed]
    with_enrollments = as_bool(ctx.param("with_enrollments"))
    if with_enrollments is not None:
        courses = [c for c in courses if bool(store.course_enrollments(c.id, ("active", "invited", "creation_pending")))
                   == with_enrollments]
    types = [TYPE_NAMES.get(t.lower(), t) for t in as_str_list(ctx.param("enrollment_type"))]
    if types:
        courses = [c for c in courses if any(e.type in types for e in store.course_enrollments(c.id))]
    teachers = {as_int(t) for t in as_str_list(ctx.param("by_teachers"))}
    if teachers:
        courses = [c for c in courses if any(e.type == "TeacherEnrollment" and e.user_id in teachers
                                             for e in store.course_enrollments(c.id))]
    if term:
        t = term.lower()
        courses = [c for c in courses if t in c.name.lower() or t in c.course_code.lower()
                   or (c.sis_course_id or "").lower() == t or str(c.id) == term]
    sort = str(ctx.param("sort", ""))
    if sort == "course_name":
        courses.sort(key=lambda c: (c.name.lower(), c.id))
    elif sort == "sis_course_id":
        courses.sort(key=lambda c: ((c.sis_course_id or "").lower(), c.id))
    else:
        courses.sort(key=lambda c: c.id)
    if str(ctx.param("order", "asc")).lower() == "desc":
        courses.reverse()
    view = View(ctx.store, ctx.user, ctx.html_base)
    includes = course_includes(ctx)
    return ctx.paged(courses, lambda c: view.course(c, includes, with_enrollments=False))


@routes.post("/api/v1/accounts/{account_id}/courses")
async def create_course(ctx: Ctx):
    account = account_of(ctx)
    access.require_admin(ctx.user)
    fields = ctx.param("course") if isinstance(ctx.param("course"), dict) else {}
    name = str(fields.get("name") or "Unnamed Course")
    code = str(fields.get("course_code") or "Unnamed")
    store = ctx.store
    course = store.add_course(name, code, account.id)
    try:
        apply_course_fields(ctx, course, {k: v for k, v in fields.items() if k not in ("name", "course_code")})
    except errors.ApiError:
        del store.courses[course.id]
        raise
    if as_bool(ctx.param("offer"), False):
        apply_event(ctx, course, "offer")
    if as_bool(ctx.param("enroll_me"), False):
        store.enroll(course, ctx.user, "TeacherEnrollment", "active")
    return View(store, ctx.user, ctx.html_base).course_created(course)


# --- one course ------------------------------------------------------------------------------------

@routes.get("/api/v1/courses/{course_id}")
async def get_course(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    return View(ctx.store, ctx.user, ctx.html_base).course(course, course_includes(ctx), single=True)


@routes.put("/api/v1/courses/{course_id}")
async def update_course(ctx: Ctx):
    course = ctx.store.courses.get(ctx.id("course_id"))
    if course is None or course.workflow_state == "deleted":
        raise errors.not_found()
    if not access.is_staff(ctx.store, ctx.user, course):
        raise errors.unauthorized()
    fields = ctx.param("course") if isinstance(ctx.param("course"), dict) else {}
    event = fields.get("event")
    if event is not None and event not in EVENTS:
        raise errors.bad_request(f"invalid event {event}")
    if event in ("delete", "undelete") and not ctx.user.admin:
        raise errors.unauthorized()
    apply_course_fields(ctx, course, fields)
    if event:
        apply_event(ctx, course, str(event))
    if "offer" in ctx.params and as_bool(ctx.param("offer"), False):
        apply_event(ctx, course, "offer")
    view = View(ctx.store, ctx.user, ctx.html_base)
    out = view.course(course, with_enrollments=False, single=True)
    # the update answer leads with the account ids, as Canvas's does
    lead = {k: out[k] for k in ("id", "account_id", "root_account_id", "start_at", "name", "uuid")}
    return {**lead, **{k: v for k, v in out.items() if k not in lead}}


@routes.delete("/api/v1/courses/{course_id}")
async def delete_course(ctx: Ctx):
    course = ctx.store.courses.get(ctx.id("course_id"))
    if course is None or course.workflow_state == "deleted":
        raise errors.not_found()
    event = ctx.param("event")
    if event not in ("delete", "conclude"):
        raise errors.ApiError(400, {"message": "Only 'delete' and 'conclude' events are allowed."})
    if event == "delete" and not ctx.user.admin:
        raise errors.unauthorized()
    if event == "conclude" and not access.is_staff(ctx.store, ctx.user, course):
        raise errors.unauthorized()
    apply_event(ctx, course, str(event))
    return {str(event): True}


@routes.get("/api/v1/courses/{course_id}/settings")
async def get_settings(ctx: Ctx):
    course = access.course_for_manage(ctx.store, ctx.user, ctx.id("course_id"))
    return settings_json(course)


@routes.put("/api/v1/courses/{course_id}/settings")
async def put_settings(ctx: Ctx):
    course = access.course_for_manage(ctx.store, ctx.user, ctx.id("course_id"))
    for key, value in ctx.params.items():
        if key in SETTING_DEFAULTS:
            default = SETTING_DEFAULTS[key]
            course.settings[key] = as_bool(value, default) if isinstance(default, bool) else value
    return settings_json(course)


SETTING_DEFAULTS: dict[str, Any] = {
    "allow_final_grade_override": False, "allow_student_discussion_topics": True,
    "allow_student_forum_attachments": False, "allow_student_discussion_editing": True,
    "allow_student_organized_groups": True, "allow_student_discussion_reporting": True,
    "allow_student_anonymous_discussion_topics": False, "filter_speed_grader_by_student_group": False,
    "grading_standard_enabled": False, "grading_standard_id": None, "grade_passback_setting": None,
    "hide_final_grades": False, "hide_distribution_graphs": False, "hide_sections_on_course_users_page": False,
    "lock_all_announcements": False, "usage_rights_required": False, "restrict_student_past_view": False,
    "restrict_student_future_view": False, "show_announcements_on_home_page": False,
    "home_page_announcement_limit": 3, "syllabus_course_summary": True, "homeroom_course": False,
    "default_due_time": "23:59:59", "conditional_release": False,
}


def settings_json(course: Course) -> dict:
    out = {k: course.settings.get(k, v) for k, v in SETTING_DEFAULTS.items()}
    out["allow_student_forum_attachments"] = course.allow_student_forum_attachments
    out["hide_final_grades"] = course.hide_final_grades
    return out


# --- people and sections -----------------------------------------------------------------------

def course_people(ctx: Ctx, course: Course) -> list:
    store = ctx.store
    states = set(as_str_list(ctx.param("enrollment_state"))) or {"active", "invited", "creation_pending"}
    types = {TYPE_NAMES.get(t.lower(), t) for t in as_str_list(ctx.param("enrollment_type"))}
    ids = set()
    for e in store.course_enrollments(course.id):
        if e.workflow_state not in states and not (e.workflow_state == "creation_pending" and "invited" in states):
            continue
        if types and e.type not in types:
            continue
        ids.add(e.user_id)
    only = {as_int(x) for x in as_str_list(ctx.param("user_ids"))}
    if ctx.param("user_id") is not None:
        only.add(as_int(ctx.param("user_id")))
    if only:
        ids &= only
    users = [store.users[i] for i in ids if i in store.users]
    term = search_term(ctx)
    if term:
        from decathlon.emulators.canvas.api.users import matches_user
        users = [u for u in users if matches_user(u, term)]
    return sorted(users, key=lambda u: (u.sortable_name.lower(), u.id))


@routes.get("/api/v1/courses/{course_id}/users")
async def course_users(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    view = View(ctx.store, ctx.user, ctx.html_base)
    includes = ctx.includes()
    return ctx.paged(course_people(ctx, course), lambda u: view.user(u, includes, course))


@routes.get("/api/v1/courses/{course_id}/search_users")
async def course_search_users(ctx: Ctx):
    return await course_users(ctx)


@routes.get("/api/v1/courses/{course_id}/students")
async def course_students(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    view = View(ctx.store, ctx.user, ctx.html_base)
    return [view.user(u, course=course) for u in ctx.store.students(course.id)]


@routes.get("/api/v1/courses/{course_id}/users/{user_id}")
async def course_user(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    uid = ctx.id("user_id")
    if not any(e.user_id == uid for e in ctx.store.course_enrollments(course.id)):
        raise errors.not_found()
    return View(ctx.store, ctx.user, ctx.html_base).user(ctx.store.users[uid], ctx.includes(), course)


def section_json(ctx: Ctx, section, includes: set[str]) -> dict:
    out: dict[str, Any] = {"id": section.id, "course_id": section.course_id, "name": section.name,
                           "start_at": None, "end_at": None, "created_at": None,
                           "restrict_enrollments_to_section_dates": None, "nonxlist_course_id": None,
                           "sis_section_id": None, "sis_course_id": None, "integration_id": None, "sis_import_id": None}
    if "total_students" in includes:
        out["total_students"] = sum(1 for e in ctx.store.course_enrollments(section.course_id, ("active", "invited"))
                                    if e.section_id == section.id and e.type == "StudentEnrollment")
    if "students" in includes:
        view = View(ctx.store, ctx.user, ctx.html_base)
        studs = [e.user_id for e in ctx.store.course_enrollments(section.course_id, ("active", "invited"))
                 if e.section_id == section.id and e.type == "StudentEnrollment"]
        out["students"] = [view.user(ctx.store.users[u]) for u in studs if u in ctx.store.users] or None
    return out


@routes.get("/api/v1/courses/{course_id}/sections")
async def sections(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    found = sorted((s for s in ctx.store.sections.values() if s.course_id == course.id), key=lambda s: s.id)
    includes = ctx.includes()
    return ctx.paged(found, lambda s: section_json(ctx, s, includes))


@routes.get("/api/v1/courses/{course_id}/sections/{section_id}")
async def section(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    s = ctx.store.sections.get(ctx.id("section_id"))
    if s is None or s.course_id != course.id:
        raise errors.not_found()
    return section_json(ctx, s, ctx.includes())


@routes.get("/api/v1/courses/{course_id}/permissions")
async def permissions(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    staff = access.is_staff(ctx.store, ctx.user, course)
    wanted = as_str_list(ctx.param("permissions")) or ["manage_grades", "read", "update"]
    return {p: (True if p == "read" else staff) for p in wanted}
