"""How each Canvas object looks on the wire, for a given viewer.

Field names, order and null-vs-absent follow what the Canvas version upstream deploys returned in
recorded runs (the canvas MCP server shows these bodies to the agent verbatim); what only some
viewers see (SIS ids, access codes, answer weights, validation tokens) is shown to those viewers only.
"""
from __future__ import annotations

import base64
import json
import mimetypes
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import Any

from decathlon.emulators.canvas import access
from decathlon.emulators.canvas.clock import iso
from decathlon.emulators.canvas.model import (
    AVATAR, ROLES, Assignment, ContextModule, Conversation, Course, DiscussionEntry, DiscussionTopic,
    Enrollment, File, Folder, ModuleItem, Quiz, QuizQuestion, QuizSubmission, Submission, SubmissionComment, User,
    WikiPage,
)
from decathlon.emulators.canvas.params import number
from decathlon.emulators.canvas.store import Store

TERM = {"id": 1, "name": "Default Term", "start_at": None, "end_at": None, "created_at": "2017-11-08T20:07:42Z",
        "workflow_state": "active", "grading_period_group_id": None}
NO_PROGRESS = {"error": {"message": "no progress available because this course is not module based (has modules and "
                                    "module completion requirements) or the user is not enrolled as a student in this "
                                    "course"}}


