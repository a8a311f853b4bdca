"""Calendar v3 events on the user's calendars (`primary` is the user's own, named by their address): list (timeMin,
timeMax, q, singleEvents, orderBy=startTime, maxResults: 250 by default, 2500 at most), get, insert, patch, update,
delete. A dateTime is answered as Google does: in the event's time zone where it has one, else the calendar's."""
from __future__ import annotations

import copy
from datetime import datetime, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from aiohttp import web

from decathlon.emulators.kit import paging
from decathlon.emulators.kit.errors import ApiError
from decathlon.emulators.kit.google import google_error
from decathlon.emulators.kit.params import as_int
from decathlon.emulators.workspace import account
from decathlon.emulators.workspace.store import Json, Workspace
from decathlon.emulators.workspace.web import answer, json_body

DEFAULT_MAX, CAP = 250, 2500


def _error(code: int, reason: str, message: str) -> ApiError:
    return google_error(code, reason, message)


def _instant(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise _error(400, "invalid", "Invalid value for: " + text) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or account.TIME_ZONE)
    except (ZoneInfoNotFoundError, ValueError):
        raise _error(400, "timeRangeEmpty" if not name else "invalid", f"Invalid time zone definition for {name}.") \
            from None


def _normal(when: Json, field: str) -> Json:
    """A start or end as Google answers it: an all-day `date`, or a `dateTime` with its offset in the time zone."""
    if not isinstance(when, dict) or not (when.get("dateTime") or when.get("date")):
        raise _error(400, "required", f"Missing {field} time.")
    if when.get("date"):
        return {"date": str(when["date"])}
    zone_name = when.get("timeZone")
    zone = _zone(zone_name)
    text = str(when["dateTime"])
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise _error(400, "invalid", "Invalid value for: " + text) from None
    if moment.tzinfo is None:
        if not zone_name:
            raise _error(400, "invalid", "Missing time zone definition for start time.")
        moment = moment.replace(tzinfo=zone)
    text = moment.astimezone(zone).isoformat(timespec="seconds")
    out: Json = {"dateTime": text[:-6] + "Z" if text.endswith("+00:00") else text}  # Google writes UTC as `Z`
    if zone_name:
        out["timeZone"] = zone_name
    return out


def _start(event: Json) -> datetime:
    start = event.get("start") or {}
    if start.get("date"):
        return datetime.fromisoformat(start["date"]).replace(tzinfo=_zone(None))
    return _instant(start.get("dateTime", "1970-01-01T00:00:00Z"))


def _end(event: Json) -> datetime:
    end = event.get("end") or {}
    if end.get("date"):
        return datetime.fromisoformat(end["date"]).replace(tzinfo=_zone(None))
    return _instant(end.get("dateTime", "1970-01-01T00:00:00Z"))


