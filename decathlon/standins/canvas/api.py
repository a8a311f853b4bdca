"""The reference's axios instance for Canvas: base URL, Bearer token, JSON, and its two interceptors.

Requests go to ``https://<CANVAS_DOMAIN>/api/v1``. A response body is parsed as JSON whenever
it parses (axios does so whatever the content type), else kept as text ('' when empty).

Pagination: a JSON array with a ``Link`` header has its ``rel="next"`` pages appended, up to
1000 pages. The reference fetches each next page through the same instance, so that page's
response is itself completed with *its* following pages before being appended, and the loop
then continues from that page's own ``next``: with three or more pages the later pages come
back more than once (pages 1, 2, 3, 3 for three; 1, 2, 3, 4, 4, 3, 4, 4 for four). That is
what the model was shown, so it is kept; each URL is fetched once per tool call here and its
result reused, so the request count stays linear where the reference's grows exponentially,
and the total is bounded by DECATHLON_CANVAS_MAX_BYTES.

Errors: an HTTP error status becomes ``Canvas API Error (<status>): <message>`` where the
message is the body's ``message``, else its ``errors`` array's messages joined with ", ", else
the compact JSON of the body, or the body text (cut to 200 UTF-16 units plus "..."); no
response at all becomes ``Network error: <Node's message>``. The reference's retry logic never
fires (its retry counter starts undefined, and ``undefined < 3`` is false), so nothing is retried.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from decathlon.standins.memory.jsonparse import parse as js_parse
from decathlon.standins.memory.jsvalues import utf16_units
from decathlon.standins.memory.stringify import stringify

from .axiosurl import build_url, json_body
from .jsargs import UNDEFINED, JsError, to_string, truthy
from .transport import MAX_BYTES, NoResponse, RawResponse, Transport, size_message

MAX_PAGES = 1000


class CanvasAPIError(Exception):
    """What the reference's response interceptor throws; ``status`` is 0 when no response came."""

    def __init__(self, message: str, status: int, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.data = data


class PlainError(Exception):
    """An error thrown past the interceptors (a bare AxiosError, a Node fs error, a TypeError)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    data: Any
    size: int = 0  # bytes the reference would have downloaded to build this response


@dataclass
class _Call:
    """One tool call's pagination state: completed pages by URL, pages in progress, bytes so far."""

    pages: dict[str, Response] = field(default_factory=dict)
    active: set[str] = field(default_factory=set)
    gathered: int = 0

    def count(self, size: int) -> None:
        self.gathered += size
        if self.gathered > MAX_BYTES:
            raise CanvasAPIError(f"Network error: {size_message()}", 0, None)


def decode_body(body: bytes) -> Any:
    text = body.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text:
        return ""
    try:
        return js_parse(text)
    except JsError:
        return text


def _error_message(data: Any) -> str:
    if isinstance(data, str):
        units = utf16_units(data)
        return "".join(units[:200]) + "..." if len(units) > 200 else data
    if isinstance(data, (dict, list)):
        try:
            message = data.get("message", UNDEFINED) if isinstance(data, dict) else UNDEFINED
            if truthy(message):
                return to_string(message)
            errors = data.get("errors", UNDEFINED) if isinstance(data, dict) else UNDEFINED
            if isinstance(errors, list):
                return ", ".join("" if item is None else to_string(item) for item in map(_message_or_self, errors))
            return stringify(data, "")
        except JsError:
            return to_string(data)
    return to_string(data)


def _message_or_self(err: Any) -> Any:
    if err is None:
        raise JsError("Cannot read properties of null (reading 'message')")
    message = err.get("message", UNDEFINED) if isinstance(err, dict) else UNDEFINED
    return message if truthy(message) else err


def next_page_url(link: str | None) -> str | None:
    if not link:
        return None
    for part in link.split(","):
        if 'rel="next"' in part:
            start = part.find("<")
            end = part.find(">", start + 2)
            return part[start + 1 : end] if start != -1 and end != -1 else None
    return None


def _spread(data: Any) -> list[Any]:
    """``[...data]`` for the appended page: arrays as they are, strings by code point."""
    if isinstance(data, list):
        return data
    if isinstance(data, str):
        return list(data)
    raise JsError("nextResponse.data is not iterable")


class CanvasApi:
    def __init__(self, token: str, domain: str, transport: Transport) -> None:
        self.token = token
        self.base_url = f"https://{domain}/api/v1"
        self.transport = transport

    def _headers(self, has_body: bool) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.token}"}
        if has_body:
            headers["Content-Type"] = "application/json"
        return headers

    async def _exchange(self, method: str, url: str, data: Any) -> RawResponse:
        content = None if data is UNDEFINED else json_body(data)
        return await self.transport.send(method, url, self._headers(content is not None), content)

    async def request(self, method: str, path: str, params: dict[str, Any] | None = None, data: Any = UNDEFINED) -> Any:
        """The response data of a request through the instance (interceptors applied)."""
        response = await self._through_interceptors(method, build_url(self.base_url, path, params), data, _Call())
        return response.data

    async def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return await self.request("GET", path, params)

    async def _through_interceptors(self, method: str, url: str, data: Any, call: _Call) -> Response:
        cacheable = method == "GET" and data is UNDEFINED
        if cacheable and url in call.pages:
            cached = call.pages[url]
            call.count(cached.size)
            return cached
        if cacheable and url in call.active:
            # The reference would recurse until it ran out of memory; say why instead.
            raise CanvasAPIError(f"Network error: pagination loops back to {url}", 0, None)
        try:
            raw = await self._exchange(method, url, data)
        except NoResponse as failure:
            raise CanvasAPIError(f"Network error: {failure.message}", 0, None) from None
        body = decode_body(raw.body)
        if not 200 <= raw.status < 300:
            raise CanvasAPIError(f"Canvas API Error ({raw.status}): {_error_message(body)}", raw.status, body)
        before = call.gathered
        call.count(len(raw.body))
        response = Response(raw.status, raw.headers, body)
        if cacheable:
            call.active.add(url)
        try:
            await self._complete_pages(response, call)
        finally:
            call.active.discard(url)
        response.size = call.gathered - before
        if cacheable:
            call.pages[url] = response
        return response

    async def _complete_pages(self, response: Response, call: _Call) -> None:
        link = response.headers.get("link")
        if not (
            isinstance(response.data, list) and link and "application/json" in response.headers.get("content-type", "")
        ):
            return
        gathered = list(response.data)
        next_url = next_page_url(link)
        pages = 1
        while next_url and pages < MAX_PAGES:
            # A relative link is joined to the base URL, as axios joins any non-absolute URL.
            following = await self._through_interceptors("GET", build_url(self.base_url, next_url), UNDEFINED, call)
            gathered += _spread(following.data)
            next_url = next_page_url(following.headers.get("link"))
            pages += 1
        response.data = gathered

    async def plain(
        self,
        method: str,
        url: str,
        *,
        authorized: bool = True,
        data: Any = UNDEFINED,
        data_fields: list[tuple[str, str]] | None = None,
        file: tuple[str, bytes, str] | None = None,
    ) -> Response:
        """A request that bypasses the interceptors (the reference's second axios instance, or the
        global axios it uploads with): failures surface as bare AxiosErrors."""
        content = None if data is UNDEFINED else json_body(data)
        headers = self._headers(content is not None) if authorized else {}
        form: dict[str, Any] = {}
        if file is not None:
            form = {"data": dict(data_fields or []), "files": [("file", file)]}
        try:
            raw = await self.transport.send(method, url, headers, content, **form)
        except NoResponse as failure:
            raise PlainError(failure.message) from None
        if not 200 <= raw.status < 300:
            raise PlainError(f"Request failed with status code {raw.status}")
        return Response(raw.status, raw.headers, decode_body(raw.body))