class View:
    """Renders for one request: knows the store, the viewer and Canvas's own address."""

    def __init__(self, store: Store, viewer: User, base: str) -> None:
        self.store = store
        self.viewer = viewer
        self.base = base

    # --- users -----------------------------------------------------------------------------------

    def user(self, u: User, includes: AbstractSet[str] = frozenset(), course: Course | None = None) -> dict:
        out: dict[str, Any] = {"id": u.id, "name": u.name, "sortable_name": u.sortable_name,
                               "short_name": u.short_name}
        if self.viewer.admin or self.viewer.id == u.id or (course and access.is_staff(self.store, self.viewer, course)):
            out.update({"sis_user_id": u.sis_user_id, "integration_id": u.integration_id, "sis_import_id": None,
                        "login_id": u.login_id})
        if "email" in includes:
            # upstream's users have no email communication channel, only the login
            out["email"] = u.primary_email
        if "avatar_url" in includes:
            out["avatar_url"] = u.avatar_url
        if "enrollments" in includes and course is not None:
            out["enrollments"] = [self.enrollment(e) for e in self.store.user_enrollments(u.id, course.id)]
        if "locale" in includes:
            out["locale"] = u.locale
        if "last_login" in includes:
            out["last_login"] = None
        if "bio" in includes:
            out["bio"] = u.bio
        return out

    def self_user(self, u: User) -> dict:
        out = self.user(u)
        out.update({"avatar_url": u.avatar_url, "locale": u.locale, "effective_locale": u.locale or "en",
                    "permissions": {"can_update_name": True, "can_update_avatar": False,
                                    "limit_parent_app_web_access": False}})
        return out

    def profile(self, u: User) -> dict:
        return {"id": u.id, "name": u.name, "short_name": u.short_name, "sortable_name": u.sortable_name,
                "sis_user_id": u.sis_user_id, "login_id": u.login_id, "integration_id": u.integration_id,
                "title": u.title, "bio": u.bio, "primary_email": u.primary_email, "time_zone": u.time_zone,
                "locale": u.locale, "calendar": {"ics": f"{self.base}/feeds/calendars/user_{u.uuid}.ics"}}

    def display(self, u: User, course_id: int | None = None) -> dict:
        # outside a course, one's own link is one's profile (/about), as Canvas shows a teacher in their course list
        where = "about" if u.id == self.viewer.id else "users"
        url = f"{self.base}/courses/{course_id}/users/{u.id}" if course_id else f"{self.base}/{where}/{u.id}"
        return {"id": u.id, "display_name": u.short_name, "avatar_image_url": u.avatar_url, "html_url": url}

    def account(self, a) -> dict:
        return {"id": a.id, "name": a.name, "workflow_state": a.workflow_state, "parent_account_id": a.parent_account_id,
                "root_account_id": a.root_account_id, "uuid": a.uuid, "default_storage_quota_mb": 500,
                "default_user_storage_quota_mb": 50, "default_group_storage_quota_mb": 50,
                "default_time_zone": a.default_time_zone}

    # --- courses ---------------------------------------------------------------------------------

    def course(self, c: Course, includes: AbstractSet[str] = frozenset(), *, with_enrollments: bool = True,
               single: bool = False) -> dict:
        """A course; `single` for one course's own answer (show, update), which places
        `hide_final_grades` early as Canvas does, where lists place it just before `workflow_state`."""
        store = self.store
        out: dict[str, Any] = {"id": c.id, "name": c.name, "account_id": c.account_id, "uuid": c.uuid,
                               "start_at": iso(c.start_at), "grading_standard_id": c.grading_standard_id,
                               "is_public": c.is_public}
        if "syllabus_body" in includes:
            out["syllabus_body"] = c.syllabus_body
        if "public_description" in includes:
            out["public_description"] = c.public_description
        out.update({"course_code": c.course_code, "default_view": c.default_view, "root_account_id": 1,
                    "enrollment_term_id": c.enrollment_term_id, "end_at": iso(c.end_at),
                    "public_syllabus": c.public_syllabus, "public_syllabus_to_auth": c.public_syllabus_to_auth,
                    "storage_quota_mb": c.storage_quota_mb, "is_public_to_auth_users": c.is_public_to_auth_users})
        if single:
            out["hide_final_grades"] = c.hide_final_grades
        if "term" in includes:
            out["term"] = dict(TERM, sis_term_id=None) if self.viewer.admin else dict(TERM)
        if "course_progress" in includes:
            out["course_progress"] = NO_PROGRESS
        out["apply_assignment_group_weights"] = c.apply_assignment_group_weights
        if "sections" in includes:
            out["sections"] = [{"id": e.section_id, "name": c.name, "start_at": None, "end_at": None,
                                "enrollment_role": e.type} for e in store.user_enrollments(self.viewer.id, c.id)]
        if "total_students" in includes:
            out["total_students"] = len(store.students(c.id))
        if "teachers" in includes:
            teachers = sorted({e.user_id for e in store.course_enrollments(c.id, ("active", "invited", "creation_pending"))
                               if e.type == "TeacherEnrollment"})
            out["teachers"] = [self.display(store.users[t]) for t in teachers if t in store.users]
        if "account" in includes:
            out["account"] = self.account(store.accounts[1])
        out["calendar"] = {"ics": f"{self.base}/feeds/calendars/course_{c.uuid}.ics"}
        out["time_zone"] = c.time_zone
        if access.is_staff(store, self.viewer, c):  # admins and the course's staff read SIS data
            out["sis_course_id"] = c.sis_course_id
            out["integration_id"] = c.integration_id
        if with_enrollments:
            out["enrollments"] = [self.course_enrollment(e) for e in store.user_enrollments(self.viewer.id, c.id)]
        if "concluded" in includes:
            out["concluded"] = c.workflow_state == "completed"
        if not single:
            out["hide_final_grades"] = c.hide_final_grades
        out["workflow_state"] = c.workflow_state
        out["restrict_enrollments_to_course_dates"] = c.restrict_enrollments_to_course_dates
        return out

    def course_created(self, c: Course) -> dict:
        """What POST /accounts/:id/courses answers: the record's own fields, in their order."""
        return {"id": c.id, "name": c.name, "account_id": c.account_id, "uuid": c.uuid, "start_at": iso(c.start_at),
                "conclude_at": iso(c.end_at), "grading_standard_id": c.grading_standard_id, "is_public": c.is_public,
                "allow_student_forum_attachments": c.allow_student_forum_attachments, "course_code": c.course_code,
                "default_view": c.default_view, "root_account_id": 1, "enrollment_term_id": c.enrollment_term_id,
                "open_enrollment": c.open_enrollment, "allow_wiki_comments": c.allow_wiki_comments,
                "self_enrollment": c.self_enrollment, "license": c.license,
                "restrict_enrollments_to_course_dates": c.restrict_enrollments_to_course_dates,
                "end_at": iso(c.end_at), "public_syllabus": c.public_syllabus,
                "public_syllabus_to_auth": c.public_syllabus_to_auth, "storage_quota_mb": c.storage_quota_mb,
                "is_public_to_auth_users": c.is_public_to_auth_users, "hide_final_grades": c.hide_final_grades,
                "apply_assignment_group_weights": c.apply_assignment_group_weights,
                "calendar": {"ics": f"{self.base}/feeds/calendars/course_{c.uuid}.ics"}, "time_zone": c.time_zone,
                "sis_course_id": c.sis_course_id, "integration_id": c.integration_id,
                "workflow_state": c.workflow_state}

    def course_enrollment(self, e: Enrollment) -> dict:
        return {"type": ROLES.get(e.type, (3, "student"))[1], "role": e.type, "role_id": e.role_id,
                "user_id": e.user_id, "enrollment_state": e.workflow_state}

    # --- enrollments -----------------------------------------------------------------------------

    def enrollment(self, e: Enrollment, with_user: bool = False) -> dict:
        store = self.store
        u = store.users.get(e.user_id)
        out: dict[str, Any] = {
            "id": e.id, "user_id": e.user_id, "course_id": e.course_id, "type": e.type,
            "created_at": iso(e.created_at), "updated_at": iso(e.updated_at),
            "associated_user_id": e.associated_user_id, "start_at": iso(e.start_at), "end_at": iso(e.end_at),
            "course_section_id": e.section_id, "root_account_id": 1,
            "limit_privileges_to_course_section": e.limit_privileges_to_course_section,
            "enrollment_state": e.workflow_state, "role": e.type, "role_id": e.role_id,
            "last_activity_at": iso(e.last_activity_at), "total_activity_time": 0, "sis_import_id": None}
        if e.type == "StudentEnrollment":  # Canvas places a student's grades here
            out["grades"] = self.grades(e)
        out.update({
            "sis_account_id": None, "sis_course_id": None, "course_integration_id": None, "sis_section_id": None,
            "section_integration_id": None, "sis_user_id": u.sis_user_id if u else None,
            "html_url": f"{self.base}/courses/{e.course_id}/users/{e.user_id}"})
        if with_user and u is not None:
            course = store.courses.get(e.course_id)
            out["user"] = self.user(u, course=course)
        return out

    def grades(self, e: Enrollment) -> dict:
        store = self.store
        earned = graded_possible = total_possible = 0.0
        for a in store.course_assignments(e.course_id):
            if not a.published or a.omit_from_final_grade:
                continue
            pts = float(a.points_possible or 0)
            total_possible += pts
            s = store.existing_submission(a.id, e.user_id)
            if s is not None and s.score is not None:
                earned += s.score
                graded_possible += pts
        current = round(earned / graded_possible * 100, 2) if graded_possible else None
        final = round(earned / total_possible * 100, 2) if total_possible else None
        return {"html_url": f"{self.base}/courses/{e.course_id}/grades/{e.user_id}",
                "current_score": number(current), "current_grade": None,
                "final_score": number(final if final is not None else (0 if total_possible else None)),
                "final_grade": None}

    # --- assignments and submissions -------------------------------------------------------------

    def lock_info(self, a: Assignment | Quiz, now: datetime) -> tuple[bool, dict | None, str | None]:
        if access.is_staff(self.store, self.viewer, self.store.courses[a.course_id]):
            return False, None, None
        if a.unlock_at and now < a.unlock_at:
            when = a.unlock_at.strftime("%b %-d at %-I:%M%p").replace("AM", "am").replace("PM", "pm")
            return True, {"unlock_at": iso(a.unlock_at), "asset_string": f"assignment_{a.id}"}, \
                f"This assignment is locked until {when}."
        if a.lock_at and now > a.lock_at:
            when = a.lock_at.strftime("%b %-d at %-I:%M%p").replace("AM", "am").replace("PM", "pm")
            return True, {"lock_at": iso(a.lock_at), "asset_string": f"assignment_{a.id}"}, \
                f"This assignment was locked {when}."
        return False, None, None

    def assignment(self, a: Assignment, includes: AbstractSet[str] = frozenset()) -> dict:
        store = self.store
        course = store.courses[a.course_id]
        staff = access.is_staff(store, self.viewer, course)
        subs = [store.submissions[i] for (aid, _u), i in store.submission_index.items() if aid == a.id]
        submitted = [s for s in subs if s.submitted_at is not None]
        needs_grading = sum(1 for s in subs if s.workflow_state in ("submitted", "pending_review"))
        locked, info, explanation = self.lock_info(a, store.now())
        token = base64.urlsafe_b64encode(json.dumps({"lti_assignment_id": f"{a.id:08d}-{course.uuid[:8]}"}).encode()) \
            .decode().rstrip("=")
        out: dict[str, Any] = {
            "id": a.id, "description": a.description, "due_at": iso(a.due_at), "unlock_at": iso(a.unlock_at),
            "lock_at": iso(a.lock_at), "points_possible": number(a.points_possible), "grading_type": a.grading_type,
            "assignment_group_id": a.group_id, "grading_standard_id": None, "created_at": iso(a.created_at),
            "updated_at": iso(a.updated_at), "peer_reviews": a.peer_reviews,
            "automatic_peer_reviews": a.automatic_peer_reviews, "position": a.position,
            "grade_group_students_individually": a.grade_group_students_individually, "anonymous_peer_reviews": False,
            "group_category_id": a.group_category_id, "post_to_sis": a.post_to_sis, "moderated_grading": False,
            "omit_from_final_grade": a.omit_from_final_grade, "intra_group_peer_reviews": False,
            "anonymous_instructor_annotations": False,
            "secure_params": f"eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.{token}.{course.uuid[:43]}",
            "course_id": a.course_id, "name": a.name, "submission_types": list(a.submission_types),
            "has_submitted_submissions": bool(submitted), "due_date_required": False, "max_name_length": 255,
            "in_closed_grading_period": False, "is_quiz_assignment": a.quiz_id is not None,
        }
        out.update({"muted": False, "html_url": f"{self.base}/courses/{a.course_id}/assignments/{a.id}"})
        if a.allowed_extensions:
            out["allowed_extensions"] = list(a.allowed_extensions)
        if staff:  # overrides, grading counts, integrations and publishability are the staff's to see
            out["has_overrides"] = False
            out["needs_grading_count"] = needs_grading
        if a.quiz_id is not None:
            out["quiz_id"] = a.quiz_id
            out["anonymous_submissions"] = False
        if staff:
            out.update({"integration_id": a.integration_id, "integration_data": {}})
        out["published"] = a.published
        if staff:
            out["unpublishable"] = not submitted
        out["only_visible_to_overrides"] = a.only_visible_to_overrides
        if "submission" in includes and not staff and access.is_student(store, self.viewer, course):
            out["submission"] = self.submission(store.submission_for(a, self.viewer.id))
        out["locked_for_user"] = locked
        if locked:
            out["lock_info"] = info
            out["lock_explanation"] = explanation
        where = f"quizzes/{a.quiz_id}" if a.quiz_id is not None else f"assignments/{a.id}"  # a quiz's own page
        out["submissions_download_url"] = f"{self.base}/courses/{a.course_id}/{where}/submissions?zip=1"
        return out

    def file_url(self, f: File) -> str:
        return f"{self.base}/files/{f.id}/download?download_frd=1&verifier={f.uuid}"

    def submission(self, s: Submission, includes: AbstractSet[str] = frozenset()) -> dict:
        store = self.store
        a = store.assignments[s.assignment_id]
        due = a.due_at
        late = bool(s.submitted_at and due and s.submitted_at > due)
        expects = not set(a.submission_types) <= {"none", "not_graded", "on_paper", "external_tool"}
        missing = bool(expects and due and store.now() > due and s.submitted_at is None and s.score is None
                       and not s.excused)
        out: dict[str, Any] = {
            "id": s.id, "body": s.body, "url": s.url, "grade": s.grade, "score": number(s.score),
            "submitted_at": iso(s.submitted_at), "assignment_id": s.assignment_id, "user_id": s.user_id,
            "submission_type": s.submission_type, "workflow_state": s.workflow_state,
            "grade_matches_current_submission": True, "graded_at": iso(s.graded_at), "grader_id": s.grader_id,
            "attempt": s.attempt, "cached_due_date": iso(due), "excused": s.excused,
            "late_policy_status": s.late_policy_status,
            "points_deducted": 0 if late else None,  # a late policy's deduction: none on time
            "grading_period_id": None,
            "late": late, "missing": missing,
            "seconds_late": int((s.submitted_at - due).total_seconds()) if late and s.submitted_at and due else 0,
            "entered_grade": s.entered_grade, "entered_score": number(s.entered_score),
            "preview_url": f"{self.base}/courses/{a.course_id}/assignments/{a.id}/submissions/{s.user_id}"
                           f"?preview=1&version={len(s.versions) + (1 if s.submitted_at or s.graded_at else 0)}",
        }
        if s.attachment_ids:
            out["attachments"] = [self.file(store.files[i]) for i in s.attachment_ids if i in store.files]
        if "submission_comments" in includes:
            out["submission_comments"] = [self.submission_comment(c) for c in s.comments]
        if "assignment" in includes:
            out["assignment"] = self.assignment(a)
        if "user" in includes and s.user_id in store.users:
            out["user"] = self.user(store.users[s.user_id], course=store.courses.get(a.course_id))
        if "submission_history" in includes:
            history = [dict(out, **{k: (iso(v) if isinstance(v, datetime) else v) for k, v in ver.items()
                                    if k != "attachment_ids"}) for ver in s.versions]
            out["submission_history"] = [*history, {k: v for k, v in out.items() if k != "submission_history"}]
        return out

    def submission_comment(self, c: SubmissionComment) -> dict:
        author = self.store.users.get(c.author_id)
        return {"id": c.id, "author_id": c.author_id, "author_name": author.name if author else None,
                "comment": c.comment, "created_at": iso(c.created_at), "edited_at": None,
                "avatar_path": f"/images/users/{c.author_id}",
                "author": self.display(author) if author else {}, "attempt": c.attempt}

    # --- files -----------------------------------------------------------------------------------

    def file(self, f: File) -> dict:
        store = self.store
        folder = store.folders.get(f.folder_id)
        mime = mime_class(f.content_type)
        preview = None
        if mime in ("pdf", "doc", "ppt", "xls") and folder is not None:
            ctx = "users" if folder.context_type == "User" else "courses"
            preview = f"/{ctx}/{folder.context_id}/files/{f.id}/file_preview?annotate=0"
        return {"id": f.id, "folder_id": f.folder_id, "display_name": f.display_name,
                "filename": f.filename, "content-type": f.content_type,
                "url": self.file_url(f), "size": f.size, "created_at": iso(f.created_at),
                "updated_at": iso(f.updated_at), "unlock_at": None, "locked": f.locked, "hidden": f.hidden,
                "lock_at": None, "hidden_for_user": False, "thumbnail_url": None, "modified_at": iso(f.created_at),
                "mime_class": mime, "media_entry_id": None, "locked_for_user": False, "preview_url": preview}

    def folder(self, f: Folder) -> dict:
        store = self.store
        files = store.folder_files(f.id)
        subfolders = [x for x in store.folders.values() if x.parent_folder_id == f.id]
        return {"id": f.id, "name": f.name, "full_name": f.full_name, "context_id": f.context_id,
                "context_type": f.context_type, "parent_folder_id": f.parent_folder_id,
                "created_at": iso(f.created_at), "updated_at": iso(f.created_at), "lock_at": None, "unlock_at": None,
                "position": f.position or None, "locked": False,
                "folders_url": f"{self.base}/api/v1/folders/{f.id}/folders",
                "files_url": f"{self.base}/api/v1/folders/{f.id}/files", "files_count": len(files),
                "folders_count": len(subfolders), "hidden": None, "locked_for_user": False,
                "hidden_for_user": False, "for_submissions": False, "can_upload": True}

    # --- quizzes ---------------------------------------------------------------------------------

    def quiz(self, q: Quiz) -> dict:
        store = self.store
        course = store.courses[q.course_id]
        staff = access.is_staff(store, self.viewer, course)
        questions = store.quiz_questions(q.id)
        types = sorted({x.question_type for x in questions}, key=[x.question_type for x in questions].index)
        url = f"{self.base}/courses/{q.course_id}/quizzes/{q.id}"
        locked, info, explanation = self.lock_info(q, store.now())
        out: dict[str, Any] = {
            "id": q.id, "title": q.title, "html_url": url, "mobile_url": f"{url}?force_user=1&persist_headless=1",
            "description": q.description, "quiz_type": q.quiz_type, "time_limit": q.time_limit,
            "shuffle_answers": q.shuffle_answers, "show_correct_answers": q.show_correct_answers,
            "scoring_policy": q.scoring_policy, "allowed_attempts": q.allowed_attempts,
            "one_question_at_a_time": q.one_question_at_a_time, "question_count": len(questions),
            "points_possible": number(store.quiz_points(q)), "cant_go_back": q.cant_go_back}
        if staff:
            out["access_code"] = q.access_code
        out.update({"ip_filter": q.ip_filter, "due_at": iso(q.due_at), "lock_at": iso(q.lock_at),
                    "unlock_at": iso(q.unlock_at), "published": q.published})
        if staff:
            out["unpublishable"] = not any(s.quiz_id == q.id for s in store.quiz_submissions.values())
        out["locked_for_user"] = locked
        if locked:
            out["lock_info"] = info
            out["lock_explanation"] = explanation.replace("assignment", "quiz") if explanation else None
        out.update({"hide_results": q.hide_results, "show_correct_answers_at": iso(q.show_correct_answers_at),
                    "hide_correct_answers_at": iso(q.hide_correct_answers_at),
                    "all_dates": [{"due_at": iso(q.due_at), "unlock_at": iso(q.unlock_at), "lock_at": iso(q.lock_at),
                                   "base": True}]})
        if staff:
            out["can_unpublish"] = out["unpublishable"]
        out.update({"can_update": staff, "require_lockdown_browser": False,
                    "require_lockdown_browser_for_results": False, "require_lockdown_browser_monitor": False,
                    "lockdown_browser_monitor_data": None})
        if staff and q.assignment_id:
            out["speed_grader_url"] = f"{self.base}/courses/{q.course_id}/gradebook/speed_grader?assignment_id={q.assignment_id}"
        out["permissions"] = {"read_statistics": staff, "manage": staff, "read": True, "update": staff,
                              "create": staff, "submit": True, "preview": staff, "delete": staff, "grade": staff,
                              "review_grades": staff, "view_answer_audits": False}
        out["quiz_reports_url"] = f"{self.base}/api/v1/courses/{q.course_id}/quizzes/{q.id}/reports"
        out["quiz_statistics_url"] = f"{self.base}/api/v1/courses/{q.course_id}/quizzes/{q.id}/statistics"
        if staff:
            out["message_students_url"] = f"{self.base}/api/v1/courses/{q.course_id}/quizzes/{q.id}/submission_users/message"
            out["section_count"] = 1
        out["quiz_submission_versions_html_url"] = f"{url}/submission_versions"
        out["assignment_id"] = q.assignment_id
        out["one_time_results"] = q.one_time_results
        if staff:
            out["only_visible_to_overrides"] = q.only_visible_to_overrides
        out.update({"assignment_group_id": q.assignment_group_id,
                    "show_correct_answers_last_attempt": q.show_correct_answers_last_attempt,
                    "version_number": q.version_number, "question_types": types,
                    "has_access_code": bool(q.access_code),
                    "post_to_sis": False if q.assignment_id else None})
        return out

    def question(self, q: QuizQuestion, *, with_bank: bool = False) -> dict:
        answers = [dict(a) for a in q.answers]
        for a in answers:
            if "weight" in a:
                a["weight"] = number(a["weight"])
        out: dict[str, Any]  # values of every kind: assessment_question below is a dict
        out = {"id": q.id, "quiz_id": q.quiz_id, "quiz_group_id": q.quiz_group_id, "assessment_question_id": q.id,
               "position": q.position, "question_name": q.question_name, "question_type": q.question_type,
               "question_text": q.question_text, "points_possible": number(q.points_possible),
               "correct_comments": q.correct_comments, "incorrect_comments": q.incorrect_comments,
               "neutral_comments": q.neutral_comments, "correct_comments_html": q.correct_comments_html,
               "incorrect_comments_html": q.incorrect_comments_html,
               "neutral_comments_html": q.neutral_comments_html, "answers": answers, "variables": None,
               "formulas": None, "answer_tolerance": None, "formula_decimal_places": None,
               "matches": self._matches(q), "matching_answer_incorrect_matches": q.matching_answer_incorrect_matches}
        if with_bank:
            data = {"id": None, "regrade_option": False,
                    **{k: out[k] for k in ("points_possible", "correct_comments", "incorrect_comments",
                                           "neutral_comments", "correct_comments_html", "incorrect_comments_html",
                                           "neutral_comments_html", "question_type", "question_name")},
                    "name": q.question_name, "question_text": out["question_text"], "answers": out["answers"],
                    "text_after_answers": q.text_after_answers, "assessment_question_id": None}
            out["assessment_question"] = {
                "id": q.id, "name": q.question_name, "question_data": data, "context_id": self.store.quizzes[q.quiz_id].course_id,
                "context_type": "Course", "workflow_state": "active", "created_at": iso(q.created_at),
                "updated_at": iso(q.updated_at), "assessment_question_bank_id": q.quiz_id, "deleted_at": None,
                "migration_id": None, "position": q.position}
        return out

    @staticmethod
    def _matches(q: QuizQuestion) -> list | None:
        if q.question_type != "matching_question":
            return None
        return [{"text": a.get("right"), "match_id": a.get("match_id")} for a in q.answers]

    def censored_question(self, q: QuizQuestion, qs: QuizSubmission | None) -> dict:
        keep = ("id", "text", "html", "blank_id", "left", "right")
        answers = [{k: a[k] for k in keep if k in a} for a in q.answers]
        if q.question_type == "matching_question":
            answers = [{k: a[k] for k in ("id", "text", "html", "left") if k in a} for a in q.answers]
        return {"id": q.id, "quiz_id": q.quiz_id, "quiz_group_id": q.quiz_group_id, "assessment_question_id": q.id,
                "position": q.position, "question_name": q.question_name, "question_type": q.question_type,
                "question_text": q.question_text, "answers": answers, "variables": None, "formulas": None,
                "answer_tolerance": None, "formula_decimal_places": None, "matches": self._matches(q),
                "flagged": bool(qs and q.id in qs.flagged), "answer": qs.answers.get(q.id) if qs else None}

    def quiz_submission(self, qs: QuizSubmission) -> dict:
        store = self.store
        quiz = store.quizzes[qs.quiz_id]
        allowed = quiz.allowed_attempts
        attempts_left = -1 if allowed == -1 else max(0, allowed + (qs.extra_attempts or 0) - qs.attempt)
        now = store.now()
        url = f"{self.base}/courses/{quiz.course_id}/quizzes/{quiz.id}/submissions/{qs.id}"
        out: dict[str, Any] = {
            "id": qs.id, "quiz_id": qs.quiz_id, "quiz_version": qs.quiz_version, "user_id": qs.user_id,
            "submission_id": qs.submission_id, "score": number(qs.score), "kept_score": number(qs.kept_score),
            "started_at": iso(qs.started_at), "end_at": iso(qs.end_at), "finished_at": iso(qs.finished_at),
            "attempt": qs.attempt, "workflow_state": qs.workflow_state, "fudge_points": qs.fudge_points,
            "quiz_points_possible": number(qs.quiz_points_possible), "extra_attempts": qs.extra_attempts,
            "extra_time": qs.extra_time, "manually_unlocked": qs.manually_unlocked}
        if qs.user_id == self.viewer.id:
            out["validation_token"] = qs.validation_token
        out.update({"score_before_regrade": None, "has_seen_results": qs.has_seen_results,
                    "time_spent": qs.time_spent, "attempts_left": attempts_left,
                    "overdue_and_needs_submission": bool(qs.workflow_state == "untaken" and qs.end_at and now > qs.end_at),
                    "excused?": False, "html_url": url})
        if qs.finished_at is not None:
            out["result_url"] = (f"{self.base}/courses/{quiz.course_id}/quizzes/{quiz.id}/history"
                                 f"?quiz_submission_id={qs.id}&version={qs.attempt}")
        return out

    # --- discussions -----------------------------------------------------------------------------

    def topic(self, t: DiscussionTopic, includes: AbstractSet[str] = frozenset()) -> dict:
        store = self.store
        course = store.courses[t.course_id]
        staff = access.is_staff(store, self.viewer, course)
        author = store.users.get(t.user_id)
        entries = [e for e in store.entries.values() if e.topic_id == t.id and e.workflow_state != "deleted"]
        url = f"{self.base}/courses/{t.course_id}/discussion_topics/{t.id}"
        locked = t.locked or bool(t.lock_at and store.now() > t.lock_at)
        out: dict[str, Any] = {
            "id": t.id, "title": t.title, "last_reply_at": iso(t.last_reply_at or t.posted_at or t.created_at),
            "delayed_post_at": iso(t.delayed_post_at), "posted_at": iso(t.posted_at),
            "assignment_id": t.assignment_id, "root_topic_id": None, "position": t.position,
            "podcast_has_student_posts": t.podcast_has_student_posts, "discussion_type": t.discussion_type,
            "lock_at": iso(t.lock_at), "allow_rating": t.allow_rating, "only_graders_can_rate": t.only_graders_can_rate,
            "sort_by_rating": t.sort_by_rating, "user_name": author.name if author else None,
            "discussion_subentry_count": len(entries),
            "permissions": {"attach": staff, "update": staff, "reply": True, "delete": staff},
            "require_initial_post": t.require_initial_post, "user_can_see_posts": True, "podcast_url": None,
            "read_state": "read" if t.user_id == self.viewer.id else "unread", "unread_count": 0,
            "subscribed": t.user_id == self.viewer.id and not t.is_announcement, "topic_children": [],
            "attachments": [self.file(store.files[i]) for i in t.attachment_ids if i in store.files],
            "published": t.published, "can_unpublish": not t.is_announcement and not entries,
            "locked": locked, "can_lock": True, "comments_disabled": False,
            "author": self.display(author, t.course_id) if author else {}, "html_url": url, "url": url,
            "pinned": t.pinned, "group_category_id": None, "can_group": not t.is_announcement,
            "locked_for_user": locked and not staff, "message": t.message}
        if t.is_announcement:
            out["subscription_hold"] = "topic_is_announcement"
        if "assignment" in includes and t.assignment_id in store.assignments:
            out["assignment"] = self.assignment(store.assignments[t.assignment_id])
        return out

    def entry(self, e: DiscussionEntry) -> dict:
        u = self.store.users.get(e.user_id)
        return {"id": e.id, "user_id": e.user_id, "parent_id": e.parent_id, "created_at": iso(e.created_at),
                "updated_at": iso(e.updated_at), "rating_count": None, "rating_sum": None,
                "user_name": u.name if u else None, "message": e.message,
                "user": self.display(u) if u else {}, "read_state": "read", "forced_read_state": False}

    # --- conversations ---------------------------------------------------------------------------

    def conversation(self, c: Conversation, *, with_messages: bool = False, scope_visible: bool = True) -> dict:
        store = self.store
        me = c.participants[self.viewer.id]
        mine = [m for m in c.messages if m.id in me.message_ids]
        received = [m for m in mine if m.author_id != self.viewer.id]
        authored = [m for m in mine if m.author_id == self.viewer.id]
        others = [uid for uid in c.participants if uid != self.viewer.id]
        last_recv = received[-1] if received else None
        last_auth = authored[-1] if authored else None
        props = []
        if last_auth is not None and (last_recv is None or last_auth.created_at >= last_recv.created_at):
            props.append("last_author")
        if any(m.attachment_ids for m in mine):
            props.append("attachments")
        out: dict[str, Any] = {
            "id": c.id, "subject": c.subject, "workflow_state": me.workflow_state,
            "last_message": truncate(last_recv.body) if last_recv else None,
            "last_message_at": iso(last_recv.created_at) if last_recv else None,
            "last_authored_message": truncate(last_auth.body) if last_auth else None,
            "last_authored_message_at": iso(last_auth.created_at) if last_auth else None,
            "message_count": len(mine), "subscribed": me.subscribed, "private": c.private and len(c.participants) <= 2,
            "starred": me.starred, "properties": props}
        if with_messages:
            out["messages"] = [self.message(m) for m in reversed(mine)]
        out.update({"audience": others, "audience_contexts": {"courses": {}, "groups": {}},
                    "avatar_url": AVATAR,
                    "participants": [self.participant(store.users[uid])
                                     for uid in sorted(c.participants, key=lambda u: (u != self.viewer.id, u))
                                     if uid in store.users],
                    "visible": scope_visible, "context_code": c.context_code})
        if c.context_code and c.context_code.startswith("course_"):
            course = store.courses.get(int(c.context_code[7:]) if c.context_code[7:].isdigit() else -1)
            if course is not None:
                out["context_name"] = course.name
        if with_messages:
            out["submissions"] = []
        return out

    def message(self, m) -> dict:
        return {"id": m.id, "author_id": m.author_id, "created_at": iso(m.created_at), "generated": m.generated,
                "body": m.body, "forwarded_messages": [],
                "attachments": [self.file(self.store.files[i]) for i in m.attachment_ids if i in self.store.files],
                "media_comment": None, "participating_user_ids": list(m.participating_user_ids)}

    def participant(self, u: User) -> dict:
        common: dict[str, list[str]] = {}
        if u.id != self.viewer.id:
            mine = {e.course_id for e in self.store.user_enrollments(self.viewer.id)}
            for e in self.store.user_enrollments(u.id):
                if e.course_id in mine:
                    common.setdefault(str(e.course_id), []).append(e.type)
            if not common and self.viewer.admin:
                common = {"0": ["FakeEnrollment"]}
        return {"id": u.id, "name": u.short_name, "full_name": u.name, "common_courses": common, "common_groups": {},
                "avatar_url": u.avatar_url}

    # --- modules and pages -----------------------------------------------------------------------

    def module(self, m: ContextModule, includes: AbstractSet[str] = frozenset()) -> dict:
        store = self.store
        items = sorted((i for i in store.module_items.values() if i.module_id == m.id), key=lambda i: (i.position, i.id))
        course = store.courses[m.course_id]
        staff = access.is_staff(store, self.viewer, course)
        out: dict[str, Any] = {"id": m.id, "name": m.name, "position": m.position, "unlock_at": iso(m.unlock_at),
                               "require_sequential_progress": m.require_sequential_progress,
                               "publish_final_grade": m.publish_final_grade,
                               "prerequisite_module_ids": list(m.prerequisite_module_ids),
                               "published": m.workflow_state == "active", "items_count": len(items),
                               "items_url": f"{self.base}/api/v1/courses/{m.course_id}/modules/{m.id}/items"}
        if not staff:
            done = all(self.viewer.id in i.completed_by for i in items if i.completion_requirement)
            out["state"] = "completed" if done and items else "unlocked"
            out["completed_at"] = None
        if "items" in includes:
            out["items"] = [self.module_item(i, includes) for i in items if staff or i.published]
        return out

    def module_item(self, i: ModuleItem, includes: AbstractSet[str] = frozenset()) -> dict:
        base = f"{self.base}/courses/{i.course_id}"
        api = f"{self.base}/api/v1/courses/{i.course_id}"
        kinds = {"Assignment": "assignments", "Quiz": "quizzes", "Discussion": "discussion_topics"}
        html_url = f"{base}/modules/items/{i.id}"
        url = None
        if i.type in kinds and i.content_id is not None:
            url = f"{api}/{kinds[i.type]}/{i.content_id}"
        elif i.type == "Page" and i.page_url:
            url = f"{api}/pages/{i.page_url}"
        elif i.type == "File" and i.content_id is not None:
            url = f"{self.base}/api/v1/files/{i.content_id}"
        elif i.type == "ExternalUrl":
            html_url = i.external_url or html_url
        out: dict[str, Any] = {"id": i.id, "title": i.title, "position": i.position, "indent": i.indent,
                               "quiz_lti": False, "type": i.type, "module_id": i.module_id, "html_url": html_url}
        if i.content_id is not None:
            out["content_id"] = i.content_id
        if url:
            out["url"] = url
        if i.page_url:
            out["page_url"] = i.page_url
        if i.type == "ExternalUrl":
            out["external_url"] = i.external_url
            out["new_tab"] = i.new_tab
        if i.completion_requirement:
            req = dict(i.completion_requirement)
            if not access.is_staff(self.store, self.viewer, self.store.courses[i.course_id]):
                req["completed"] = self.viewer.id in i.completed_by
            out["completion_requirement"] = req
        out["published"] = i.published
        if "content_details" in includes:
            details: dict[str, Any] = {"locked_for_user": False}
            if i.type in ("Assignment", "Quiz") and i.content_id is not None:
                obj: Assignment | Quiz | None = (self.store.assignments.get(i.content_id) if i.type == "Assignment"
                                                 else self.store.quizzes.get(i.content_id))
                if obj is not None:
                    pts = obj.points_possible if isinstance(obj, Assignment) else self.store.quiz_points(obj)
                    details.update({"points_possible": number(pts), "due_at": iso(obj.due_at),
                                    "unlock_at": iso(obj.unlock_at), "lock_at": iso(obj.lock_at)})
            out["content_details"] = details
        return out

    def page(self, p: WikiPage, with_body: bool = True) -> dict:
        editor = self.store.users.get(p.last_edited_by) if p.last_edited_by else None
        out: dict[str, Any] = {"title": p.title, "created_at": iso(p.created_at), "url": p.url,
                               "editing_roles": p.editing_roles, "page_id": p.id,
                               "last_edited_by": self.display(editor, p.course_id) if editor else None,
                               "published": p.published, "hide_from_students": not p.published,
                               "front_page": p.front_page,
                               "html_url": f"{self.base}/courses/{p.course_id}/pages/{p.url}",
                               "todo_date": None, "updated_at": iso(p.updated_at), "locked_for_user": False}
        if with_body:
            out["body"] = p.body
        return out