class CalendarRoutes:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws

    def calendar(self, request: web.Request) -> dict[str, Json]:
        cid = request.match_info["calendarId"]
        cid = account.EMAIL if cid == "primary" else cid
        if cid != account.EMAIL and cid not in self.ws.events:
            raise _error(404, "notFound", "Not Found")
        return self.ws.events.setdefault(cid, {})

    def event(self, request: web.Request) -> Json:
        found = self.calendar(request).get(request.match_info["eventId"])
        if found is None:
            raise _error(404, "notFound", "Not Found")
        return found

    def _build(self, body: Json, event_id: str, old: Json | None) -> Json:
        now = self.ws.now()
        me = {"email": account.EMAIL, "self": True}
        event: Json = {"kind": "calendar#event", "etag": f'"{self.ws.ids.digits(16)}"', "id": event_id,
                       "status": body.get("status", "confirmed"),
                       "htmlLink": f"https://www.google.com/calendar/event?eid={event_id}",
                       "created": old["created"] if old else now, "updated": now}
        for key in ("summary", "description", "location", "colorId"):
            if key in body:
                event[key] = body[key]
        event["creator"] = old["creator"] if old else me
        event["organizer"] = old["organizer"] if old else me
        event["start"] = _normal(body.get("start"), "start")  # type: ignore[arg-type]
        event["end"] = _normal(body.get("end"), "end")  # type: ignore[arg-type]
        if _end(event) < _start(event):
            raise _error(400, "timeRangeEmpty", "The specified time range is empty.")
        for key in ("recurrence", "attendees", "transparency", "visibility", "extendedProperties", "conferenceData"):
            if key in body:
                event[key] = body[key]
        event["iCalUID"] = old["iCalUID"] if old else f"{event_id}@google.com"
        event["sequence"] = (old.get("sequence", 0) + 1) if old else 0
        event["reminders"] = body.get("reminders", {"useDefault": True})
        event["eventType"] = body.get("eventType", "default")
        return event

    async def list_events(self, request: web.Request) -> web.Response:
        events = [e for e in self.calendar(request).values() if e.get("status") != "cancelled"
                  or request.query.get("showDeleted") == "true"]
        lo, hi = request.query.get("timeMin"), request.query.get("timeMax")
        if lo:
            low = _instant(lo)
            events = [e for e in events if _end(e) > low]
        if hi:
            high = _instant(hi)
            events = [e for e in events if _start(e) < high]
        if lo and hi and _instant(hi) <= _instant(lo):
            raise _error(400, "timeRangeEmpty", "The specified time range is empty.")
        q = request.query.get("q", "").lower()
        if q:
            events = [e for e in events if all(w in " ".join(str(e.get(k, "")) for k in
                                                             ("summary", "description", "location")).lower()
                                               for w in q.split())]
        order = request.query.get("orderBy")
        if order == "startTime":
            if request.query.get("singleEvents") != "true":
                raise _error(400, "invalid", "The requested ordering is not available for the particular query.")
            events.sort(key=lambda e: (_start(e), e["id"]))
        elif order == "updated":
            events.sort(key=lambda e: (e.get("updated", ""), e["id"]))
        elif order is not None:
            raise _error(400, "invalid", "Invalid value for: " + order)
        size = as_int(request.query.get("maxResults"), DEFAULT_MAX)
        if size < 1:
            raise _error(400, "invalid", "Invalid value '%s'. Values must be within the range: [1, 2500]" % size)
        try:
            chunk, token = paging.page(events, request.query.get("pageToken"), size, DEFAULT_MAX, CAP)
        except paging.BadPageToken:
            raise _error(400, "invalid", "Invalid page token value.") from None
        doc: Json = {"kind": "calendar#events", "etag": '"p3"', "summary": account.EMAIL,
                     "description": "", "updated": self.ws.now(), "timeZone": account.TIME_ZONE,
                     "accessRole": "owner", "defaultReminders": [{"method": "popup", "minutes": 30}]}
        if token:
            doc["nextPageToken"] = token
        doc["items"] = chunk
        return answer(doc, request)

    async def get_event(self, request: web.Request) -> web.Response:
        return answer(self.event(request), request)

    async def insert_event(self, request: web.Request) -> web.Response:
        body = await json_body(request)
        cal = self.calendar(request)
        event_id = str(body.get("id") or self.ws.ids.alnum(26, "abcdefghijklmnopqrstuv0123456789"))
        if event_id in cal:
            raise _error(409, "duplicate", "The requested identifier already exists.")
        event = self._build(body, event_id, None)
        cal[event_id] = event
        return answer(event, request)

    async def update_event(self, request: web.Request) -> web.Response:
        old = self.event(request)
        body = await json_body(request)
        if request.method == "PATCH":
            merged = copy.deepcopy(old)
            merged.update(body)
            body = merged
        event = self._build(body, old["id"], old)
        self.calendar(request)[old["id"]] = event
        return answer(event, request)

    async def delete_event(self, request: web.Request) -> web.Response:
        event = self.event(request)
        if event.get("status") == "cancelled":
            raise _error(410, "deleted", "Resource has been deleted")
        del self.calendar(request)[event["id"]]
        return web.Response(status=204)

    def routes(self) -> list[web.RouteDef]:
        base = "/calendar/v3/calendars/{calendarId}/events"
        one = base + "/{eventId}"
        return [web.get(base, self.list_events), web.post(base, self.insert_event), web.get(one, self.get_event),
                web.put(one, self.update_event), web.patch(one, self.update_event),
                web.delete(one, self.delete_event)]
