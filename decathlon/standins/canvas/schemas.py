"""Tool names and input schemas of ``canvas-mcp-server`` 2.2.3 (lockon-n/mcp-canvas-lms at 1097704,
the commit Toolathlon's package.json pins), in its order.

Names, argument shapes, required lists and descriptions are the reference's interface, kept
as it advertises them: the model reads the descriptions (several tell it how to chain the quiz
tools), so a reworded description could change what a rerun does. The reference never checks
arguments against these schemas; each tool makes its own truthiness checks (see tools.py).
"""

from __future__ import annotations

from typing import Any


def _number(description: str) -> dict[str, Any]:
    return {"type": "number", "description": description}


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _boolean(description: str) -> dict[str, Any]:
    return {"type": "boolean", "description": description}


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


TOOL_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "canvas_health_check": (
        "Check the health and connectivity of the Canvas API",
        _object({}, []),
    ),
    "canvas_list_courses": (
        "List all courses for the current user",
        _object(
            {
                "include_ended": _boolean("Include ended courses"),
            },
            [],
        ),
    ),
    "canvas_get_course": (
        "Get detailed information about a specific course",
        _object(
            {
                "course_id": _number("ID of the course"),
            },
            ["course_id"],
        ),
    ),
    "canvas_create_course": (
        "Create a new course in Canvas",
        _object(
            {
                "account_id": _number("ID of the account to create the course in"),
                "name": _string("Name of the course"),
                "course_code": _string("Course code (e.g., CS101)"),
                "start_at": _string("Course start date (ISO format)"),
                "end_at": _string("Course end date (ISO format)"),
                "license": _string("Course license"),
                "is_public": _boolean("Whether the course is public"),
                "is_public_to_auth_users": _boolean("Whether the course is public to authenticated users"),
                "public_syllabus": _boolean("Whether the syllabus is public"),
                "public_syllabus_to_auth": _boolean("Whether the syllabus is public to authenticated users"),
                "public_description": _string("Public description of the course"),
                "allow_student_wiki_edits": _boolean("Whether students can edit the wiki"),
                "allow_wiki_comments": _boolean("Whether wiki comments are allowed"),
                "allow_student_forum_attachments": _boolean("Whether students can add forum attachments"),
                "open_enrollment": _boolean("Whether the course has open enrollment"),
                "self_enrollment": _boolean("Whether the course allows self enrollment"),
                "restrict_enrollments_to_course_dates": _boolean(
                    "Whether to restrict enrollments to course start/end dates"
                ),
                "term_id": _number("ID of the enrollment term"),
                "sis_course_id": _string("SIS course ID"),
                "integration_id": _string("Integration ID for the course"),
                "hide_final_grades": _boolean("Whether to hide final grades"),
                "apply_assignment_group_weights": _boolean("Whether to apply assignment group weights"),
                "time_zone": _string("Course time zone"),
                "syllabus_body": _string("Course syllabus content"),
            },
            ["account_id", "name"],
        ),
    ),
    "canvas_update_course": (
        "Update an existing course in Canvas. Use event='offer' to publish, event='claim' to unpublish.",
        _object(
            {
                "course_id": _number("ID of the course to update"),
                "name": _string("New name for the course"),
                "course_code": _string("New course code"),
                "start_at": _string("New start date (ISO format)"),
                "end_at": _string("New end date (ISO format)"),
                "event": {
                    "type": "string",
                    "enum": ["offer", "claim", "conclude", "delete", "undelete"],
                    "description": "Course event - 'offer' to publish, 'claim' to unpublish, 'conclude' to end, 'delete' to delete, 'undelete' to restore",
                },
                "is_public": _boolean("Whether the course is public"),
                "is_public_to_auth_users": _boolean("Whether the course is public to authenticated users"),
                "public_syllabus": _boolean("Whether the syllabus is public"),
                "public_syllabus_to_auth": _boolean("Whether the syllabus is public to authenticated users"),
                "public_description": _string("Public description of the course"),
                "restrict_enrollments_to_course_dates": _boolean(
                    "Whether to restrict enrollments to course start/end dates"
                ),
                "time_zone": _string("Course time zone"),
                "syllabus_body": _string("Updated syllabus content"),
            },
            ["course_id"],
        ),
    ),
    "canvas_list_assignments": (
        "List assignments for a course",
        _object(
            {
                "course_id": _number("ID of the course"),
                "include_submissions": _boolean("Include submission data"),
            },
            ["course_id"],
        ),
    ),
    "canvas_get_assignment": (
        "Get detailed information about a specific assignment",
        _object(
            {
                "course_id": _number("ID of the course"),
                "assignment_id": _number("ID of the assignment"),
                "include_submission": _boolean("Include user's submission data"),
            },
            ["course_id", "assignment_id"],
        ),
    ),
    "canvas_create_assignment": (
        "Create a new assignment in a Canvas course",
        _object(
            {
                "course_id": _number("ID of the course"),
                "name": _string("Name of the assignment"),
                "description": _string("Assignment description/instructions"),
                "due_at": _string("Due date (ISO format)"),
                "points_possible": _number("Maximum points possible"),
                "submission_types": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Allowed submission types",
                },
                "allowed_extensions": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Allowed file extensions for submissions",
                },
                "published": _boolean("Whether the assignment is published"),
            },
            ["course_id", "name"],
        ),
    ),
    "canvas_update_assignment": (
        "Update an existing assignment",
        _object(
            {
                "course_id": _number("ID of the course"),
                "assignment_id": _number("ID of the assignment to update"),
                "name": _string("New name for the assignment"),
                "description": _string("New assignment description"),
                "due_at": _string("New due date (ISO format)"),
                "points_possible": _number("New maximum points"),
                "published": _boolean("Whether the assignment is published"),
            },
            ["course_id", "assignment_id"],
        ),
    ),
    "canvas_list_assignment_groups": (
        "List assignment groups for a course",
        _object(
            {
                "course_id": _number("ID of the course"),
            },
            ["course_id"],
        ),
    ),
    "canvas_get_submission": (
        "Get submission details for an assignment",
        _object(
            {
                "course_id": _number("ID of the course"),
                "assignment_id": _number("ID of the assignment"),
                "user_id": _number("ID of the user (optional, defaults to self)"),
            },
            ["course_id", "assignment_id"],
        ),
    ),
    "canvas_submit_assignment": (
        "Submit work for an assignment",
        _object(
            {
                "course_id": _number("ID of the course"),
                "assignment_id": _number("ID of the assignment"),
                "submission_type": {
                    "type": "string",
                    "enum": ["online_text_entry", "online_url", "online_upload"],
                    "description": "Type of submission",
                },
                "body": _string("Text content for text submissions"),
                "url": _string("URL for URL submissions"),
                "file_ids": {
                    "type": "array",
                    "items": {"type": "number"},
                    "description": "File IDs for file submissions",
                },
            },
            ["course_id", "assignment_id", "submission_type"],
        ),
    ),
    "canvas_submit_grade": (
        "Submit a grade for a student's assignment (teacher only)",
        _object(
            {
                "course_id": _number("ID of the course"),
                "assignment_id": _number("ID of the assignment"),
                "user_id": _number("ID of the student"),
                "grade": {
                    "oneOf": [{"type": "number"}, {"type": "string"}],
                    "description": "Grade to submit (number or letter grade)",
                },
                "comment": _string("Optional comment on the submission"),
            },
            ["course_id", "assignment_id", "user_id", "grade"],
        ),
    ),
    "canvas_list_files": (
        "List files in a course or folder",
        _object(
            {
                "course_id": _number("ID of the course"),
                "folder_id": _number("ID of the folder (optional)"),
            },
            ["course_id"],
        ),
    ),
    "canvas_get_file": (
        "Get information about a specific file",
        _object(
            {
                "file_id": _number("ID of the file"),
            },
            ["file_id"],
        ),
    ),
    "canvas_list_folders": (
        "List folders in a course",
        _object(
            {
                "course_id": _number("ID of the course"),
            },
            ["course_id"],
        ),
    ),
    "canvas_list_pages": (
        "List pages in a course",
        _object(
            {
                "course_id": _number("ID of the course"),
            },
            ["course_id"],
        ),
    ),
    "canvas_get_page": (
        "Get content of a specific page",
        _object(
            {
                "course_id": _number("ID of the course"),
                "page_url": _string("URL slug of the page"),
            },
            ["course_id", "page_url"],
        ),
    ),
    "canvas_list_calendar_events": (
        "List calendar events",
        _object(
            {
                "start_date": _string("Start date (ISO format)"),
                "end_date": _string("End date (ISO format)"),
            },
            [],
        ),
    ),
    "canvas_get_upcoming_assignments": (
        "Get upcoming assignment due dates",
        _object(
            {
                "limit": _number("Maximum number of assignments to return"),
            },
            [],
        ),
    ),
    "canvas_get_dashboard": (
        "Get user's dashboard information",
        _object({}, []),
    ),
    "canvas_get_dashboard_cards": (
        "Get dashboard course cards",
        _object({}, []),
    ),
    "canvas_get_course_grades": (
        "Get grades for a course",
        _object(
            {
                "course_id": _number("ID of the course"),
            },
            ["course_id"],
        ),
    ),
    "canvas_get_user_grades": (
        "Get all grades for the current user",
        _object({}, []),
    ),
    "canvas_get_user_profile": (
        "Get current user's profile",
        _object({}, []),
    ),
    "canvas_update_user_profile": (
        "Update current user's profile",
        _object(
            {
                "name": _string("User's name"),
                "short_name": _string("User's short name"),
                "bio": _string("User's bio"),
                "title": _string("User's title"),
                "time_zone": _string("User's time zone"),
            },
            [],
        ),
    ),
    "canvas_enroll_user": (
        "Enroll a user in a course",
        _object(
            {
                "course_id": _number("ID of the course"),
                "user_id": _number("ID of the user to enroll"),
                "role": _string("Role for the enrollment (StudentEnrollment, TeacherEnrollment, etc.)"),
                "enrollment_state": _string("State of the enrollment (active, invited, etc.)"),
            },
            ["course_id", "user_id"],
        ),
    ),
    "canvas_list_modules": (
        "List all modules in a course",
        _object(
            {
                "course_id": _number("ID of the course"),
            },
            ["course_id"],
        ),
    ),
    "canvas_get_module": (
        "Get details of a specific module",
        _object(
            {
                "course_id": _number("ID of the course"),
                "module_id": _number("ID of the module"),
            },
            ["course_id", "module_id"],
        ),
    ),
    "canvas_list_module_items": (
        "List all items in a module",
        _object(
            {
                "course_id": _number("ID of the course"),
                "module_id": _number("ID of the module"),
            },
            ["course_id", "module_id"],
        ),
    ),
    "canvas_get_module_item": (
        "Get details of a specific module item",
        _object(
            {
                "course_id": _number("ID of the course"),
                "module_id": _number("ID of the module"),
                "item_id": _number("ID of the module item"),
            },
            ["course_id", "module_id", "item_id"],
        ),
    ),
    "canvas_mark_module_item_complete": (
        "Mark a module item as complete",
        _object(
            {
                "course_id": _number("ID of the course"),
                "module_id": _number("ID of the module"),
                "item_id": _number("ID of the module item"),
            },
            ["course_id", "module_id", "item_id"],
        ),
    ),
    "canvas_list_discussion_topics": (
        "List all discussion topics in a course",
        _object(
            {
                "course_id": _number("ID of the course"),
            },
            ["course_id"],
        ),
    ),
    "canvas_get_discussion_topic": (
        "Get details of a specific discussion topic",
        _object(
            {
                "course_id": _number("ID of the course"),
                "topic_id": _number("ID of the discussion topic"),
            },
            ["course_id", "topic_id"],
        ),
    ),
    "canvas_post_to_discussion": (
        "Post a message to a discussion topic",
        _object(
            {
                "course_id": _number("ID of the course"),
                "topic_id": _number("ID of the discussion topic"),
                "message": _string("Message content"),
            },
            ["course_id", "topic_id", "message"],
        ),
    ),
    "canvas_list_announcements": (
        "List all announcements in a course",
        _object(
            {
                "course_id": _number("ID of the course"),
            },
            ["course_id"],
        ),
    ),
    "canvas_create_announcement": (
        "Create a new announcement in a course",
        _object(
            {
                "course_id": _number("ID of the course"),
                "title": _string("Title of the announcement"),
                "message": _string("Content/message of the announcement"),
                "is_announcement": _boolean("Mark as announcement (default: true)"),
                "published": _boolean("Whether the announcement is published"),
                "delayed_post_at": _string("Delayed posting time (ISO format)"),
                "attachment": {"type": "object", "description": "File attachment for the announcement"},
            },
            ["course_id", "title", "message"],
        ),
    ),
    "canvas_list_quizzes": (
        "List all quizzes in a course",
        _object(
            {
                "course_id": _number("ID of the course"),
            },
            ["course_id"],
        ),
    ),
    "canvas_get_quiz": (
        "Get details of a specific quiz",
        _object(
            {
                "course_id": _number("ID of the course"),
                "quiz_id": _number("ID of the quiz"),
            },
            ["course_id", "quiz_id"],
        ),
    ),
    "canvas_create_quiz": (
        "Create a new quiz in a course",
        _object(
            {
                "course_id": _number("ID of the course"),
                "title": _string("Title of the quiz"),
                "quiz_type": _string("Type of the quiz (e.g., graded)"),
                "time_limit": _number("Time limit in minutes"),
                "published": _boolean("Is the quiz published"),
                "description": _string("Description of the quiz"),
                "due_at": _string("Due date (ISO format)"),
            },
            ["course_id", "title"],
        ),
    ),
    "canvas_start_quiz_attempt": (
        "Start a new quiz attempt. Returns a quiz_submission object with 'id' field (the quiz_submission_id) and 'validation_token' needed for submitting answers. May return 500 error but still create submission (will auto-retry). Returns 409 if attempt already exists (will return existing).",
        _object(
            {
                "course_id": _number("ID of the course"),
                "quiz_id": _number("ID of the quiz"),
            },
            ["course_id", "quiz_id"],
        ),
    ),
    "canvas_submit_quiz_answers": (
        "Submit answers for a quiz attempt. Use the 'id' from canvas_start_quiz_attempt as submission_id, NOT the quiz_id or any other ID.",
        _object(
            {
                "course_id": _number("ID of the course"),
                "quiz_id": _number("ID of the quiz"),
                "submission_id": _number(
                    "The quiz_submission ID from canvas_start_quiz_attempt response (the 'id' field, NOT 'submission_id' field)"
                ),
                "validation_token": _string(
                    "REQUIRED: Validation token from canvas_start_quiz_attempt response. Without this, you'll get 403 'invalid token' error"
                ),
                "answers": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "question_id": {"type": "number", "description": "ID of the question"},
                            "answer": {
                                "description": "Answer value - can be string, number, boolean, or array depending on question type",
                            },
                            "answer_id": {
                                "type": "number",
                                "description": "ID of the answer choice (for multiple choice)",
                            },
                            "match": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {"answer_id": {"type": "number"}, "match_id": {"type": "number"}},
                                },
                                "description": "Matching pairs for matching questions",
                            },
                        },
                        "required": ["question_id"],
                    },
                    "description": "Array of answers to quiz questions",
                },
            },
            ["course_id", "quiz_id", "submission_id", "answers"],
        ),
    ),
    "canvas_list_quiz_questions": (
        "List all questions in a quiz. Students: First call canvas_start_quiz_attempt to get quiz_submission_id, then use that ID (NOT quiz_id) with use_submission_endpoint=true.",
        _object(
            {
                "course_id": _number("ID of the course"),
                "quiz_id": _number("ID of the quiz"),
                "quiz_submission_id": _number(
                    "For students: The 'id' field from canvas_start_quiz_attempt response (NOT the quiz_id or submission_id field)"
                ),
                "quiz_submission_attempt": _number(
                    "Optional: The attempt number (required if quiz_submission_id is specified for courses API)"
                ),
                "use_submission_endpoint": _boolean(
                    "Optional: Use /quiz_submissions/:id/questions endpoint instead of courses API (recommended for students)"
                ),
            },
            ["course_id", "quiz_id"],
        ),
    ),
    "canvas_get_quiz_question": (
        "Get details of a specific quiz question",
        _object(
            {
                "course_id": _number("ID of the course"),
                "quiz_id": _number("ID of the quiz"),
                "question_id": _number("ID of the question"),
            },
            ["course_id", "quiz_id", "question_id"],
        ),
    ),
    "canvas_create_quiz_question": (
        "Add a new question to a quiz",
        _object(
            {
                "course_id": _number("ID of the course"),
                "quiz_id": _number("ID of the quiz"),
                "question_name": _string("Name/title of the question"),
                "question_text": _string("The question text (HTML supported)"),
                "question_type": {
                    "type": "string",
                    "enum": [
                        "multiple_choice_question",
                        "true_false_question",
                        "short_answer_question",
                        "fill_in_multiple_blanks_question",
                        "multiple_answers_question",
                        "multiple_dropdowns_question",
                        "matching_question",
                        "numerical_question",
                        "calculated_question",
                        "essay_question",
                        "file_upload_question",
                        "text_only_question",
                    ],
                    "description": "Type of question",
                },
                "points_possible": _number("Points for this question"),
                "position": _number("Position in the quiz"),
                "correct_comments": _string("Comments shown for correct answers"),
                "incorrect_comments": _string("Comments shown for incorrect answers"),
                "neutral_comments": _string("General comments"),
                "answers": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "text": {"type": "string", "description": "Answer text"},
                            "weight": {"type": "number", "description": "Weight (100 for correct, 0 for incorrect)"},
                            "comments": {"type": "string", "description": "Comments for this answer"},
                        },
                    },
                    "description": "Array of answer choices",
                },
            },
            ["course_id", "quiz_id", "question_name", "question_text", "question_type", "points_possible"],
        ),
    ),
    "canvas_update_quiz_question": (
        "Update an existing quiz question",
        _object(
            {
                "course_id": _number("ID of the course"),
                "quiz_id": _number("ID of the quiz"),
                "question_id": _number("ID of the question to update"),
                "question_name": _string("New name/title of the question"),
                "question_text": _string("New question text"),
                "points_possible": _number("New points value"),
                "correct_comments": _string("New comments for correct answers"),
                "incorrect_comments": _string("New comments for incorrect answers"),
                "answers": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "text": {"type": "string"},
                            "weight": {"type": "number"},
                            "comments": {"type": "string"},
                        },
                    },
                    "description": "Updated answer choices",
                },
            },
            ["course_id", "quiz_id", "question_id"],
        ),
    ),
    "canvas_delete_quiz_question": (
        "Delete a question from a quiz",
        _object(
            {
                "course_id": _number("ID of the course"),
                "quiz_id": _number("ID of the quiz"),
                "question_id": _number("ID of the question to delete"),
            },
            ["course_id", "quiz_id", "question_id"],
        ),
    ),
    "canvas_upload_file_from_path": (
        "Upload a file from local filesystem to Canvas",
        _object(
            {
                "file_path": _string("Absolute path to the local file"),
                "course_id": _number("ID of the course (optional)"),
                "folder_id": _number("ID of the folder to upload to (optional)"),
            },
            ["file_path"],
        ),
    ),
    "canvas_submit_assignment_with_file": (
        "Submit an assignment with a local file upload",
        _object(
            {
                "course_id": _number("ID of the course"),
                "assignment_id": _number("ID of the assignment"),
                "file_path": _string("Absolute path to the file to submit"),
                "comment": _string("Optional submission comment"),
            },
            ["course_id", "assignment_id", "file_path"],
        ),
    ),
    "canvas_list_rubrics": (
        "List rubrics for a course",
        _object(
            {
                "course_id": _number("ID of the course"),
            },
            ["course_id"],
        ),
    ),
    "canvas_get_rubric": (
        "Get details of a specific rubric",
        _object(
            {
                "course_id": _number("ID of the course"),
                "rubric_id": _number("ID of the rubric"),
            },
            ["course_id", "rubric_id"],
        ),
    ),
    "canvas_list_conversations": (
        "List user's conversations",
        _object({}, []),
    ),
    "canvas_get_conversation": (
        "Get details of a specific conversation",
        _object(
            {
                "conversation_id": _number("ID of the conversation"),
            },
            ["conversation_id"],
        ),
    ),
    "canvas_create_conversation": (
        "Create a new conversation",
        _object(
            {
                "recipients": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Recipient user IDs or email addresses",
                },
                "body": _string("Message body"),
                "subject": _string("Message subject"),
            },
            ["recipients", "body"],
        ),
    ),
    "canvas_list_notifications": (
        "List user's notifications",
        _object({}, []),
    ),
    "canvas_get_syllabus": (
        "Get course syllabus",
        _object(
            {
                "course_id": _number("ID of the course"),
            },
            ["course_id"],
        ),
    ),
    "canvas_delete_course": (
        "Delete or conclude a course",
        _object(
            {
                "course_id": _number("ID of the course to delete"),
                "event": {
                    "type": "string",
                    "enum": ["delete", "conclude"],
                    "description": "Action to take: 'delete' removes the course entirely, 'conclude' makes it read-only",
                    "default": "delete",
                },
            },
            ["course_id"],
        ),
    ),
    "canvas_delete_assignment": (
        "Delete an assignment",
        _object(
            {
                "course_id": _number("ID of the course"),
                "assignment_id": _number("ID of the assignment to delete"),
            },
            ["course_id", "assignment_id"],
        ),
    ),
    "canvas_delete_announcement": (
        "Delete an announcement",
        _object(
            {
                "course_id": _number("ID of the course"),
                "announcement_id": _number("ID of the announcement to delete"),
            },
            ["course_id", "announcement_id"],
        ),
    ),
    "canvas_delete_quiz": (
        "Delete a quiz",
        _object(
            {
                "course_id": _number("ID of the course"),
                "quiz_id": _number("ID of the quiz to delete"),
            },
            ["course_id", "quiz_id"],
        ),
    ),
    "canvas_delete_conversation": (
        "Delete a conversation",
        _object(
            {
                "conversation_id": _number("ID of the conversation to delete"),
            },
            ["conversation_id"],
        ),
    ),
    "canvas_unenroll_user": (
        "Unenroll a user from a course",
        _object(
            {
                "course_id": _number("ID of the course"),
                "enrollment_id": _number("ID of the enrollment to remove"),
            },
            ["course_id", "enrollment_id"],
        ),
    ),
    "canvas_get_account": (
        "Get account details",
        _object(
            {
                "account_id": _number("ID of the account"),
            },
            ["account_id"],
        ),
    ),
    "canvas_list_account_courses": (
        "List courses for an account",
        _object(
            {
                "account_id": _number("ID of the account"),
                "with_enrollments": _boolean("Include enrollment data"),
                "published": _boolean("Only include published courses"),
                "completed": _boolean("Include completed courses"),
                "search_term": _string("Search term to filter courses"),
                "sort": {
                    "type": "string",
                    "enum": ["course_name", "sis_course_id", "teacher", "account_name"],
                    "description": "Sort order",
                },
                "order": {"type": "string", "enum": ["asc", "desc"], "description": "Sort direction"},
            },
            ["account_id"],
        ),
    ),
    "canvas_list_account_users": (
        "List users for an account with pagination support and session management. Returns up to 20 users per page. Use session_id to continue previous search or provide new parameters to start fresh.",
        _object(
            {
                "session_id": _string(
                    "Session ID to continue previous search (when provided, other parameters except 'page' are ignored)"
                ),
                "account_id": _number("ID of the account (required for new sessions)"),
                "search_term": _string("Search term to filter users"),
                "sort": {
                    "type": "string",
                    "enum": ["username", "email", "sis_id", "last_login"],
                    "description": "Sort order",
                },
                "order": {"type": "string", "enum": ["asc", "desc"], "description": "Sort direction"},
                "page": {"type": "number", "description": "Page number (starts from 1, default: 1)", "default": 1},
                "per_page": {
                    "type": "number",
                    "description": "Number of users per page (max: 20, default: 20)",
                    "default": 20,
                },
            },
            [],
        ),
    ),
    "canvas_create_user": (
        "Create a new user in an account",
        _object(
            {
                "account_id": _number("ID of the account"),
                "user": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "Full name of the user"},
                        "short_name": {"type": "string", "description": "Short name of the user"},
                        "sortable_name": {"type": "string", "description": "Sortable name (Last, First)"},
                        "time_zone": {"type": "string", "description": "User's time zone"},
                    },
                    "required": ["name"],
                },
                "pseudonym": {
                    "type": "object",
                    "properties": {
                        "unique_id": {"type": "string", "description": "Unique login ID (email or username)"},
                        "password": {"type": "string", "description": "User's password"},
                        "sis_user_id": {"type": "string", "description": "SIS ID for the user"},
                        "send_confirmation": {"type": "boolean", "description": "Send confirmation email"},
                    },
                    "required": ["unique_id"],
                },
            },
            ["account_id", "user", "pseudonym"],
        ),
    ),
    "canvas_list_sub_accounts": (
        "List sub-accounts for an account",
        _object(
            {
                "account_id": _number("ID of the parent account"),
            },
            ["account_id"],
        ),
    ),
    "canvas_get_account_reports": (
        "List available reports for an account",
        _object(
            {
                "account_id": _number("ID of the account"),
            },
            ["account_id"],
        ),
    ),
    "canvas_create_account_report": (
        "Generate a report for an account",
        _object(
            {
                "account_id": _number("ID of the account"),
                "report": _string("Type of report to generate"),
                "parameters": {"type": "object", "description": "Report parameters"},
            },
            ["account_id", "report"],
        ),
    ),
}
