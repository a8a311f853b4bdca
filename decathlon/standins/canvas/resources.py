"""The reference's MCP resources: fixed URIs plus eight per course, read as JSON text.

Listing fetches the user's courses (an empty list if that fails); reading ``<type>://<id>``
runs the matching client call with ``parseInt(id)`` and answers its ``JSON.stringify(.., null, 2)``,
or ``{"error": message}`` as text if it fails, never a protocol error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .api import CanvasAPIError, PlainError
from .client import CanvasClient
from .jsargs import JsError, UNDEFINED, parse_int, to_string
from .tools import json_text

MIME = "application/json"


@dataclass(frozen=True)
class ResourceEntry:
    uri: str
    name: str
    description: str


_PER_COURSE = (
    ("assignments", "Assignments: {name}", "Assignments for {name}"),
    ("modules", "Modules: {name}", "Modules for {name}"),
    ("discussions", "Discussions: {name}", "Discussion topics for {name}"),
    ("announcements", "Announcements: {name}", "Announcements for {name}"),
    ("quizzes", "Quizzes: {name}", "Quizzes for {name}"),
    ("pages", "Pages: {name}", "Pages for {name}"),
    ("files", "Files: {name}", "Files for {name}"),
)


def _field(course: Any, key: str) -> str:
    value = course.get(key, UNDEFINED) if isinstance(course, dict) else UNDEFINED
    return to_string(value)


async def list_resources(client: CanvasClient) -> list[ResourceEntry]:
    try:
        courses = await client.list_courses()
        if not isinstance(courses, list):
            raise JsError("courses.map is not a function")
        if any(course is None for course in courses):
            raise JsError("Cannot read properties of null (reading 'id')")
    except (CanvasAPIError, PlainError, JsError):
        return []
    entries = [
        ResourceEntry("canvas://health", "Canvas Health Status", "Health check and API connectivity status"),
        ResourceEntry("courses://list", "All Courses", "List of all available Canvas courses"),
    ]
    entries += [
        ResourceEntry(
            f"course://{_field(c, 'id')}",
            f"Course: {_field(c, 'name')}",
            f"{_field(c, 'course_code')} - {_field(c, 'name')}",
        )
        for c in courses
    ]
    for scheme, name, description in _PER_COURSE:
        entries += [
            ResourceEntry(
                f"{scheme}://{_field(c, 'id')}",
                name.format(name=_field(c, "name")),
                description.format(name=_field(c, "name")),
            )
            for c in courses
        ]
    entries += [
        ResourceEntry("dashboard://user", "User Dashboard", "User's Canvas dashboard information"),
        ResourceEntry("profile://user", "User Profile", "Current user's profile information"),
        ResourceEntry("calendar://upcoming", "Upcoming Events", "Upcoming assignments and events"),
    ]
    return entries


async def read_resource(client: CanvasClient, uri: str) -> str | None:
    """The resource's text, or None where the reference would answer ``undefined``.

    ``parseInt`` of a non-numeric id is NaN, which goes into the path as "NaN", as the reference's does."""
    parts = uri.split("://")
    kind = parts[0]
    ident = parts[1] if len(parts) > 1 else "undefined"
    try:
        content: Any = UNDEFINED
        if kind == "canvas":
            if ident == "health":
                content = await client.health_check()
        elif kind == "courses":
            content = await client.list_courses()
        elif kind == "course":
            content = await client.get_course(parse_int(ident))
        elif kind == "assignments":
            content = await client.list_assignments(parse_int(ident), True)
        elif kind == "modules":
            content = await client.list_modules(parse_int(ident))
        elif kind == "discussions":
            content = await client.list_discussion_topics(parse_int(ident))
        elif kind == "announcements":
            content = await client.list_announcements(ident)
        elif kind == "quizzes":
            content = await client.list_quizzes(ident)
        elif kind == "pages":
            content = await client.list_pages(parse_int(ident))
        elif kind == "files":
            content = await client.list_files(parse_int(ident), UNDEFINED)
        elif kind == "dashboard":
            if ident == "user":
                content = await client.get_dashboard()
        elif kind == "profile":
            if ident == "user":
                content = await client.get_user_profile()
        elif kind == "calendar":
            if ident == "upcoming":
                content = await client.get_upcoming_assignments(10)
        else:
            raise PlainError(f"Unknown resource type: {kind}")
        return json_text(content)
    except (CanvasAPIError, PlainError, JsError) as error:
        return json_text({"error": error.message})
