"""The emulator's whole state and the rules that keep its objects consistent with each other.

One `Store` per running emulator (so two instances never share a course). Ids are handed out in
increasing order per kind, as Canvas's database sequences do, which is why a fresh emulator seeded
by a task's preprocess gives the same course, quiz and assignment ids a fresh Canvas gives.
Randomness (uuids, verifiers, validation tokens) comes from a seeded generator: runs repeat.
"""
from __future__ import annotations

import random
import string
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Iterable

from decathlon.emulators.canvas import grading
from decathlon.emulators.canvas.clock import Clock, system_clock
from decathlon.emulators.canvas.model import (
    STAFF_TYPES, Account, Assignment, AssignmentGroup, CalendarEvent, ContextModule, Conversation, Course,
    DiscussionEntry, DiscussionTopic, Enrollment, File, Folder, ModuleItem, PendingUpload, Quiz, QuizAttempt,
    QuizQuestion, QuizSubmission, Section, Submission, User, WikiPage,
)

_ALNUM = string.ascii_letters + string.digits

# Enrollment states that make a user part of a course (deleted, rejected and inactive ones do not)
LIVE_ENROLLMENT_STATES = ("active", "invited", "creation_pending", "completed")


class Store:
    def __init__(self, clock: Clock = system_clock, seed: int = 0) -> None:
        self.clock = clock
        self.rng = random.Random(seed)
        self._ids: dict[str, int] = defaultdict(int)
        self.error_reports = 0
        self.quiz_start_500 = False  # see decathlon.emulators.canvas.start
        self.accounts: dict[int, Account] = {}
        self.users: dict[int, User] = {}
        self.tokens: dict[str, int] = {}
        self.courses: dict[int, Course] = {}
        self.sections: dict[int, Section] = {}
        self.enrollments: dict[int, Enrollment] = {}
        self.groups: dict[int, AssignmentGroup] = {}
        self.assignments: dict[int, Assignment] = {}
        self.submissions: dict[int, Submission] = {}
        self.submission_index: dict[tuple[int, int], int] = {}   # (assignment, user) -> submission
        self.quizzes: dict[int, Quiz] = {}
        self.questions: dict[int, QuizQuestion] = {}
        self.quiz_submissions: dict[int, QuizSubmission] = {}
        self.topics: dict[int, DiscussionTopic] = {}
        self.entries: dict[int, DiscussionEntry] = {}
        self.conversations: dict[int, Conversation] = {}
        self.modules: dict[int, ContextModule] = {}
        self.module_items: dict[int, ModuleItem] = {}
        self.folders: dict[int, Folder] = {}
        self.files: dict[int, File] = {}
        self.uploads: dict[str, PendingUpload] = {}
        self.pages: dict[int, WikiPage] = {}
        self.events: dict[int, CalendarEvent] = {}

    # --- primitives ------------------------------------------------------------------------------

    def now(self) -> datetime:
        return self.clock()

    def next_id(self, kind: str) -> int:
        self._ids[kind] += 1
        return self._ids[kind]

    ID_KINDS = ("user", "course", "section", "assignment_group", "assignment", "submission", "submission_comment",
                "quiz", "quiz_question", "quiz_submission", "enrollment", "discussion_topic", "discussion_entry",
                "conversation", "conversation_message", "context_module", "module_item", "folder", "attachment",
                "wiki_page", "calendar_event", "progress")

    def bump_id(self, kind: str, at_least: int) -> None:
        """Make the next id of `kind` larger than `at_least` (ids taken by seeding)."""
        self._ids[kind] = max(self._ids[kind], at_least)

    def random_string(self, n: int = 40) -> str:
        return "".join(self.rng.choices(_ALNUM, k=n))

    def random_hex(self, n: int = 64) -> str:
        return "".join(self.rng.choices("0123456789abcdef", k=n))

    def user_for_token(self, token: str) -> User | None:
        uid = self.tokens.get(token)
        return self.users.get(uid) if uid is not None else None

    # --- users -----------------------------------------------------------------------------------

    def add_user(self, name: str, login_id: str, *, user_id: int | None = None, short_name: str | None = None,
                 sortable_name: str | None = None, sis_user_id: str | None = None, password: str = "",
                 tokens: Iterable[str] = (), admin: bool = False) -> User:
        uid = user_id if user_id is not None else self.next_id("user")
        self.bump_id("user", uid)
        user = User(id=uid, name=name, short_name=short_name or (name.split(" ")[0] if name else ""),
                    sortable_name=sortable_name or sortable(name), login_id=login_id, sis_user_id=sis_user_id,
                    password=password, created_at=self.now(), uuid=self.random_string(), admin=admin,
                    tokens=list(tokens))
        self.users[uid] = user
        for t in user.tokens:
            self.tokens[t] = uid
        return user

    def error_report(self) -> int:
        """The id of a new error report, as Canvas numbers the 500s it logs."""
        self.error_reports += 1
        return self.error_reports

    def user_by_login(self, login: str) -> User | None:
        login = login.strip().lower()
        for u in self.users.values():
            if u.login_id.lower() == login:
                return u
        return None

    # --- courses ---------------------------------------------------------------------------------

    def add_course(self, name: str, course_code: str, account_id: int = 1) -> Course:
        cid = self.next_id("course")
        now = self.now()
        section = Section(self.next_id("section"), cid, name, now)
        self.sections[section.id] = section
        group = AssignmentGroup(self.next_id("assignment_group"), cid, "Assignments", 1)
        self.groups[group.id] = group
        course = Course(id=cid, name=name, course_code=course_code, account_id=account_id, uuid=self.random_string(),
                        created_at=now, section_id=section.id, group_id=group.id)
        self.courses[cid] = course
        return course

    def course_enrollments(self, course_id: int, states: Iterable[str] | None = None) -> list[Enrollment]:
        wanted = set(states) if states is not None else None
        return [e for e in self.enrollments.values()
                if e.course_id == course_id and (wanted is None or e.workflow_state in wanted)]

    def user_enrollments(self, user_id: int, course_id: int | None = None) -> list[Enrollment]:
        return [e for e in self.enrollments.values()
                if e.user_id == user_id and (course_id is None or e.course_id == course_id)
                and e.workflow_state in LIVE_ENROLLMENT_STATES]

    def students(self, course_id: int) -> list[User]:
        ids = sorted({e.user_id for e in self.course_enrollments(course_id, ("active", "invited", "creation_pending"))
                      if e.type == "StudentEnrollment"})
        return [self.users[i] for i in ids if i in self.users]

    def enroll(self, course: Course, user: User, type_: str, state: str, section_id: int | None = None,
               limit_privileges: bool = False) -> Enrollment:
        """Canvas reuses a user's enrollment of the same type in the same section instead of adding one."""
        section = section_id or course.section_id
        now = self.now()
        for e in self.enrollments.values():
            if e.course_id == course.id and e.user_id == user.id and e.type == type_ and e.section_id == section:
                e.workflow_state = state
                e.updated_at = now
                e.limit_privileges_to_course_section = limit_privileges
                break
        else:
            e = Enrollment(id=self.next_id("enrollment"), user_id=user.id, course_id=course.id, section_id=section,
                           type=type_, workflow_state=state, created_at=now, updated_at=now,
                           limit_privileges_to_course_section=limit_privileges)
            self.enrollments[e.id] = e
        if type_ == "StudentEnrollment":
            for a in self.course_assignments(course.id):
                if a.published:
                    self.submission_for(a, user.id)
        return e

    # --- assignments and submissions -------------------------------------------------------------

    def course_assignments(self, course_id: int, include_deleted: bool = False) -> list[Assignment]:
        found = [a for a in self.assignments.values()
                 if a.course_id == course_id and (include_deleted or a.workflow_state != "deleted")]
        return sorted(found, key=lambda a: (self.groups[a.group_id].position if a.group_id in self.groups else 0,
                                            a.position, a.id))

    def add_assignment(self, course: Course, name: str, group_id: int | None = None) -> Assignment:
        now = self.now()
        gid = group_id if group_id in self.groups else course.group_id
        position = 1 + max((a.position for a in self.course_assignments(course.id) if a.group_id == gid), default=0)
        a = Assignment(id=self.next_id("assignment"), course_id=course.id, name=name, group_id=gid,
                       position=position, created_at=now, updated_at=now)
        self.assignments[a.id] = a
        return a

    def publish_assignment(self, a: Assignment) -> None:
        a.workflow_state = "published"
        for student in self.students(a.course_id):
            self.submission_for(a, student.id)

    def submission_for(self, a: Assignment, user_id: int) -> Submission:
        """The (assignment, student) submission; Canvas keeps one per student once the assignment is live."""
        sid = self.submission_index.get((a.id, user_id))
        if sid is not None:
            return self.submissions[sid]
        s = Submission(id=self.next_id("submission"), assignment_id=a.id, user_id=user_id, created_at=self.now())
        self.submissions[s.id] = s
        self.submission_index[(a.id, user_id)] = s.id
        return s

    def existing_submission(self, assignment_id: int, user_id: int) -> Submission | None:
        sid = self.submission_index.get((assignment_id, user_id))
        return self.submissions.get(sid) if sid is not None else None

    # --- quizzes ---------------------------------------------------------------------------------

    def quiz_questions(self, quiz_id: int) -> list[QuizQuestion]:
        found = [q for q in self.questions.values() if q.quiz_id == quiz_id and q.workflow_state == "active"]
        return sorted(found, key=lambda q: (q.position, q.id))

    def quiz_points(self, quiz: Quiz) -> float:
        return float(sum(q.points_possible or 0 for q in self.quiz_questions(quiz.id)))

    def sync_quiz_assignment(self, quiz: Quiz) -> None:
        """A graded quiz (quiz_type assignment/graded_survey) owns an assignment that mirrors it."""
        course = self.courses[quiz.course_id]
        graded = quiz.quiz_type in ("assignment", "graded_survey") and quiz.workflow_state != "deleted"
        a = self.assignments.get(quiz.assignment_id) if quiz.assignment_id else None
        if not graded:
            if a is not None and a.workflow_state != "deleted":
                a.workflow_state = "deleted"
            return
        if a is None or a.workflow_state == "deleted":
            a = self.add_assignment(course, quiz.title, quiz.assignment_group_id)
            quiz.assignment_id = a.id
        a.name = quiz.title
        a.description = quiz.description
        a.due_at, a.lock_at, a.unlock_at = quiz.due_at, quiz.lock_at, quiz.unlock_at
        a.points_possible = self.quiz_points(quiz)
        a.submission_types = ["online_quiz"]
        a.quiz_id = quiz.id
        a.updated_at = self.now()
        quiz.assignment_group_id = a.group_id
        if quiz.published and not a.published:
            self.publish_assignment(a)
        elif not quiz.published:
            a.workflow_state = "unpublished"

    def quiz_submission_of(self, quiz_id: int, user_id: int) -> QuizSubmission | None:
        for qs in self.quiz_submissions.values():
            if qs.quiz_id == quiz_id and qs.user_id == user_id:
                return qs
        return None

    def start_quiz_attempt(self, quiz: Quiz, user: User) -> QuizSubmission:
        now = self.now()
        qs = self.quiz_submission_of(quiz.id, user.id)
        points = self.quiz_points(quiz)
        sub_id = None
        if quiz.assignment_id and quiz.assignment_id in self.assignments:
            sub_id = self.submission_for(self.assignments[quiz.assignment_id], user.id).id
        if qs is None:
            qs = QuizSubmission(id=self.next_id("quiz_submission"), quiz_id=quiz.id, user_id=user.id, attempt=1,
                                started_at=now, validation_token=self.random_hex(), quiz_points_possible=points,
                                quiz_version=quiz.version_number, submission_id=sub_id)
            self.quiz_submissions[qs.id] = qs
        else:
            qs.attempt += 1
            qs.started_at = now
            qs.finished_at = None
            qs.score = None
            qs.workflow_state = "untaken"
            qs.validation_token = self.random_hex()
            qs.answers = {}
            qs.flagged = set()
            qs.quiz_points_possible = points
            qs.quiz_version = quiz.version_number
            qs.time_spent = None
            qs.submission_id = sub_id
        limits = [t for t in (now + timedelta(minutes=quiz.time_limit) if quiz.time_limit else None, quiz.lock_at) if t]
        qs.end_at = min(limits) if limits else None
        return qs

    def complete_quiz_attempt(self, quiz: Quiz, qs: QuizSubmission) -> None:
        now = self.now()
        questions = self.quiz_questions(quiz.id)
        score, needs_review = grading.score_attempt(questions, qs.answers)
        qs.score = score
        qs.finished_at = now
        qs.time_spent = int((now - qs.started_at).total_seconds())
        qs.workflow_state = "pending_review" if needs_review else "complete"
        qs.manual_scores = {}
        qs.fudge_points = None
        qs.history.append(QuizAttempt(qs.attempt, score, now))
        self._post_quiz_score(quiz, qs, None, submitted=True)

    def rescore_quiz_attempt(self, quiz: Quiz, qs: QuizSubmission, scores: dict[int, float], fudge: float | None,
                             grader: User) -> None:
        """A teacher's per-question scores and fudge points for the latest finished attempt."""
        qs.manual_scores.update(scores)
        if fudge is not None:
            qs.fudge_points = fudge
        raw = sum(qs.manual_scores[q.id] if q.id in qs.manual_scores else grading.score_question(q, qs.answers.get(q.id))
                  for q in self.quiz_questions(quiz.id))
        qs.score = round(raw + (qs.fudge_points or 0), 2)
        if qs.history:
            qs.history[-1].score = qs.score
        qs.workflow_state = "complete"
        self._post_quiz_score(quiz, qs, grader, submitted=False)

    def _post_quiz_score(self, quiz: Quiz, qs: QuizSubmission, grader: User | None, submitted: bool) -> None:
        """Keep the attempt's kept score, and the graded quiz's assignment submission, in step with it."""
        qs.kept_score = grading.kept_score(quiz.scoring_policy, [h.score for h in qs.history])
        if not (quiz.assignment_id and quiz.assignment_id in self.assignments):
            return
        now = self.now()
        sub = self.submission_for(self.assignments[quiz.assignment_id], qs.user_id)
        if submitted:
            if sub.submitted_at is not None:
                sub.versions.append(snapshot(sub))
            sub.submission_type = "online_quiz"
            sub.submitted_at = now
            sub.attempt = qs.attempt
            sub.quiz_submission_id = qs.id
        sub.score = sub.entered_score = qs.kept_score
        sub.grade = sub.entered_grade = grading.format_number(qs.kept_score)
        sub.workflow_state = "pending_review" if qs.workflow_state == "pending_review" else "graded"
        sub.graded_at = now
        sub.grader_id = grader.id if grader else None
        qs.submission_id = sub.id

    # --- discussions ------------------------------------------------------------------------------

    def course_topics(self, course_id: int) -> list[DiscussionTopic]:
        return [t for t in self.topics.values() if t.course_id == course_id and t.workflow_state != "deleted"]

    # --- files -----------------------------------------------------------------------------------

    def root_folder(self, context_type: str, context_id: int) -> Folder:
        for f in self.folders.values():
            if f.context_type == context_type and f.context_id == context_id and f.parent_folder_id is None:
                return f
        name = "course files" if context_type == "Course" else "my files"
        f = Folder(self.next_id("folder"), context_type, context_id, name, name, None, self.now())
        self.folders[f.id] = f
        return f

    def subfolder(self, parent: Folder, name: str) -> Folder:
        for f in self.folders.values():
            if f.parent_folder_id == parent.id and f.name == name:
                return f
        position = 1 + sum(1 for f in self.folders.values() if f.parent_folder_id == parent.id)
        f = Folder(self.next_id("folder"), parent.context_type, parent.context_id, name,
                   f"{parent.full_name}/{name}", parent.id, self.now(), position)
        self.folders[f.id] = f
        return f

    def folder_files(self, folder_id: int) -> list[File]:
        return [f for f in self.files.values() if f.folder_id == folder_id and f.workflow_state != "deleted"]

    def context_files(self, context_type: str, context_id: int) -> list[File]:
        ids = {f.id for f in self.folders.values() if f.context_type == context_type and f.context_id == context_id}
        return sorted((f for f in self.files.values() if f.folder_id in ids and f.workflow_state != "deleted"),
                      key=lambda f: (f.display_name.lower(), f.id))


def sortable(name: str) -> str:
    """Canvas derives `sortable_name` from a name alone as "Last, First Middle"."""
    parts = name.strip().split()
    if len(parts) < 2:
        return name.strip()
    return f"{parts[-1]}, {' '.join(parts[:-1])}"


def snapshot(sub: Submission) -> dict:
    return {"attempt": sub.attempt, "submitted_at": sub.submitted_at, "submission_type": sub.submission_type,
            "body": sub.body, "url": sub.url, "attachment_ids": list(sub.attachment_ids), "score": sub.score,
            "grade": sub.grade, "workflow_state": sub.workflow_state}


def is_staff_type(type_: str) -> bool:
    return type_ in STAFF_TYPES
