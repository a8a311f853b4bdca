"""Classic quizzes and their questions. A graded quiz owns an assignment (see Store.sync_quiz_assignment)."""
from __future__ import annotations

from typing import Any

from decathlon.emulators.canvas import access, errors
from decathlon.emulators.canvas.api.courses import time_field
from decathlon.emulators.canvas.http import Ctx, Reply, Routes
from decathlon.emulators.canvas.model import Course, Quiz, QuizQuestion
from decathlon.emulators.kit.params import as_bool, as_float, as_int, as_list
from decathlon.emulators.canvas.views import View

routes = Routes()

QUIZ_TYPES = ("practice_quiz", "assignment", "graded_survey", "survey")
SCORING = ("keep_highest", "keep_latest", "keep_average")
HIDE_RESULTS = (None, "always", "until_after_last_attempt")
BOOL_FIELDS = ("shuffle_answers", "show_correct_answers", "show_correct_answers_last_attempt",
               "one_question_at_a_time", "cant_go_back", "one_time_results", "only_visible_to_overrides")

# Canvas accepts both the documented answer parameter names and the stored ones
ANSWER_KEYS = {"answer_text": "text", "text": "text", "answer_html": "html", "html": "html",
               "answer_comments": "comments", "comments": "comments", "answer_comment_html": "comments_html",
               "comments_html": "comments_html", "answer_weight": "weight", "weight": "weight",
               "blank_id": "blank_id", "answer_match_left": "left", "left": "left",
               "answer_match_right": "right", "right": "right", "numerical_answer_type": "numerical_answer_type",
               "answer_exact": "exact", "exact": "exact", "answer_error_margin": "margin", "margin": "margin",
               "answer_approximate": "approximate", "approximate": "approximate", "answer_precision": "precision",
               "precision": "precision", "answer_range_start": "start", "start": "start",
               "answer_range_end": "end", "end": "end", "match_id": "match_id", "id": "id"}
NUMERIC = ("weight", "exact", "margin", "approximate", "start", "end")


def quiz_of(ctx: Ctx, course: Course, name: str = "quiz_id") -> Quiz:
    q = ctx.store.quizzes.get(ctx.id(name))
    if q is None or q.course_id != course.id or q.workflow_state == "deleted":
        raise errors.not_found()
    if not q.published and not access.is_staff(ctx.store, ctx.user, course):
        raise errors.unauthorized()
    return q


def apply_quiz_fields(ctx: Ctx, q: Quiz, fields: dict) -> None:
    if "title" in fields:
        q.title = str(fields["title"] or "Unnamed Quiz")
    if "description" in fields:
        q.description = "" if fields["description"] is None else str(fields["description"])
    if "quiz_type" in fields and fields["quiz_type"] is not None:
        kind = str(fields["quiz_type"])
        if kind not in QUIZ_TYPES:
            raise errors.invalid("invalid_quiz_type", "Quiz type is not valid")
        q.quiz_type = kind
    if "scoring_policy" in fields and fields["scoring_policy"] is not None:
        policy = str(fields["scoring_policy"])
        if policy not in SCORING:
            raise errors.invalid("invalid_scoring_policy", "Scoring policy is not valid")
        q.scoring_policy = policy
    if "hide_results" in fields:
        hide = fields["hide_results"] or None
        if hide not in HIDE_RESULTS:
            raise errors.invalid("invalid_hide_results", "Hide results is not valid")
        q.hide_results = hide
    if "time_limit" in fields:
        limit = as_int(fields["time_limit"])
        q.time_limit = limit if limit and limit > 0 else None
    if "allowed_attempts" in fields:
        attempts = as_int(fields["allowed_attempts"], 1)
        q.allowed_attempts = -1 if attempts is not None and attempts < 0 else (attempts or 1)
    for key in BOOL_FIELDS:
        if key in fields:
            setattr(q, key, bool(as_bool(fields[key], False)))
    for key in ("access_code", "ip_filter"):
        if key in fields:
            setattr(q, key, str(fields[key]) if fields[key] not in (None, "") else None)
    for key in ("due_at", "lock_at", "unlock_at", "show_correct_answers_at", "hide_correct_answers_at"):
        if key in fields:
            setattr(q, key, time_field(fields[key], key))
    if "assignment_group_id" in fields:
        gid = as_int(fields["assignment_group_id"])
        g = ctx.store.groups.get(gid) if gid is not None else None
        if g is not None and g.course_id == q.course_id:
            q.assignment_group_id = g.id
            if q.assignment_id in ctx.store.assignments:
                ctx.store.assignments[q.assignment_id].group_id = g.id
    q.updated_at = ctx.store.now()


def set_quiz_published(ctx: Ctx, q: Quiz, fields: dict) -> None:
    if "published" not in fields:
        return
    want = bool(as_bool(fields["published"], False))
    if want and not q.published:
        q.workflow_state = "available"
        q.version_number += 1
        q.edited = False
    elif not want and q.published:
        if any(s.quiz_id == q.id for s in ctx.store.quiz_submissions.values()):
            raise errors.invalid("published", "Can't unpublish if there are student submissions", "unpublish")
        q.workflow_state = "unpublished"