def reorder(d: dict, first: tuple[str, ...]) -> dict:
    """The same object with `first` keys leading, in that order (some answers order fields their own way)."""
    return {**{k: d[k] for k in first if k in d}, **{k: v for k, v in d.items() if k not in first}}


# POST .../submissions (submit) and POST .../complete answer with these field orders
SUBMIT_ORDER = ("assignment_id", "id", "user_id", "body", "url", "submission_type", "late_policy_status", "score",
                "grade_matches_current_submission", "workflow_state", "submitted_at", "grade", "points_deducted",
                "graded_at", "grader_id", "attempt", "cached_due_date", "excused", "grading_period_id", "late",
                "missing", "seconds_late", "entered_grade", "entered_score", "preview_url")
COMPLETE_ORDER = ("quiz_id", "id", "validation_token", "workflow_state", "attempt", "score", "score_before_regrade",
                  "manually_unlocked", "finished_at", "user_id", "submission_id", "quiz_points_possible", "end_at",
                  "extra_time", "extra_attempts", "kept_score", "quiz_version", "started_at", "fudge_points",
                  "has_seen_results", "time_spent", "attempts_left", "overdue_and_needs_submission", "excused?",
                  "html_url", "result_url")


def truncate(text: str, limit: int = 100) -> str:
    """Canvas's conversation preview (CanvasTextHelper.truncate_text): at most `limit` characters, cut where they
    end (mid-word, spaces kept: recorded previews end `Sinc...` and `Since ...`), ending in '...'."""
    if len(text) <= limit:
        return text
    return text[:limit - 3] + "..."


def mime_class(content_type: str) -> str:
    ct = (content_type or "").lower()
    if ct == "application/pdf":
        return "pdf"
    if ct.startswith("image/"):
        return "image"
    if ct.startswith("video/"):
        return "video"
    if ct.startswith("audio/"):
        return "audio"
    if ct in ("text/html", "application/xhtml+xml"):
        return "html"
    if "wordprocessingml" in ct or ct in ("application/msword", "application/rtf"):
        return "doc"
    if "presentationml" in ct or ct == "application/vnd.ms-powerpoint":
        return "ppt"
    if "spreadsheetml" in ct or ct in ("application/vnd.ms-excel", "text/csv"):
        return "xls"
    if ct in ("application/zip", "application/x-zip-compressed"):
        return "zip"
    if ct in ("text/x-python", "text/x-script.python", "application/x-python-code", "text/javascript"):
        return "code"
    return "file"


def guess_type(name: str) -> str:
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if ext == "md":
        return "text/markdown"
    if ext == "py":
        return "text/x-python"
    return mimetypes.guess_type(name)[0] or "application/octet-stream"
