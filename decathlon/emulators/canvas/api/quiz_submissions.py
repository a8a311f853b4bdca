"""Taking a quiz: start an attempt, answer its questions, complete it; and reading attempts back.

Errors are Canvas's quiz-service refusals (`{"status", "message"}` with 400/403/409/501), e.g.
409 "a quiz submission already exists" when an attempt is in progress or none are left.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from decathlon.emulators.canvas import access, errors
from decathlon.emulators.canvas.api.quizzes import quiz_of
from decathlon.emulators.canvas.api.submissions import request_error
from decathlon.emulators.canvas.http import Ctx, Routes
from decathlon.emulators.canvas.model import Course, Quiz, QuizQuestion, QuizSubmission
from decathlon.emulators.kit.params import as_float, as_int, as_list
from decathlon.emulators.canvas.views import COMPLETE_ORDER, View, reorder

routes = Routes()


def _envelope(ctx: Ctx, items: Sequence[QuizSubmission | dict]) -> dict:
    view = View(ctx.store, ctx.user, ctx.html_base)
    return {"quiz_submissions": [x if isinstance(x, dict) else view.quiz_submission(x) for x in items]}


def _attempt_views(ctx: Ctx, qs: QuizSubmission) -> list[dict]:
    """A finished quiz submission as Canvas lists it to its student: one entry per finished attempt."""
    view = View(ctx.store, ctx.user, ctx.html_base)
    current = view.quiz_submission(qs)
    out = []
    for h in qs.history:
        if h.attempt == qs.attempt:
            continue
        out.append({**current, "attempt": h.attempt, "score": h.score,
                    "finished_at": h.finished_at.strftime("%Y-%m-%dT%H:%M:%SZ")})
    out.append(current)
    return out


def can_take(ctx: Ctx, course: Course, quiz: Quiz) -> bool:
    return quiz.published and access.is_student(ctx.store, ctx.user, course) and course.workflow_state == "available"


def submission_of(ctx: Ctx, quiz: Quiz, raw: str) -> QuizSubmission:
    store = ctx.store
    if raw == "self":
        qs = store.quiz_submission_of(quiz.id, ctx.user.id)
    else:
        qid = as_int(raw)
        qs = store.quiz_submissions.get(qid) if qid is not None else None
        if qs is not None and qs.quiz_id != quiz.id:
            qs = None
    if qs is None:
        raise errors.not_found()
    course = store.courses[quiz.course_id]
    if qs.user_id != ctx.user.id and not access.is_staff(store, ctx.user, course):
        raise errors.unauthorized()
    return qs


def _check_takeable(ctx: Ctx, quiz: Quiz) -> None:
    if quiz.cant_go_back:
        raise request_error(501, "that type of quizzes is not supported yet")
    now = ctx.store.now()
    if quiz.access_code and str(ctx.param("access_code") or "") != quiz.access_code:
        raise request_error(403, "invalid access code")
    if (quiz.unlock_at and now < quiz.unlock_at) or (quiz.lock_at and now > quiz.lock_at):
        raise request_error(400, "quiz is locked")


@routes.get("/api/v1/courses/{course_id}/quizzes/{quiz_id}/submissions")
async def list_quiz_submissions(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    quiz = quiz_of(ctx, course)
    if access.is_staff(store, ctx.user, course):
        students = {u.id for u in store.students(course.id)}
        found = sorted((qs for qs in store.quiz_submissions.values() if qs.quiz_id == quiz.id and qs.user_id in students),
                       key=lambda qs: qs.id)
        page = ctx.paged(found)
        page.body = _envelope(ctx, page.body)
        return page
    if not can_take(ctx, course, quiz):
        raise errors.unauthorized()
    qs = store.quiz_submission_of(quiz.id, ctx.user.id)
    if qs is None:
        return _envelope(ctx, [])
    if qs.workflow_state == "untaken":
        return _envelope(ctx, [qs])
    return _envelope(ctx, _attempt_views(ctx, qs))


@routes.get("/api/v1/courses/{course_id}/quizzes/{quiz_id}/submission")
async def my_quiz_submission(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    quiz = quiz_of(ctx, course)
    if not can_take(ctx, course, quiz):
        raise errors.unauthorized()
    qs = store.quiz_submission_of(quiz.id, ctx.user.id)
    return _envelope(ctx, [qs] if qs else [])


@routes.get("/api/v1/courses/{course_id}/quizzes/{quiz_id}/submissions/{submission_id}")
async def get_quiz_submission(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    quiz = quiz_of(ctx, course)
    return _envelope(ctx, [submission_of(ctx, quiz, ctx.request.match_info["submission_id"])])


@routes.post("/api/v1/courses/{course_id}/quizzes/{quiz_id}/submissions")
async def start_attempt(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    quiz = quiz_of(ctx, course)
    if not can_take(ctx, course, quiz):
        raise request_error(403, "you are not allowed to participate in this quiz")
    _check_takeable(ctx, quiz)
    existing = store.quiz_submission_of(quiz.id, ctx.user.id)
    if existing is not None:
        left = quiz.allowed_attempts == -1 or existing.attempt < quiz.allowed_attempts + (existing.extra_attempts or 0)
        if existing.workflow_state == "untaken" or not left:
            raise request_error(409, "a quiz submission already exists")
    qs = store.start_quiz_attempt(quiz, ctx.user)
    if store.quiz_start_500:
        raise errors.ApiError(500, errors.internal(store.error_report()))
    return _envelope(ctx, [qs])


def _check_owner_attempt(ctx: Ctx, qs: QuizSubmission, verb: str) -> None:
    if qs.user_id != ctx.user.id:
        raise request_error(403, f"you are not allowed to {verb}")
    token = ctx.param("validation_token")
    if token is None or str(token) != qs.validation_token:
        raise request_error(403, "invalid token")


def _check_attempt(qs: QuizSubmission, raw: Any) -> None:
    attempt = as_int(raw)
    if attempt is None:
        raise request_error(400, "invalid attempt")
    if attempt != qs.attempt:
        raise request_error(400, f"attempt {attempt} can not be modified")


@routes.post("/api/v1/courses/{course_id}/quizzes/{quiz_id}/submissions/{submission_id}/complete")
async def complete_attempt(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    quiz = quiz_of(ctx, course)
    qs = submission_of(ctx, quiz, ctx.request.match_info["submission_id"])
    if not can_take(ctx, course, quiz):
        raise request_error(403, "you are not allowed to complete this quiz submission")
    _check_takeable(ctx, quiz)
    _check_owner_attempt(ctx, qs, "complete this quiz submission")
    if qs.workflow_state != "untaken":
        raise request_error(400, "quiz submission is already complete")
    _check_attempt(qs, ctx.param("attempt"))
    store.complete_quiz_attempt(quiz, qs)
    view = View(store, ctx.user, ctx.html_base)
    return _envelope(ctx, [reorder(view.quiz_submission(qs), COMPLETE_ORDER)])


@routes.put("/api/v1/courses/{course_id}/quizzes/{quiz_id}/submissions/{submission_id}")
async def update_scores(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    quiz = quiz_of(ctx, course)
    qs = submission_of(ctx, quiz, ctx.request.match_info["submission_id"])
    if not access.is_staff(store, ctx.user, course):
        raise request_error(403, "you are not allowed to update scores for this quiz submission")
    items = ctx.param("quiz_submissions")
    if not isinstance(items, list):
        raise request_error(400, "missing required key :quiz_submissions")
    if items and isinstance(items[0], dict):
        data = items[0]
        attempt = as_int(data.get("attempt"))
        if attempt is None or attempt != qs.attempt:
            raise request_error(400, "invalid attempt")
        if qs.workflow_state == "untaken":
            raise request_error(400, "quiz submission attempt must be complete")
        overrides = data.get("questions")
        if not isinstance(overrides, dict):
            overrides = {}
        scores: dict[int, float] = {}
        for raw_id, entry in overrides.items():
            qid = as_int(raw_id)
            score = entry.get("score") if isinstance(entry, dict) else None
            if qid is None or score in (None, ""):
                continue
            value = as_float(score)
            if value is None:
                raise request_error(400, "question score must be an unsigned decimal")
            scores[qid] = value
        store.rescore_quiz_attempt(quiz, qs, scores, as_float(data.get("fudge_points")), ctx.user)
    return _envelope(ctx, [qs])


@routes.get("/api/v1/courses/{course_id}/quizzes/{quiz_id}/submissions/{submission_id}/time")
async def attempt_time(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    quiz = quiz_of(ctx, course)
    qs = submission_of(ctx, quiz, ctx.request.match_info["submission_id"])
    left = None
    if qs.end_at is not None:
        left = max(0, int((qs.end_at - ctx.store.now()).total_seconds()))
    return {"end_at": qs.end_at.strftime("%Y-%m-%dT%H:%M:%SZ") if qs.end_at else None, "time_left": left}


# --- /quiz_submissions/:id/questions -----------------------------------------------------------

def _quiz_submission(ctx: Ctx) -> tuple[Course, Quiz, QuizSubmission]:
    store = ctx.store
    qs = store.quiz_submissions.get(ctx.id("quiz_submission_id"))
    if qs is None:
        raise errors.not_found()
    quiz = store.quizzes.get(qs.quiz_id)
    if quiz is None or quiz.workflow_state == "deleted":
        raise errors.not_found()
    course = access.course_for_read(store, ctx.user, quiz.course_id)
    if qs.user_id != ctx.user.id and not access.is_staff(store, ctx.user, course):
        raise errors.unauthorized()
    return course, quiz, qs


@routes.get("/api/v1/quiz_submissions/{quiz_submission_id}/questions")
async def submission_questions(ctx: Ctx):
    store = ctx.store
    course, quiz, qs = _quiz_submission(ctx)
    staff = access.is_staff(store, ctx.user, course)
    if qs.workflow_state != "untaken" and not staff and quiz.hide_results == "always":
        raise request_error(401, "Cannot view questions due to quiz settings")
    view = View(store, ctx.user, ctx.html_base)
    return {"quiz_submission_questions": [view.censored_question(q, qs) for q in store.quiz_questions(quiz.id)]}


def _serialize_answer(q: QuizQuestion, answer: Any) -> Any:
    """The answer as Canvas stores it for the question's type; ApiError 400 with its message if invalid."""
    t = q.question_type
    ids = {int(a["id"]) for a in q.answers if a.get("id") is not None}
    if t in ("multiple_choice_question", "true_false_question"):
        aid = as_int(answer)
        if aid is None:
            raise request_error(400, "Answer must be of type integer")
        if aid not in ids:
            raise request_error(400, f"Unknown answer '{aid}'")
        return aid
    if t == "multiple_answers_question":
        chosen = []
        for x in as_list(answer):
            aid = as_int(x)
            if aid is None:
                raise request_error(400, "Answer must be of type integer")
            if aid not in ids:
                raise request_error(400, f"Unknown answer '{aid}'")
            chosen.append(aid)
        return chosen
    if t == "numerical_question":
        value = as_float(answer)
        if value is None and answer not in (None, ""):
            raise request_error(400, "Parameter must be numeric")
        return value
    if t in ("fill_in_multiple_blanks_question", "multiple_dropdowns_question"):
        if not isinstance(answer, dict):
            raise request_error(400, "Answer must be of type hash")
        return {str(k): v for k, v in answer.items()}
    if t == "matching_question":
        pairs = []
        for p in as_list(answer):
            if not isinstance(p, dict):
                raise request_error(400, "Answer must be of type array")
            pairs.append({"answer_id": as_int(p.get("answer_id")), "match_id": as_int(p.get("match_id"))})
        return pairs
    if answer is None:
        return None
    text = str(answer)
    if len(text) > 16384:
        raise request_error(400, "Text is too long.")
    return text


