"""The reference's HTTP client: axios 1.x against `<WORDPRESS_SITE_URL>/wp-json/wc/v3`, Basic auth with the keys.

What the model sees depends on axios' details, so they are followed: query parameters serialized as
axios does (`status[]=a&status[]=b`, booleans as true/false, undefined left out, null as empty,
spaces as `+`), a body sent as JSON unless it already is a string (then sent as is, so a JSON
string still works and anything else is WordPress' "Invalid JSON body passed."), the reply parsed
as JSON when it is JSON and kept as text otherwise, and failures turned into the reference's
messages by `handleRequest`:

- 404: "WooCommerce API endpoint not found. Please check if WooCommerce is installed and REST API
  is enabled. URL: /products/999" (the path without the base URL or query);
- 401, 403: the fixed authentication and permission messages;
- any other status: "WooCommerce API error: <message or code> (Status: <status>)";
- no reply: Node's error text ("connect ECONNREFUSED 127.0.0.1:10003").

Unlike the reference (no timeout at all), every request is bounded: 10 s to connect and 30 s in
all by default (DECATHLON_WOOCOMMERCE_TIMEOUT, seconds), reported in axios' words
("timeout of 30000ms exceeded"). Requests go through httpx, so the record/replay shim sees them.
"""
from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import anyio
import httpx

from ..memory.jsonparse import parse as json_parse
from ..memory.jsvalues import JsError, number_to_string
from ..jsvalues import MessageError

TOTAL_TIMEOUT = float(os.environ.get("DECATHLON_WOOCOMMERCE_TIMEOUT") or 30.0)
CONNECT_TIMEOUT = min(10.0, TOTAL_TIMEOUT)
UNDEFINED = object()  # a JavaScript undefined: left out of query strings and JSON bodies
NOT_FOUND = ("WooCommerce API endpoint not found. Please check if WooCommerce is installed and REST API is "
             "enabled. URL: {url}")
UNAUTHORIZED = "WooCommerce API authentication failed. Please check your consumer key and secret."
FORBIDDEN = "WooCommerce API access forbidden. Please check your API key permissions."


class ToolError(MessageError):
    """What the reference throws inside a tool: the client gets `Error: <message>` with isError."""


def js_string(value: Any) -> str:
    """`String(value)` / template interpolation of a JSON value."""
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return number_to_string(value)
    if isinstance(value, list):
        return ",".join("" if item is None or item is UNDEFINED else js_string(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def _encode(text: str) -> str:
    encoded = quote(text, safe="-_.!~*'()")
    for raw, kept in (("%3A", ":"), ("%24", "$"), ("%2C", ","), ("%20", "+"), ("%5B", "["), ("%5D", "]")):
        encoded = encoded.replace(raw, kept).replace(raw.lower(), kept)
    return encoded


def serialize_params(params: dict[str, Any]) -> str:
    """axios' default params serializer (toFormData visitor, brackets for arrays and objects)."""
    pairs: list[tuple[str, str]] = []

    def convert(value: Any) -> str:
        return "" if value is None else js_string(value)

    def visit(value: Any, key: str, nested: bool) -> None:
        if value is UNDEFINED:
            return
        if isinstance(value, list) and not nested and all(not isinstance(v, (list, dict)) for v in value):
            for item in value:
                if item is not None and item is not UNDEFINED:
                    pairs.append((f"{key}[]", convert(item)))
            return
        if isinstance(value, dict):
            for sub_key, sub_value in value.items():
                visit(sub_value, f"{key}[{sub_key}]", True)
            return
        if isinstance(value, list):
            for index, item in enumerate(value):
                visit(item, f"{key}[{index}]", True)
            return
        pairs.append((key, convert(value)))

    for key, value in params.items():
        visit(value, key, False)
    return "&".join(f"{_encode(k)}={_encode(v)}" for k, v in pairs)


def _strip_undefined(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_undefined(v) for k, v in value.items() if v is not UNDEFINED}
    if isinstance(value, list):
        return [None if v is UNDEFINED else _strip_undefined(v) for v in value]
    return value


@dataclass
class WooClient:
    site_url: str
    consumer_key: str
    consumer_secret: str

    @property
    def base_url(self) -> str:
        return self.site_url.rstrip("/") + "/wp-json/wc/v3"

    async def request(self, method: str, path: str, params: dict[str, Any] | None = None, data: Any = UNDEFINED) -> Any:
        query = serialize_params(params or {})
        url = self.base_url + path + (("&" if "?" in path else "?") + query if query else "")
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/plain, */*",
                   "User-Agent": "axios/1.12.2"}
        content: bytes | None = None
        if data is not UNDEFINED and data is not None:
            if isinstance(data, str):
                content = data.encode("utf-8")
            else:
                from ..memory.stringify import stringify
                content = stringify(_strip_undefined(data)).encode("utf-8")
        print(f"[WooCommerce] Request: {method} {self.base_url}{path}", file=sys.stderr)
        try:
            with anyio.fail_after(TOTAL_TIMEOUT):
                async with httpx.AsyncClient(timeout=httpx.Timeout(TOTAL_TIMEOUT, connect=CONNECT_TIMEOUT),
                                             auth=(self.consumer_key, self.consumer_secret),
                                             follow_redirects=True, max_redirects=5) as http:
                    response = await http.request(method, url, headers=headers, content=content)
        except TimeoutError:
            raise ToolError(f"timeout of {int(TOTAL_TIMEOUT * 1000)}ms exceeded") from None
        except httpx.TimeoutException:
            raise ToolError(f"timeout of {int(TOTAL_TIMEOUT * 1000)}ms exceeded") from None
        except httpx.HTTPError as exc:
            raise ToolError(_network_message(url, exc)) from None
        print(f"[WooCommerce] Response: {response.status_code} {response.reason_phrase}", file=sys.stderr)
        body = _parse_body(response)
        if 200 <= response.status_code < 300:
            return body
        raise ToolError(_http_message(response.status_code, body, path))


def _parse_body(response: httpx.Response) -> Any:
    text = response.content.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text:
        return ""
    try:
        return json_parse(text)
    except JsError:
        return text  # axios' silent JSON parsing keeps a body that is not JSON as a string


def _http_message(status: int, body: Any, path: str) -> str:
    if status == 404:
        return NOT_FOUND.format(url=path)
    if status == 401:
        return UNAUTHORIZED
    if status == 403:
        return FORBIDDEN
    message: Any = None
    if isinstance(body, dict):
        message = body.get("message") or body.get("code")
    if not message:
        message = f"Request failed with status code {status}"
    return f"WooCommerce API error: {js_string(message)} (Status: {status})"


def _network_message(url: str, exc: httpx.HTTPError) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if isinstance(exc, httpx.ConnectError):
        try:
            address = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)[0][4][0]
        except OSError:
            return f"getaddrinfo ENOTFOUND {host}"
        return f"connect ECONNREFUSED {address}:{port}"
    if isinstance(exc, httpx.TooManyRedirects):
        return "Maximum number of redirects exceeded"
    if isinstance(exc, httpx.UnsupportedProtocol):
        return f"Unsupported protocol {parts.scheme}:"
    return "socket hang up"
