"""Submissions: a student submits (text, URL, uploaded files), a teacher grades and comments, both read."""
from __future__ import annotations

from decathlon.emulators.canvas import access, errors, grading
from decathlon.emulators.canvas.api.assignments import assignment_of
from decathlon.emulators.canvas.http import Ctx, Routes
from decathlon.emulators.canvas.model import Assignment, Course, Submission, SubmissionComment, User
from decathlon.emulators.kit.params import as_bool, as_int, as_str_list
from decathlon.emulators.canvas.store import snapshot
from decathlon.emulators.canvas.views import SUBMIT_ORDER, View, reorder

routes = Routes()


def request_error(status: int, message: str) -> errors.ApiError:
    """Canvas's RequestError body: `{"status": <reason>, "message": ...}`."""
    reasons = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 409: "conflict",
               422: "unprocessable_entity", 501: "not_implemented"}
    return errors.ApiError(status, {"status": reasons.get(status, "error"), "message": message})


def target_user(ctx: Ctx, course: Course, raw: str) -> User:
    store = ctx.store
    user: User | None
    if raw == "self":
        user = ctx.user
    else:
        uid = as_int(raw)
        user = store.users.get(uid) if uid is not None else None
        if user is None:
            raise errors.not_found()
    if user.id != ctx.user.id and not access.is_staff(store, ctx.user, course):
        raise errors.unauthorized()
    if not any(e.type == "StudentEnrollment" for e in store.user_enrollments(user.id, course.id)):
        raise errors.not_found()
    return user


def add_comment(ctx: Ctx, sub: Submission) -> None:
    comment = ctx.param("comment")
    if isinstance(comment, dict) and str(comment.get("text_comment") or "").strip():
        sub.comments.append(SubmissionComment(ctx.store.next_id("submission_comment"), ctx.user.id,
                                              str(comment["text_comment"]), ctx.store.now(),
                                              as_int(comment.get("attempt"), sub.attempt)))