@routes.get("/api/v1/courses/{course_id}/quizzes")
async def list_quizzes(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    staff = access.is_staff(store, ctx.user, course)
    found = [q for q in store.quizzes.values() if q.course_id == course.id and q.workflow_state != "deleted"
             and (staff or q.published)]
    term = ctx.param("search_term")
    if term:
        found = [q for q in found if str(term).lower() in q.title.lower()]
    # Canvas lists quizzes by due date (undated last), then title
    found.sort(key=lambda q: (q.due_at is None, q.due_at.timestamp() if q.due_at else 0, q.title.lower(), q.id))
    view = View(store, ctx.user, ctx.html_base)
    return ctx.paged(found, view.quiz)


@routes.get("/api/v1/courses/{course_id}/quizzes/{quiz_id}")
async def get_quiz(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    return View(ctx.store, ctx.user, ctx.html_base).quiz(quiz_of(ctx, course))


@routes.post("/api/v1/courses/{course_id}/quizzes")
async def create_quiz(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    fields = ctx.param("quiz") if isinstance(ctx.param("quiz"), dict) else {}
    now = store.now()
    q = Quiz(id=0, course_id=course.id, title=str(fields.get("title") or "Unnamed Quiz"), created_at=now,
             updated_at=now)
    apply_quiz_fields(ctx, q, {k: v for k, v in fields.items() if k not in ("title", "published")})
    q.id = store.next_id("quiz")
    store.quizzes[q.id] = q
    set_quiz_published(ctx, q, fields)
    store.sync_quiz_assignment(q)
    return View(store, ctx.user, ctx.html_base).quiz(q)


@routes.put("/api/v1/courses/{course_id}/quizzes/{quiz_id}")
async def update_quiz(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    q = quiz_of(ctx, course)
    fields = ctx.param("quiz") if isinstance(ctx.param("quiz"), dict) else {}
    was_published = q.published
    apply_quiz_fields(ctx, q, fields)
    set_quiz_published(ctx, q, fields)
    if q.published and was_published and set(fields) - {"published", "notify_of_update"}:
        q.version_number += 1
    store.sync_quiz_assignment(q)
    return View(store, ctx.user, ctx.html_base).quiz(q)


@routes.delete("/api/v1/courses/{course_id}/quizzes/{quiz_id}")
async def delete_quiz(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    q = quiz_of(ctx, course)
    out = View(store, ctx.user, ctx.html_base).quiz(q)
    q.workflow_state = "deleted"
    store.sync_quiz_assignment(q)
    return out


# --- questions -------------------------------------------------------------------------------------

def normalize_answers(ctx: Ctx, raw: Any, previous: list[dict] | None = None) -> list[dict]:
    """Canvas's stored answer records, with a random 4-digit id per answer unique in the question."""
    taken = {int(a["id"]) for a in previous or [] if a.get("id") is not None}
    out = []
    for item in as_list(raw):
        if not isinstance(item, dict):
            continue
        answer: dict[str, Any] = {}
        for key, value in item.items():
            target = ANSWER_KEYS.get(key)
            if target is None or target in answer:
                continue
            answer[target] = value
        for key in NUMERIC:
            if key in answer:
                answer[key] = as_float(answer[key], 0.0)
        aid = as_int(answer.get("id"))
        if aid is None or aid in taken:
            aid = ctx.store.rng.randint(1, 9999)
            while aid in taken:
                aid = ctx.store.rng.randint(1, 9999)
        taken.add(aid)
        record = {"id": aid, "text": str(answer.get("text") or ""), "html": str(answer.get("html") or ""),
                  "comments": str(answer.get("comments") or ""), "comments_html": str(answer.get("comments_html") or ""),
                  "weight": answer.get("weight", 0.0)}
        for key in ("blank_id", "left", "right", "numerical_answer_type", "exact", "margin", "approximate",
                    "precision", "start", "end"):
            if key in answer:
                record[key] = answer[key]
        if "left" in record or "right" in record:
            record["match_id"] = as_int(answer.get("match_id")) or ctx.store.rng.randint(1, 9999)
        out.append(record)
    return out


def apply_question_fields(ctx: Ctx, q: QuizQuestion, fields: dict) -> None:
    for key in ("question_name", "question_text", "correct_comments", "incorrect_comments", "neutral_comments",
                "correct_comments_html", "incorrect_comments_html", "neutral_comments_html", "text_after_answers"):
        if key in fields and fields[key] is not None:
            setattr(q, key, str(fields[key]))
    if "question_type" in fields and fields["question_type"]:
        q.question_type = str(fields["question_type"])
    if "points_possible" in fields:
        q.points_possible = as_float(fields["points_possible"], 0.0) or 0.0
    if "answers" in fields:
        q.answers = normalize_answers(ctx, fields["answers"], q.answers)
    if "matching_answer_incorrect_matches" in fields:
        q.matching_answer_incorrect_matches = fields["matching_answer_incorrect_matches"]
    if "quiz_group_id" in fields:
        q.quiz_group_id = as_int(fields["quiz_group_id"])
    q.updated_at = ctx.store.now()


def place(ctx: Ctx, q: QuizQuestion, position: int | None) -> None:
    """Put a question at `position` (1-based), renumbering the others the way Canvas does."""
    others = [x for x in ctx.store.quiz_questions(q.quiz_id) if x.id != q.id]
    index = len(others) if position is None else max(0, min(len(others), position - 1))
    others.insert(index, q)
    for i, x in enumerate(others, start=1):
        x.position = i


def question_of(ctx: Ctx, quiz: Quiz) -> QuizQuestion:
    q = ctx.store.questions.get(ctx.id("question_id"))
    if q is None or q.quiz_id != quiz.id or q.workflow_state != "active":
        raise errors.not_found()
    return q


def mark_edited(ctx: Ctx, quiz: Quiz) -> None:
    quiz.updated_at = ctx.store.now()
    if not quiz.published and not quiz.edited:
        quiz.version_number += 1
        quiz.edited = True
    ctx.store.sync_quiz_assignment(quiz)


@routes.get("/api/v1/courses/{course_id}/quizzes/{quiz_id}/questions")
async def list_questions(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    quiz = quiz_of(ctx, course)
    view = View(store, ctx.user, ctx.html_base)
    questions = store.quiz_questions(quiz.id)
    if access.is_staff(store, ctx.user, course):
        return ctx.paged(questions, view.question, default_per_page=10)
    qs_id = as_int(ctx.param("quiz_submission_id"))
    qs = store.quiz_submissions.get(qs_id) if qs_id is not None else None
    if qs is None or qs.user_id != ctx.user.id or qs.quiz_id != quiz.id:
        raise errors.unauthorized()
    return ctx.paged(questions, lambda q: view.censored_question(q, qs))


@routes.get("/api/v1/courses/{course_id}/quizzes/{quiz_id}/questions/{question_id}")
async def get_question(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    quiz = quiz_of(ctx, course)
    return View(store, ctx.user, ctx.html_base).question(question_of(ctx, quiz))


@routes.post("/api/v1/courses/{course_id}/quizzes/{quiz_id}/questions")
async def create_question(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    quiz = quiz_of(ctx, course)
    fields = ctx.param("question") if isinstance(ctx.param("question"), dict) else {}
    now = store.now()
    q = QuizQuestion(id=store.next_id("quiz_question"), quiz_id=quiz.id, position=0,
                     question_type=str(fields.get("question_type") or "text_only_question"),
                     question_name=str(fields.get("question_name") or "Question"),
                     question_text=str(fields.get("question_text") or ""), points_possible=0.0,
                     created_at=now, updated_at=now)
    apply_question_fields(ctx, q, {k: v for k, v in fields.items() if k not in ("question_type", "question_name")})
    store.questions[q.id] = q
    place(ctx, q, as_int(fields.get("position")))
    mark_edited(ctx, quiz)
    return View(store, ctx.user, ctx.html_base).question(q, with_bank=True)


@routes.put("/api/v1/courses/{course_id}/quizzes/{quiz_id}/questions/{question_id}")
async def update_question(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    quiz = quiz_of(ctx, course)
    q = question_of(ctx, quiz)
    fields = ctx.param("question") if isinstance(ctx.param("question"), dict) else {}
    apply_question_fields(ctx, q, fields)
    if "position" in fields:
        place(ctx, q, as_int(fields["position"]))
    mark_edited(ctx, quiz)
    return View(store, ctx.user, ctx.html_base).question(q, with_bank=True)


@routes.delete("/api/v1/courses/{course_id}/quizzes/{quiz_id}/questions/{question_id}")
async def delete_question(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    quiz = quiz_of(ctx, course)
    q = question_of(ctx, quiz)
    q.workflow_state = "deleted"
    for i, x in enumerate(store.quiz_questions(quiz.id), start=1):
        x.position = i
    mark_edited(ctx, quiz)
    return Reply(None, 204, raw=b"", content_type="text/plain")


@routes.post("/api/v1/courses/{course_id}/quizzes/{quiz_id}/reorder")
async def reorder(ctx: Ctx):
    store = ctx.store
    course = access.course_for_manage(store, ctx.user, ctx.id("course_id"))
    quiz = quiz_of(ctx, course)
    order = [x for x in as_list(ctx.param("order")) if isinstance(x, dict)]
    for i, item in enumerate(order, start=1):
        q = store.questions.get(as_int(item.get("id"), -1) or -1)
        if q is not None and q.quiz_id == quiz.id:
            q.position = i
    return Reply(None, 204, raw=b"", content_type="text/plain")
