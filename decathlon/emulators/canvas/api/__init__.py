"""The REST endpoints, one module per Canvas API area; `ROUTE_TABLES` lists them in registration order
(fixed paths such as `/conversations/unread_count` come before their `{id}` neighbours)."""
from decathlon.emulators.canvas.api import (
    assignments, conversations, courses, discussions, enrollments, files, misc, modules, pages, quiz_submissions,
    quizzes, submissions, users,
)

ROUTE_TABLES = [users.routes, courses.routes, enrollments.routes, assignments.routes, submissions.routes,
                quizzes.routes, quiz_submissions.routes, discussions.routes, conversations.routes, modules.routes,
                files.routes, pages.routes, misc.routes]
RAW_ROUTES = files.raw_routes()
