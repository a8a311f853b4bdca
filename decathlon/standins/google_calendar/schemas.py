"""The reference's five tools: names, descriptions, and input schemas as zod-to-json-schema 3 writes its zod objects
(every object closed with `additionalProperties: false`, `$schema` last), which is what the model is shown."""
from __future__ import annotations

from typing import Any

DRAFT_07 = "http://json-schema.org/draft-07/schema#"


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _time(description: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"dateTime": _text(description), "timeZone": _text("Time zone")},
            "required": ["dateTime"], "additionalProperties": False}


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False,
            "$schema": DRAFT_07}


CREATE_EVENT = _schema({
    "summary": _text("Event title"),
    "start": _time("Start time (ISO format)"),
    "end": _time("End time (ISO format)"),
    "description": _text("Event description"),
    "location": _text("Event location"),
}, ["summary", "start", "end"])

GET_EVENT = _schema({"eventId": _text("ID of the event to retrieve")}, ["eventId"])

UPDATE_EVENT = _schema({
    "eventId": _text("ID of the event to update"),
    "summary": _text("New event title"),
    "start": _time("New start time (ISO format)"),
    "end": _time("New end time (ISO format)"),
    "description": _text("New event description"),
    "location": _text("New event location"),
}, ["eventId"])

DELETE_EVENT = _schema({"eventId": _text("ID of the event to delete")}, ["eventId"])

LIST_EVENTS = _schema({
    "timeMin": _text("Start of time range (ISO format)"),
    "timeMax": _text("End of time range (ISO format)"),
    "maxResults": {"type": "number", "description": "Maximum number of events to return"},
    "orderBy": {"type": "string", "enum": ["startTime", "updated"], "description": "Sort order"},
}, ["timeMin", "timeMax"])

TOOLS: list[dict[str, Any]] = [
    {"name": "create_event", "description": "Creates a new event in Google Calendar", "inputSchema": CREATE_EVENT},
    {"name": "get_event", "description": "Retrieves details of a specific event", "inputSchema": GET_EVENT},
    {"name": "update_event", "description": "Updates an existing event", "inputSchema": UPDATE_EVENT},
    {"name": "delete_event", "description": "Deletes an event from the calendar", "inputSchema": DELETE_EVENT},
    {"name": "list_events", "description": "Lists events within a specified time range", "inputSchema": LIST_EVENTS},
]
SCHEMAS = {tool["name"]: tool["inputSchema"] for tool in TOOLS}