@routes.get("/api/v1/courses/{course_id}/assignments/{assignment_id}/submissions")
async def list_submissions(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    a = assignment_of(ctx, course)
    if access.is_staff(store, ctx.user, course):
        subs = [store.submission_for(a, u.id) for u in store.students(course.id)] if a.published else []
    elif access.is_student(store, ctx.user, course):
        subs = [store.submission_for(a, ctx.user.id)]
    else:
        raise errors.unauthorized()
    view = View(store, ctx.user, ctx.html_base)
    includes = ctx.includes()
    return ctx.paged(sorted(subs, key=lambda s: s.id), lambda s: view.submission(s, includes))


@routes.get("/api/v1/courses/{course_id}/assignments/{assignment_id}/submissions/{user_id}")
async def get_submission(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    a = assignment_of(ctx, course)
    user = target_user(ctx, course, ctx.request.match_info["user_id"])
    return View(store, ctx.user, ctx.html_base).submission(store.submission_for(a, user.id), ctx.includes())


def _locked(ctx: Ctx, a: Assignment) -> bool:
    now = ctx.store.now()
    return bool((a.unlock_at and now < a.unlock_at) or (a.lock_at and now > a.lock_at))


@routes.post("/api/v1/courses/{course_id}/assignments/{assignment_id}/submissions")
async def submit(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    a = assignment_of(ctx, course)
    if not access.is_student(store, ctx.user, course) or course.workflow_state != "available":
        raise errors.unauthorized()
    if _locked(ctx, a):
        raise errors.unauthorized()
    fields = ctx.param("submission") if isinstance(ctx.param("submission"), dict) else {}
    kind = str(fields.get("submission_type") or "")
    if kind not in a.submission_types or kind in ("none", "on_paper", "online_quiz", "not_graded", "external_tool",
                                                  "discussion_topic"):
        raise request_error(400, "Invalid submission[submission_type] given")
    sub = store.submission_for(a, ctx.user.id)
    body = url = None
    files: list[int] = []
    if kind == "online_text_entry":
        body = str(fields.get("body") or "")
        if not body.strip():
            raise request_error(400, "Invalid submission[body] given")
    elif kind == "online_url":
        url = str(fields.get("url") or "").strip()
        if not url:
            raise request_error(400, "Invalid submission[url] given")
    elif kind in ("online_upload", "media_recording", "student_annotation"):
        files = [i for i in (as_int(x) for x in as_str_list(fields.get("file_ids"))) if i is not None]
        if not files:
            raise request_error(400, "No valid file ids given")
        for fid in files:
            f = store.files.get(fid)
            if f is None or f.workflow_state == "deleted" or (f.user_id != ctx.user.id and not ctx.user.admin):
                raise request_error(400, "No valid file ids given")
            ext = f.display_name.rsplit(".", 1)[-1].lower() if "." in f.display_name else ""
            if a.allowed_extensions and ext not in a.allowed_extensions:
                raise request_error(400, "Invalid file type")
    if sub.submitted_at is not None:
        sub.versions.append(snapshot(sub))
    sub.submission_type = kind
    sub.body, sub.url, sub.attachment_ids = body, url, files
    sub.submitted_at = store.now()
    sub.attempt = (sub.attempt or 0) + 1
    sub.workflow_state = "submitted"
    add_comment(ctx, sub)
    return reorder(View(store, ctx.user, ctx.html_base).submission(sub, {"submission_comments"}), SUBMIT_ORDER)


@routes.put("/api/v1/courses/{course_id}/assignments/{assignment_id}/submissions/{user_id}")
async def grade(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    a = assignment_of(ctx, course)
    raw = ctx.request.match_info["user_id"]
    staff = access.is_staff(store, ctx.user, course)
    user = target_user(ctx, course, raw)
    sub = store.submission_for(a, user.id)
    fields = ctx.param("submission") if isinstance(ctx.param("submission"), dict) else {}
    grading_fields = {"posted_grade", "excuse", "late_policy_status", "seconds_late_override"} & set(fields)
    if grading_fields and not staff:
        raise errors.unauthorized()
    if not staff and user.id != ctx.user.id:
        raise errors.unauthorized()
    if "posted_grade" in fields:
        grade, score = grading.parse_posted_grade(fields["posted_grade"], a.grading_type, a.points_possible)
        sub.grade, sub.score = grade, score
        sub.entered_grade, sub.entered_score = grade, score
        if grade is None:
            sub.graded_at = None
            sub.grader_id = None
            sub.workflow_state = "submitted" if sub.submitted_at else "unsubmitted"
        else:
            sub.graded_at = store.now()
            sub.grader_id = ctx.user.id
            sub.workflow_state = "graded"
            sub.excused = False  # a grade clears an excuse, and Canvas answers false where none was given
    if "excuse" in fields:
        excused = bool(as_bool(fields["excuse"], False))
        sub.excused = excused
        if excused:
            sub.grade = sub.score = sub.entered_grade = sub.entered_score = None
            sub.workflow_state = "graded"
            sub.graded_at = store.now()
            sub.grader_id = ctx.user.id
    if "late_policy_status" in fields:
        sub.late_policy_status = fields["late_policy_status"] or None
    add_comment(ctx, sub)
    view = View(store, ctx.user, ctx.html_base)
    out = view.submission(sub, {"submission_comments"})
    out["all_submissions"] = [view.submission(sub)]
    return out


@routes.post("/api/v1/courses/{course_id}/assignments/{assignment_id}/submissions/update_grades")
async def bulk_grade(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    a = assignment_of(ctx, course)
    data = ctx.param("grade_data") if isinstance(ctx.param("grade_data"), dict) else {}
    for raw_uid, entry in data.items():
        uid = as_int(raw_uid)
        if uid is None or not isinstance(entry, dict):
            continue
        if not any(e.type == "StudentEnrollment" for e in store.user_enrollments(uid, course.id)):
            continue
        sub = store.submission_for(a, uid)
        if "posted_grade" in entry:
            grade, score = grading.parse_posted_grade(entry["posted_grade"], a.grading_type, a.points_possible)
            sub.grade, sub.score, sub.entered_grade, sub.entered_score = grade, score, grade, score
            sub.workflow_state = "graded" if grade is not None else ("submitted" if sub.submitted_at else "unsubmitted")
            sub.graded_at = store.now() if grade is not None else None
            sub.grader_id = ctx.user.id if grade is not None else None
        if str(entry.get("text_comment") or "").strip():
            sub.comments.append(SubmissionComment(store.next_id("submission_comment"), ctx.user.id,
                                                  str(entry["text_comment"]), store.now(), sub.attempt))
    pid = store.next_id("progress")
    now = store.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"id": pid, "context_id": course.id, "context_type": "Course", "user_id": ctx.user.id,
            "tag": "submissions_update", "completion": 100, "workflow_state": "completed", "created_at": now,
            "updated_at": now, "message": None, "url": f"{ctx.html_base}/api/v1/progress/{pid}"}


@routes.get("/api/v1/courses/{course_id}/students/submissions")
async def multiple_submissions(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    staff = access.is_staff(store, ctx.user, course)
    raw_students = as_str_list(ctx.param("student_ids"))
    if staff:
        if not raw_students or "all" in raw_students:
            students = [u.id for u in store.students(course.id)]
        else:
            students = [i for i in (as_int(x) for x in raw_students) if i is not None]
    else:
        if not access.is_student(store, ctx.user, course):
            raise errors.unauthorized()
        students = [ctx.user.id]
    wanted = {as_int(x) for x in as_str_list(ctx.param("assignment_ids"))}
    assignments = [a for a in store.course_assignments(course.id) if a.published and (not wanted or a.id in wanted)]
    state = ctx.param("workflow_state")
    subs = [store.submission_for(a, uid) for uid in students for a in assignments]
    if state:
        subs = [s for s in subs if s.workflow_state == state]
    view = View(store, ctx.user, ctx.html_base)
    includes = ctx.includes()
    if as_bool(ctx.param("grouped"), False):
        groups = [{"user_id": uid, "section_id": course.section_id, "integration_id": None, "sis_user_id":
                   store.users[uid].sis_user_id if uid in store.users else None,
                   "submissions": [view.submission(s, includes) for s in subs if s.user_id == uid]}
                  for uid in students]
        return ctx.paged(groups)
    return ctx.paged(subs, lambda s: view.submission(s, includes))
