"""canvas_list_account_users: one page of an account's users, with the reference's search sessions.

A call without ``session_id`` starts a session (``sess_`` + base-36 random + base-36 time, kept 30
minutes from creation) remembering the account, search term, sort, order and page size (at most
20); a call with one continues it at ``page`` (default: the session's current page). The page
is fetched with a second axios instance that has no interceptors: no pagination, bare AxiosError
messages. The result text is ``Users (Page N):`` + the users' JSON + a session/pagination footer
whose page numbers come from the ``Link`` header's ``page`` parameters.
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, replace
from typing import Any
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from decathlon.standins.memory.stringify import stringify

from .api import CanvasApi, PlainError
from .axiosurl import build_url
from .jsargs import UNDEFINED, arg, js_min, parse_int, to_string, truthy

SESSION_TTL_SECONDS = 30 * 60
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class UserListSession:
    id: str
    account_id: Any
    search_term: Any
    sort: Any
    order: Any
    per_page: Any
    current_page: Any
    created_at: float


def _base36(number: int) -> str:
    digits = ""
    while True:
        number, digit = divmod(number, 36)
        digits = _BASE36[digit] + digits
        if number == 0:
            return digits


class SessionManager:
    def __init__(self, clock: Callable[[], float] = time.time, rng: random.Random | None = None) -> None:
        self._sessions: dict[str, UserListSession] = {}
        self._clock = clock
        self._rng = rng or random.Random()

    def _new_id(self) -> str:
        # Math.random().toString(36).substring(2): about ten base-36 digits of a random fraction.
        fraction = "".join(self._rng.choice(_BASE36) for _ in range(self._rng.choice((10, 11))))
        return "sess_" + fraction.rstrip("0") + _base36(int(self._clock() * 1000))

    def create(self, **fields: Any) -> str:
        session_id = self._new_id()
        self._sessions[session_id] = UserListSession(id=session_id, created_at=self._clock(), **fields)
        now = self._clock()
        for key, session in list(self._sessions.items()):
            if now - session.created_at > SESSION_TTL_SECONDS:
                del self._sessions[key]
        return session_id

    def get(self, session_id: str) -> UserListSession | None:
        session = self._sessions.get(session_id)
        if session is None:
            return None
        if self._clock() - session.created_at > SESSION_TTL_SECONDS:
            del self._sessions[session_id]
            return None
        return session

    def move_to(self, session_id: str, page: Any) -> None:
        session = self.get(session_id)
        if session is not None:
            self._sessions[session_id] = replace(session, current_page=page)


def _link_pages(link: str) -> dict[str, float]:
    """The reference's reduce over the Link header: rel -> ``parseInt(page || '1')`` of each URL."""
    pages: dict[str, float] = {}
    for part in link.split(","):
        match = re.search(r"<(.+?)>;\s*rel=\"(\w+)\"", part)
        if not match:
            continue
        url = match.group(1)
        if not urlsplit(url).scheme:
            raise PlainError("Invalid URL")
        values = parse_qs(urlsplit(url).query, keep_blank_values=True).get("page")
        pages[match.group(2)] = parse_int(values[0] if values and values[0] else "1")
    return pages


async def list_account_users(api: CanvasApi, sessions: SessionManager, args: dict[str, Any]) -> str:
    session_id = arg(args, "session_id")
    if truthy(session_id):
        session = sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            raise PlainError(f"Session {to_string(session_id)} not found or expired. Please start a new search.")
        page = arg(args, "page") if truthy(arg(args, "page")) else session.current_page
        query = {
            "account_id": session.account_id,
            "search_term": session.search_term,
            "sort": session.sort,
            "order": session.order,
            "page": page,
            "per_page": session.per_page,
        }
        sessions.move_to(session_id, page)
    else:
        if not truthy(arg(args, "account_id")):
            raise PlainError("Missing required field: account_id (required for new sessions)")
        per_page = arg(args, "per_page")
        query = {
            "account_id": arg(args, "account_id"),
            "search_term": arg(args, "search_term"),
            "sort": arg(args, "sort"),
            "order": arg(args, "order"),
            "page": arg(args, "page") if truthy(arg(args, "page")) else 1,
            "per_page": js_min(per_page if truthy(per_page) else 20, 20),
        }
        session_id = sessions.create(
            account_id=query["account_id"],
            search_term=query["search_term"],
            sort=query["sort"],
            order=query["order"],
            per_page=query["per_page"],
            current_page=query["page"],
        )
    page = 1 if query["page"] is UNDEFINED else query["page"]
    per_page = js_min(20 if query["per_page"] is UNDEFINED else query["per_page"], 20)
    params = {
        "search_term": query["search_term"],
        "sort": query["sort"],
        "order": query["order"],
        "page": page,
        "per_page": per_page,
    }
    path = f"/accounts/{to_string(query['account_id'])}/users"
    response = await api.plain("GET", build_url(api.base_url, path, params))

    pagination: dict[str, Any] = {"current_page": page}
    link = response.headers.get("link")
    if link:
        found = _link_pages(link)
        for rel, key in (("next", "next_page"), ("prev", "prev_page"), ("last", "total_pages")):
            if truthy(found.get(rel, UNDEFINED)):
                pagination[key] = found[rel]
    current = to_string(pagination["current_page"] if truthy(pagination["current_page"]) else query["page"])
    users = stringify(response.data, "  ") if response.data is not UNDEFINED else "undefined"
    lines = [f"Users (Page {current}):\n\n", users, "\n\n=== Session & Pagination Info ===\n"]
    lines.append(f"Session ID: {session_id}\n")
    lines.append(f"Current page: {current}\n")
    if truthy(pagination.get("total_pages", UNDEFINED)):
        lines.append(f"Total pages: {to_string(pagination['total_pages'])}\n")
    if truthy(pagination.get("prev_page", UNDEFINED)):
        lines.append(
            f'Previous page: Use {{"session_id": "{session_id}", "page": {to_string(pagination["prev_page"])}}}\n'
        )
    if truthy(pagination.get("next_page", UNDEFINED)):
        lines.append(f'Next page: Use {{"session_id": "{session_id}", "page": {to_string(pagination["next_page"])}}}\n')
    lines.append("\n\U0001f4dd Session Usage:\n")
    lines.append(f'\u2022 Continue browsing: Use session_id "{session_id}" with different page numbers\n')
    lines.append("\u2022 New search: Omit session_id and provide account_id with new parameters\n")
    lines.append("\u2022 Sessions expire after 30 minutes of inactivity")
    return "".join(lines)