@routes.post("/api/v1/quiz_submissions/{quiz_submission_id}/questions")
async def answer_questions(ctx: Ctx):
    store = ctx.store
    course, quiz, qs = _quiz_submission(ctx)
    if qs.user_id != ctx.user.id:
        raise request_error(403, "you are not allowed to update questions for this quiz submission")
    if qs.workflow_state != "untaken":
        raise request_error(400, "quiz submission is already complete")
    if qs.end_at is not None and store.now() > qs.end_at:
        raise request_error(400, "quiz submission is overdue")
    if not can_take(ctx, course, quiz):
        raise request_error(403, "you are not allowed to update questions for this quiz submission")
    _check_takeable(ctx, quiz)
    _check_owner_attempt(ctx, qs, "update questions for this quiz submission")
    _check_attempt(qs, ctx.param("attempt"))
    given: dict[int, Any] = {}
    for item in as_list(ctx.param("quiz_questions")):
        if isinstance(item, dict) and item.get("id") not in (None, ""):
            qid = as_int(item.get("id"))
            if qid is not None:
                given[qid] = item.get("answer")
    questions = {q.id: q for q in store.quiz_questions(quiz.id)}
    answered = []
    staged: dict[int, Any] = {}
    for qid, answer in given.items():
        q = questions.get(qid)
        if q is None:
            continue
        staged[qid] = _serialize_answer(q, answer)
        answered.append(q)
    qs.answers.update(staged)
    return {"quiz_submission_questions": [{"id": q.id, "flagged": q.id in qs.flagged, "answer": qs.answers.get(q.id)}
                                          for q in answered]}


async def _flag(ctx: Ctx, flagged: bool):
    _course, quiz, qs = _quiz_submission(ctx)
    if qs.user_id != ctx.user.id:
        raise request_error(403, "you are not allowed to update questions for this quiz submission")
    if qs.workflow_state != "untaken":
        raise request_error(400, "quiz submission is already complete")
    _check_owner_attempt(ctx, qs, "update questions for this quiz submission")
    _check_attempt(qs, ctx.param("attempt"))
    q = ctx.store.questions.get(ctx.id("question_id"))
    if q is None or q.quiz_id != quiz.id or q.workflow_state != "active":
        raise errors.not_found()
    if flagged:
        qs.flagged.add(q.id)
    else:
        qs.flagged.discard(q.id)
    return {"quiz_submission_questions": [{"id": q.id, "flagged": flagged, "answer": qs.answers.get(q.id)}]}


@routes.put("/api/v1/quiz_submissions/{quiz_submission_id}/questions/{question_id}/flag")
async def flag(ctx: Ctx):
    return await _flag(ctx, True)


@routes.put("/api/v1/quiz_submissions/{quiz_submission_id}/questions/{question_id}/unflag")
async def unflag(ctx: Ctx):
    return await _flag(ctx, False)
