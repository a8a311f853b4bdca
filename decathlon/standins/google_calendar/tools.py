"""The five tools: the Calendar v3 call each makes on `primary`, and the text the reference makes of its answer."""
from __future__ import annotations

from typing import Any

from ..canvas.jsargs import truthy
from ..google_api import Caller, failure_message
from ..jsvalues import MessageError
from ..memory.jsvalues import UNDEFINED, to_string
from ..memory.stringify import stringify
from .arguments import parse
from .schemas import SCHEMAS

CALENDAR_ID = "primary"
DEFAULT_MAX_RESULTS = 10


def _js_or(value: Any, fallback: str) -> str:
    """`${value || fallback}`."""
    return to_string(value) if truthy(value) else fallback


def created_text(event: dict[str, Any], arguments: dict[str, Any]) -> str:
    return (f"Event created with ID: {to_string(event.get('id', UNDEFINED))}\n"
            f"Title: {to_string(arguments['summary'])}\n"
            f"Start: {to_string(arguments['start']['dateTime'])}\n"
            f"End: {to_string(arguments['end']['dateTime'])}")


def updated_text(event_id: str, updates: dict[str, Any]) -> str:
    return (f"Event updated: {event_id}\n"
            f"New title: {_js_or(updates.get('summary'), '(unchanged)')}\n"
            f"New start: {_js_or((updates.get('start') or {}).get('dateTime'), '(unchanged)')}\n"
            f"New end: {_js_or((updates.get('end') or {}).get('dateTime'), '(unchanged)')}")


def deleted_text(event_id: str) -> str:
    return f"Event deleted: {event_id}"


def event_text(event: Any) -> str:
    return stringify(event, "  ")


def listed_text(answer: dict[str, Any]) -> str:
    """`Found ${items?.length || 0} events:\\n` and JSON.stringify(items): `undefined` where Google sent no items."""
    items = answer.get("items")
    count = len(items) if isinstance(items, list) else 0
    return f"Found {count} events:\n" + ("undefined" if items is None else stringify(items, "  "))


def _list_parameters(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"calendarId": CALENDAR_ID, "timeMin": arguments["timeMin"], "timeMax": arguments["timeMax"],
            "maxResults": arguments.get("maxResults") or DEFAULT_MAX_RESULTS,
            "orderBy": arguments.get("orderBy") or "startTime", "singleEvents": True}


async def _run(caller: Caller, name: str, arguments: dict[str, Any] | None) -> str:
    if name not in SCHEMAS:
        raise MessageError(f"Unknown tool: {name}")
    args = parse(SCHEMAS[name], arguments)

    def events() -> Any:
        return caller.service("calendar", "v3").events()

    if name == "create_event":
        event = await caller.run(lambda: events().insert(calendarId=CALENDAR_ID, body=args).execute())
        return created_text(event, args)
    if name == "get_event":
        return event_text(await caller.run(lambda: events().get(calendarId=CALENDAR_ID,
                                                                eventId=args["eventId"]).execute()))
    if name == "update_event":
        updates = {key: value for key, value in args.items() if key != "eventId"}
        await caller.run(lambda: events().patch(calendarId=CALENDAR_ID, eventId=args["eventId"],
                                                body=updates).execute())
        return updated_text(args["eventId"], updates)
    if name == "delete_event":
        await caller.run(lambda: events().delete(calendarId=CALENDAR_ID, eventId=args["eventId"]).execute())
        return deleted_text(args["eventId"])
    answer = await caller.run(lambda: events().list(**_list_parameters(args)).execute())
    return listed_text(answer)


async def call(caller: Caller, name: str, arguments: dict[str, Any] | None) -> tuple[str, bool]:
    """The result text and its error flag: every failure is `Error: <message>`, as the reference catches it."""
    try:
        return await _run(caller, name, arguments), False
    except Exception as exc:
        message = failure_message(exc)
        if message is None:
            raise
        return f"Error: {message}", True
