"""Each tool: the reference's own argument checks, the Canvas call, and the result text.

Most results are ``JSON.stringify(result, null, 2)`` of what Canvas answered; the deletions
answer a sentence. A failed check throws ``Missing required field(s): ...`` with the
reference's wording, tested with JavaScript truthiness (so ``0`` and ``""`` count as missing).
Arguments the reference passes through unfiltered (a course's or assignment's fields, a quiz
question, account course filters, a profile) are passed through here too, in their order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Awaitable, Callable

from decathlon.standins.memory.stringify import stringify

from .api import CanvasApi, PlainError
from .client import CanvasClient, _member
from .jsargs import UNDEFINED, arg, rest, to_string, truthy
from .upload import upload_file_from_path
from .users import SessionManager, list_account_users


@dataclass
class Context:
    api: CanvasApi
    client: CanvasClient
    sessions: SessionManager = field(default_factory=SessionManager)


Handler = Callable[[Context, dict[str, Any]], Awaitable[str | None]]


def json_text(value: Any) -> str | None:
    """``JSON.stringify(value, null, 2)``; None where JavaScript gives ``undefined``."""
    if value is UNDEFINED:
        return None
    return stringify(value, "  ")


def _need(args: dict[str, Any], keys: tuple[str, ...], message: str) -> None:
    if not all(truthy(arg(args, key)) for key in keys):
        raise PlainError(message)


def _fields(*keys: str) -> str:
    if len(keys) == 1:
        return f"Missing required field: {keys[0]}"
    if len(keys) == 2:
        return f"Missing required fields: {keys[0]} and {keys[1]}"
    return f"Missing required fields: {', '.join(keys[:-1])}, and {keys[-1]}"


def _needs(*keys: str) -> Callable[[dict[str, Any]], None]:
    message = _fields(*keys)
    return lambda args: _need(args, keys, message)


TOOLS: dict[str, Handler] = {}


def tool(name: str, check: Callable[[dict[str, Any]], None] | None = None) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        async def checked(ctx: Context, args: dict[str, Any]) -> str | None:
            if check is not None:
                check(args)
            return await handler(ctx, args)

        TOOLS[name] = checked
        return handler

    return register


def _a(args: dict[str, Any], *keys: str) -> list[Any]:
    return [arg(args, key) for key in keys]


def _default(value: Any, fallback: Any) -> Any:
    return fallback if value is UNDEFINED else value


# ---------------------------------------------------------------------------- health, courses


@tool("canvas_health_check")
async def _health(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.health_check())


@tool("canvas_list_courses")
async def _list_courses(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_courses(_default(arg(args, "include_ended"), False)))


@tool("canvas_get_course", _needs("course_id"))
async def _get_course(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_course(arg(args, "course_id")))


@tool("canvas_create_course", _needs("account_id", "name"))
async def _create_course(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.create_course(arg(args, "account_id"), rest(args, "account_id")))


@tool("canvas_update_course", _needs("course_id"))
async def _update_course(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.update_course(arg(args, "course_id"), rest(args, "course_id")))


# ---------------------------------------------------------------------------- assignments, submissions


@tool("canvas_list_assignments", _needs("course_id"))
async def _list_assignments(ctx: Context, args: dict[str, Any]) -> str | None:
    course_id, include = _a(args, "course_id", "include_submissions")
    return json_text(await ctx.client.list_assignments(course_id, _default(include, False)))


@tool("canvas_get_assignment", _needs("course_id", "assignment_id"))
async def _get_assignment(ctx: Context, args: dict[str, Any]) -> str | None:
    course_id, assignment_id, include = _a(args, "course_id", "assignment_id", "include_submission")
    return json_text(await ctx.client.get_assignment(course_id, assignment_id, _default(include, False)))


@tool("canvas_create_assignment", _needs("course_id", "name"))
async def _create_assignment(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.create_assignment(arg(args, "course_id"), rest(args, "course_id")))


@tool("canvas_update_assignment", _needs("course_id", "assignment_id"))
async def _update_assignment(ctx: Context, args: dict[str, Any]) -> str | None:
    course_id, assignment_id = _a(args, "course_id", "assignment_id")
    fields = rest(args, "course_id", "assignment_id")
    return json_text(await ctx.client.update_assignment(course_id, assignment_id, fields))


@tool("canvas_list_assignment_groups", _needs("course_id"))
async def _list_assignment_groups(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_assignment_groups(arg(args, "course_id")))


@tool("canvas_get_submission", _needs("course_id", "assignment_id"))
async def _get_submission(ctx: Context, args: dict[str, Any]) -> str | None:
    course_id, assignment_id, user_id = _a(args, "course_id", "assignment_id", "user_id")
    user = user_id if truthy(user_id) else "self"
    return json_text(await ctx.client.get_submission(course_id, assignment_id, user))


@tool("canvas_submit_assignment", _needs("course_id", "assignment_id", "submission_type"))
async def _submit_assignment(ctx: Context, args: dict[str, Any]) -> str | None:
    values = _a(args, "course_id", "assignment_id", "submission_type", "body", "url", "file_ids")
    return json_text(await ctx.client.submit_assignment(*values))


def _grade_check(args: dict[str, Any]) -> None:
    if (
        not all(truthy(arg(args, key)) for key in ("course_id", "assignment_id", "user_id"))
        or arg(args, "grade") is UNDEFINED
    ):
        raise PlainError("Missing required fields for grade submission")


@tool("canvas_submit_grade", _grade_check)
async def _submit_grade(ctx: Context, args: dict[str, Any]) -> str | None:
    values = _a(args, "course_id", "assignment_id", "user_id", "grade", "comment")
    return json_text(await ctx.client.submit_grade(*values))


# ---------------------------------------------------------------------------- files, pages, calendar


@tool("canvas_list_files", _needs("course_id"))
async def _list_files(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_files(*_a(args, "course_id", "folder_id")))


@tool("canvas_get_file", _needs("file_id"))
async def _get_file(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_file(arg(args, "file_id")))


@tool("canvas_list_folders", _needs("course_id"))
async def _list_folders(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_folders(arg(args, "course_id")))


@tool("canvas_list_pages", _needs("course_id"))
async def _list_pages(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_pages(arg(args, "course_id")))


@tool("canvas_get_page", _needs("course_id", "page_url"))
async def _get_page(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_page(*_a(args, "course_id", "page_url")))


@tool("canvas_list_calendar_events")
async def _list_calendar_events(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_calendar_events(*_a(args, "start_date", "end_date")))


@tool("canvas_get_upcoming_assignments")
async def _get_upcoming_assignments(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_upcoming_assignments(_default(arg(args, "limit"), 10)))


# ---------------------------------------------------------------------------- dashboard, grades, users


@tool("canvas_get_dashboard")
async def _get_dashboard(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_dashboard())


@tool("canvas_get_dashboard_cards")
async def _get_dashboard_cards(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_dashboard_cards())


@tool("canvas_get_course_grades", _needs("course_id"))
async def _get_course_grades(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_course_grades(arg(args, "course_id")))


@tool("canvas_get_user_grades")
async def _get_user_grades(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_user_grades())


@tool("canvas_get_user_profile")
async def _get_user_profile(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_user_profile())


@tool("canvas_update_user_profile")
async def _update_user_profile(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.update_user_profile(rest(args)))


@tool("canvas_enroll_user", _needs("course_id", "user_id"))
async def _enroll_user(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.enroll_user(*_a(args, "course_id", "user_id", "role", "enrollment_state")))


# ---------------------------------------------------------------------------- accounts


@tool("canvas_get_account", _needs("account_id"))
async def _get_account(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_account(arg(args, "account_id")))


@tool("canvas_list_account_courses", _needs("account_id"))
async def _list_account_courses(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_account_courses(arg(args, "account_id"), rest(args, "account_id")))


@tool("canvas_list_account_users")
async def _list_account_users(ctx: Context, args: dict[str, Any]) -> str | None:
    return await list_account_users(ctx.api, ctx.sessions, args)


@tool("canvas_create_user", _needs("account_id", "user", "pseudonym"))
async def _create_user(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.create_user(arg(args, "account_id"), rest(args, "account_id")))


@tool("canvas_list_sub_accounts", _needs("account_id"))
async def _list_sub_accounts(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_sub_accounts(arg(args, "account_id")))


@tool("canvas_get_account_reports", _needs("account_id"))
async def _get_account_reports(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_account_reports(arg(args, "account_id")))


@tool("canvas_create_account_report", _needs("account_id", "report"))
async def _create_account_report(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.create_account_report(*_a(args, "account_id", "report", "parameters")))


# ---------------------------------------------------------------------------- modules, discussions, announcements


@tool("canvas_list_modules", _needs("course_id"))
async def _list_modules(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_modules(arg(args, "course_id")))


@tool("canvas_get_module", _needs("course_id", "module_id"))
async def _get_module(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_module(*_a(args, "course_id", "module_id")))


@tool("canvas_list_module_items", _needs("course_id", "module_id"))
async def _list_module_items(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_module_items(*_a(args, "course_id", "module_id")))


@tool("canvas_get_module_item", _needs("course_id", "module_id", "item_id"))
async def _get_module_item(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_module_item(*_a(args, "course_id", "module_id", "item_id")))


@tool("canvas_mark_module_item_complete", _needs("course_id", "module_id", "item_id"))
async def _mark_module_item_complete(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.mark_module_item_complete(*_a(args, "course_id", "module_id", "item_id")))


@tool("canvas_list_discussion_topics", _needs("course_id"))
async def _list_discussion_topics(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_discussion_topics(arg(args, "course_id")))


@tool("canvas_get_discussion_topic", _needs("course_id", "topic_id"))
async def _get_discussion_topic(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_discussion_topic(*_a(args, "course_id", "topic_id")))


@tool("canvas_post_to_discussion", _needs("course_id", "topic_id", "message"))
async def _post_to_discussion(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.post_to_discussion(*_a(args, "course_id", "topic_id", "message")))


@tool("canvas_list_announcements", _needs("course_id"))
async def _list_announcements(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_announcements(to_string(arg(args, "course_id"))))


@tool("canvas_create_announcement", _needs("course_id", "title", "message"))
async def _create_announcement(ctx: Context, args: dict[str, Any]) -> str | None:
    keys = ("course_id", "title", "message", "is_announcement", "published", "delayed_post_at", "attachment")
    return json_text(await ctx.client.create_announcement(*_a(args, *keys)))


# ---------------------------------------------------------------------------- quizzes


@tool("canvas_list_quizzes", _needs("course_id"))
async def _list_quizzes(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_quizzes(to_string(arg(args, "course_id"))))


@tool("canvas_get_quiz", _needs("course_id", "quiz_id"))
async def _get_quiz(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_quiz(to_string(arg(args, "course_id")), arg(args, "quiz_id")))


@tool("canvas_create_quiz", _needs("course_id", "title"))
async def _create_quiz(ctx: Context, args: dict[str, Any]) -> str | None:
    quiz = {key: arg(args, key) for key in ("title", "quiz_type", "time_limit", "published", "description", "due_at")}
    return json_text(await ctx.client.create_quiz(arg(args, "course_id"), quiz))


@tool("canvas_start_quiz_attempt", _needs("course_id", "quiz_id"))
async def _start_quiz_attempt(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.start_quiz_attempt(*_a(args, "course_id", "quiz_id")))


@tool("canvas_submit_quiz_answers", _needs("course_id", "quiz_id", "submission_id", "answers"))
async def _submit_quiz_answers(ctx: Context, args: dict[str, Any]) -> str | None:
    values = _a(args, "course_id", "quiz_id", "submission_id", "answers", "validation_token")
    return json_text(await ctx.client.submit_quiz_attempt(*values))


@tool("canvas_list_quiz_questions", _needs("course_id", "quiz_id"))
async def _list_quiz_questions(ctx: Context, args: dict[str, Any]) -> str | None:
    keys = ("course_id", "quiz_id", "quiz_submission_id", "quiz_submission_attempt", "use_submission_endpoint")
    return json_text(await ctx.client.list_quiz_questions(*_a(args, *keys)))


@tool("canvas_get_quiz_question", _needs("course_id", "quiz_id", "question_id"))
async def _get_quiz_question(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_quiz_question(*_a(args, "course_id", "quiz_id", "question_id")))


_QUESTION_FIELDS = ("course_id", "quiz_id", "question_name", "question_text", "question_type", "points_possible")


def _question_check(args: dict[str, Any]) -> None:
    if not all(truthy(arg(args, key)) for key in _QUESTION_FIELDS[:-1]) or arg(args, "points_possible") is UNDEFINED:
        raise PlainError(_fields(*_QUESTION_FIELDS))


@tool("canvas_create_quiz_question", _question_check)
async def _create_quiz_question(ctx: Context, args: dict[str, Any]) -> str | None:
    course_id, quiz_id = _a(args, "course_id", "quiz_id")
    return json_text(await ctx.client.create_quiz_question(course_id, quiz_id, rest(args, "course_id", "quiz_id")))


@tool("canvas_update_quiz_question", _needs("course_id", "quiz_id", "question_id"))
async def _update_quiz_question(ctx: Context, args: dict[str, Any]) -> str | None:
    course_id, quiz_id, question_id = _a(args, "course_id", "quiz_id", "question_id")
    fields = rest(args, "course_id", "quiz_id", "question_id")
    return json_text(await ctx.client.update_quiz_question(course_id, quiz_id, question_id, fields))


@tool("canvas_delete_quiz_question", _needs("course_id", "quiz_id", "question_id"))
async def _delete_quiz_question(ctx: Context, args: dict[str, Any]) -> str | None:
    await ctx.client.delete_quiz_question(*_a(args, "course_id", "quiz_id", "question_id"))
    return "Quiz question deleted successfully"


# ---------------------------------------------------------------------------- uploads


@tool("canvas_upload_file_from_path", _needs("file_path"))
async def _upload_file_from_path(ctx: Context, args: dict[str, Any]) -> str | None:
    file_path, course_id, folder_id = _a(args, "file_path", "course_id", "folder_id")
    return json_text(await upload_file_from_path(ctx.api, file_path, course_id, folder_id))


@tool("canvas_submit_assignment_with_file", _needs("course_id", "assignment_id", "file_path"))
async def _submit_assignment_with_file(ctx: Context, args: dict[str, Any]) -> str | None:
    course_id, assignment_id, file_path = _a(args, "course_id", "assignment_id", "file_path")
    uploaded = await upload_file_from_path(ctx.api, file_path, course_id, UNDEFINED)
    # The reference also sets a `comment`, which its submit call never reads: it is not sent.
    file_ids = [_member(uploaded, "id")]
    submission = await ctx.client.submit_assignment(
        course_id, assignment_id, "online_upload", UNDEFINED, UNDEFINED, file_ids
    )
    return json_text(submission)


# ---------------------------------------------------------------------------- rubrics, conversations, syllabus


@tool("canvas_list_rubrics", _needs("course_id"))
async def _list_rubrics(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_rubrics(arg(args, "course_id")))


@tool("canvas_get_rubric", _needs("course_id", "rubric_id"))
async def _get_rubric(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_rubric(*_a(args, "course_id", "rubric_id")))


@tool("canvas_list_conversations")
async def _list_conversations(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_conversations())


@tool("canvas_get_conversation", _needs("conversation_id"))
async def _get_conversation(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_conversation(arg(args, "conversation_id")))


@tool("canvas_create_conversation", _needs("recipients", "body"))
async def _create_conversation(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.create_conversation(*_a(args, "recipients", "body", "subject")))


@tool("canvas_list_notifications")
async def _list_notifications(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.list_notifications())


@tool("canvas_get_syllabus", _needs("course_id"))
async def _get_syllabus(ctx: Context, args: dict[str, Any]) -> str | None:
    return json_text(await ctx.client.get_syllabus(arg(args, "course_id")))


# ---------------------------------------------------------------------------- deletions


@tool("canvas_delete_course", _needs("course_id"))
async def _delete_course(ctx: Context, args: dict[str, Any]) -> str | None:
    course_id = arg(args, "course_id")
    event = _default(arg(args, "event"), "delete")
    await ctx.client.delete_course(course_id, event)
    return f"Successfully {to_string(event)}d course {to_string(course_id)}"


@tool("canvas_delete_assignment", _needs("course_id", "assignment_id"))
async def _delete_assignment(ctx: Context, args: dict[str, Any]) -> str | None:
    course_id, assignment_id = _a(args, "course_id", "assignment_id")
    await ctx.client.delete_assignment(course_id, assignment_id)
    return f"Successfully deleted assignment {to_string(assignment_id)} from course {to_string(course_id)}"


@tool("canvas_delete_announcement", _needs("course_id", "announcement_id"))
async def _delete_announcement(ctx: Context, args: dict[str, Any]) -> str | None:
    course_id, announcement_id = _a(args, "course_id", "announcement_id")
    await ctx.client.delete_announcement(course_id, announcement_id)
    return f"Successfully deleted announcement {to_string(announcement_id)} from course {to_string(course_id)}"


@tool("canvas_delete_quiz", _needs("course_id", "quiz_id"))
async def _delete_quiz(ctx: Context, args: dict[str, Any]) -> str | None:
    course_id, quiz_id = _a(args, "course_id", "quiz_id")
    await ctx.client.delete_quiz(course_id, quiz_id)
    return f"Successfully deleted quiz {to_string(quiz_id)} from course {to_string(course_id)}"


@tool("canvas_delete_conversation", _needs("conversation_id"))
async def _delete_conversation(ctx: Context, args: dict[str, Any]) -> str | None:
    conversation_id = arg(args, "conversation_id")
    await ctx.client.delete_conversation(conversation_id)
    return f"Successfully deleted conversation {to_string(conversation_id)}"


@tool("canvas_unenroll_user", _needs("course_id", "enrollment_id"))
async def _unenroll_user(ctx: Context, args: dict[str, Any]) -> str | None:
    course_id, enrollment_id = _a(args, "course_id", "enrollment_id")
    await ctx.client.unenroll_user(course_id, enrollment_id)
    return f"Successfully unenrolled user (enrollment {to_string(enrollment_id)}) from course {to_string(course_id)}"
