"""Scores: quiz answers against their questions, and a teacher's `posted_grade` against an assignment.

Quiz scoring follows Canvas's rules per question type (an answer id for multiple choice and
true/false, text matched case-insensitively for short answers, partial credit for multiple answers,
matching and multiple blanks, tolerance for numerical answers); essay and file-upload questions score
0 and leave the attempt pending review, as they wait for a teacher in Canvas.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, overload

from decathlon.emulators.canvas.errors import ApiError
from decathlon.emulators.canvas.model import QuizQuestion
from decathlon.emulators.kit.params import as_float, as_int

MANUAL_TYPES = ("essay_question", "file_upload_question")
NO_POINTS_TYPES = ("text_only_question",)

# Canvas's default letter-grade scheme: lowest percentage for each letter
DEFAULT_SCHEME = (("A", 94.0), ("A-", 90.0), ("B+", 87.0), ("B", 84.0), ("B-", 80.0), ("C+", 77.0), ("C", 74.0),
                  ("C-", 70.0), ("D+", 67.0), ("D", 64.0), ("D-", 61.0), ("F", 0.0))


@overload
def format_number(value: float) -> str: ...
@overload
def format_number(value: float | None) -> str | None: ...
def format_number(value: float | None) -> str | None:
    if value is None:
        return None
    value = round(float(value), 2)
    return str(int(value)) if value.is_integer() else f"{value:g}"


def _norm(text: Any) -> str:
    return " ".join(str(text or "").split()).lower()


def _answer_ids(q: QuizQuestion) -> dict[int, dict]:
    return {int(a["id"]): a for a in q.answers if a.get("id") is not None}


def _correct(a: dict) -> bool:
    return (as_float(a.get("weight"), 0.0) or 0.0) > 0


def score_question(q: QuizQuestion, answer: Any) -> float:
    points = float(q.points_possible or 0)
    t = q.question_type
    if answer is None or t in NO_POINTS_TYPES or t in MANUAL_TYPES:
        return 0.0
    if t in ("multiple_choice_question", "true_false_question"):
        chosen = _answer_ids(q).get(as_int(answer, -1))
        return points if chosen is not None and _correct(chosen) else 0.0
    if t == "short_answer_question":
        return points if any(_norm(a.get("text")) == _norm(answer) and _correct(a) for a in q.answers) else 0.0
    if t == "multiple_answers_question":
        picked = {as_int(x, -1) for x in (answer if isinstance(answer, list) else [answer])}
        correct = {int(a["id"]) for a in q.answers if _correct(a)}
        if not correct:
            return 0.0
        hits = len(picked & correct) - len(picked - correct)
        return max(0.0, points * hits / len(correct))
    if t in ("fill_in_multiple_blanks_question", "multiple_dropdowns_question"):
        if not isinstance(answer, dict):
            return 0.0
        blanks = sorted({str(a.get("blank_id")) for a in q.answers if a.get("blank_id") is not None})
        if not blanks:
            return 0.0
        right = 0
        for blank in blanks:
            given = answer.get(blank)
            options = [a for a in q.answers if str(a.get("blank_id")) == blank and _correct(a)]
            if t == "multiple_dropdowns_question":
                ok = any(int(a["id"]) == as_int(given, -1) for a in options)
            else:
                ok = any(_norm(a.get("text")) == _norm(given) for a in options)
            right += ok
        return points * right / len(blanks)
    if t == "matching_question":
        pairs = answer if isinstance(answer, list) else []
        matches = {int(a["id"]): as_int(a.get("match_id")) for a in q.answers if a.get("id") is not None}
        if not matches:
            return 0.0
        right = sum(1 for p in pairs if isinstance(p, dict)
                    and matches.get(as_int(p.get("answer_id"), -1)) == as_int(p.get("match_id"), -2))
        return points * right / len(matches)
    if t == "numerical_question":
        value = as_float(answer)
        if value is None:
            return 0.0
        return points if any(_numeric_ok(a, value) for a in q.answers) else 0.0
    return 0.0


def _numeric_ok(a: dict, value: float) -> bool:
    kind = a.get("numerical_answer_type") or "exact_answer"
    if kind == "range_answer":
        lo, hi = as_float(a.get("start")), as_float(a.get("end"))
        return lo is not None and hi is not None and min(lo, hi) <= value <= max(lo, hi)
    if kind == "precision_answer":
        target, precision = as_float(a.get("approximate")), as_int(a.get("precision"), 10)
        if target is None:
            return False
        return _sig(value, precision) == _sig(target, precision)
    exact = as_float(a.get("exact"))
    if exact is None:
        exact = as_float(a.get("text"))
    margin = abs(as_float(a.get("margin"), 0.0) or 0.0)
    return exact is not None and abs(value - exact) <= margin + 1e-9


def _sig(x: float, digits: int) -> float:
    if x == 0:
        return 0.0
    return round(x, -int(math.floor(math.log10(abs(x)))) + (digits - 1))


def score_attempt(questions: Iterable[QuizQuestion], answers: dict[int, Any]) -> tuple[float, bool]:
    total, review = 0.0, False
    for q in questions:
        total += score_question(q, answers.get(q.id))
        if q.question_type in MANUAL_TYPES:
            review = True
    return round(total, 2), review


def kept_score(policy: str, scores: list[float]) -> float | None:
    if not scores:
        return None
    if policy == "keep_latest":
        return scores[-1]
    if policy == "keep_average":
        return round(sum(scores) / len(scores), 2)
    return max(scores)


# --- posted grades -----------------------------------------------------------------------------

def letter_for(percent: float) -> str:
    for letter, floor in DEFAULT_SCHEME:
        if percent >= floor:
            return letter
    return "F"


def parse_posted_grade(raw: Any, grading_type: str, points_possible: float | None) -> tuple[str | None, float | None]:
    """(grade, score) from a `posted_grade`, as Canvas reads it for the assignment's grading type."""
    if raw is None:
        return None, None
    text = str(raw).strip()
    if text == "":
        return None, None
    points = float(points_possible or 0)
    lowered = text.lower()
    if grading_type == "pass_fail" or lowered in ("pass", "complete", "fail", "incomplete"):
        passed = lowered in ("pass", "complete") or (as_float(text) is not None and (as_float(text) or 0) > 0)
        return ("complete" if passed else "incomplete"), (points if passed else 0.0)
    if text.endswith("%"):
        pct = as_float(text[:-1])
        if pct is None:
            raise _bad_grade()
        score = round(points * pct / 100, 2)
        if grading_type == "letter_grade":
            return letter_for(pct), score
        return (format_number(pct) + "%" if grading_type == "percent" else format_number(score)), score
    value = as_float(text)
    if value is None:
        for letter, floor in DEFAULT_SCHEME:
            if letter.lower() == lowered:
                return letter, round(points * floor / 100, 2)
        raise _bad_grade()
    if grading_type == "percent":
        return format_number(value) + "%", round(points * value / 100, 2)
    if grading_type == "letter_grade":
        pct = value / points * 100 if points else 0
        return letter_for(pct), value
    return format_number(value), round(value, 2)


def _bad_grade() -> ApiError:
    return ApiError(400, {"errors": {"grade": [{"attribute": "grade", "type": "invalid", "message": "invalid"}]}})
