"""End-to-end tests of the fetch MCP stand-in (``@tokenizin/mcp-npx-fetch``), driven over stdio with the mcp client.

Pages come from a ThreadingHTTPServer on 127.0.0.1; nothing here reaches the internet. One
server process is shared by most tests (it keeps no state); the limit tests start their own,
with DECATHLON_FETCH_TIMEOUT / DECATHLON_FETCH_MAX_BYTES lowered.

Recorded real runs (see recorded_runs.py) are used twice: every recorded call whose response
the recording pins down (the HTML or JSON body it showed, the HTTP status of an error, an
unreachable host) is replayed through the project's HTTP record/replay shim and must come back
byte for byte as recorded; and arXiv pages that one run fetched as HTML are converted to
Markdown and text and compared with what other runs were shown for other arXiv pages.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, MCPError
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

from decathlon.standins.fetch.urls import parse as parse_url
from recorded_runs import HOW, REQUIRED, TRAJECTORIES
from decathlon.sandbox.toolfmt import render

REPO_ROOT = Path(__file__).resolve().parents[1]
INTERNAL_ERROR = -32603
USER_AGENT = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
              "Chrome/120.0.0.0 Safari/537.36")
URL_SCHEMA = {"type": "string", "description": "Address of the page"}
HEADERS_SCHEMA = {"type": "object", "description": "Extra HTTP request headers (optional)"}


# --------------------------------------------------------------------------- a loopback web site

Route = Callable[[BaseHTTPRequestHandler], tuple[int, dict[str, str], bytes]]


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client hanging up is expected here
            super().handle_error(request, client_address)


class Site:
    """Serves ROUTES on an ephemeral 127.0.0.1 port; /echo answers with the request's headers as JSON."""

    def __init__(self, routes: dict[str, Route]) -> None:
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                route = site.routes.get(self.path.split("?", 1)[0])
                if route is None:
                    status, headers, body = 404, {"content-type": "text/plain"}, b"not here"
                else:
                    status, headers, body = route(self)
                if status == 0:
                    return  # the route wrote its own response
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.routes = routes
        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _page(body: str | bytes, content_type: str = "text/html; charset=utf-8", status: int = 200) -> Route:
    data = body.encode("utf-8") if isinstance(body, str) else body
    return lambda handler: (status, {"content-type": content_type}, data)


def _echo(handler: BaseHTTPRequestHandler) -> tuple[int, dict[str, str], bytes]:
    seen: dict[str, list[str]] = {}
    for name, value in handler.headers.items():
        seen.setdefault(name.lower(), []).append(value)
    return 200, {"content-type": "application/json"}, json.dumps(seen).encode()


def _redirect(target: str) -> Route:
    return lambda handler: (302, {"location": target}, b"")


def _stalled(handler: BaseHTTPRequestHandler) -> tuple[int, dict[str, str], bytes]:
    # Headers promptly, then a body that never finishes arriving.
    handler.send_response(200)
    handler.send_header("content-type", "text/html")
    handler.send_header("content-length", "1000")
    handler.end_headers()
    handler.wfile.write(b"<p>start")
    handler.wfile.flush()
    time.sleep(8)
    return 0, {}, b""


def _endless(handler: BaseHTTPRequestHandler) -> tuple[int, dict[str, str], bytes]:
    # A chunked body with no end: only a size limit stops the reader.
    handler.send_response(200)
    handler.send_header("content-type", "text/html")
    handler.send_header("transfer-encoding", "chunked")
    handler.end_headers()
    chunk = b"<p>" + b"x" * 4000 + b"</p>"
    try:
        for _ in range(100_000):
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
    except OSError:
        pass  # the client hung up, as it should
    return 0, {}, b""


CONVENTIONS_PAGE = (
    "<!DOCTYPE html><html><head><title>Conventions</title><style>p { color: red }</style></head><body>"
    "<h1>Hello</h1><h2>Sub</h2><h3>Three</h3>"
    '<p>Para with <em>em</em>, <strong>strong</strong>, <code>code</code> and a '
    '<a href="http://x.test/a(b)" title="T">link</a>.</p>'
    "<ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul>"
    '<ol start="3"><li>three</li><li>four</li></ol>'
    "<blockquote><p>quoted</p></blockquote>"
    "<pre><code>line1\nline2</code></pre><hr><p>a<br>b</p>"
    '<img src="i.png" alt="Alt"><script>var s = "a_b";</script>'
    "</body></html>"
)
# turndown 7.2.0 defaults: setext h1/h2, "*   " bullets, 4-space nesting, indented code, "* * *", "  \n".
# <title>, <style> and <script> are not removed: their text is converted too.
CONVENTIONS_MARKDOWN = (
    "Conventionsp { color: red }\n\n"
    "Hello\n=====\n\nSub\n---\n\n### Three\n\n"
    'Para with _em_, **strong**, `code` and a [link](http://x.test/a\\(b\\) "T").\n\n'
    "*   one\n*   two\n    *   nested\n\n"
    "3.  three\n4.  four\n\n"
    "> quoted\n\n"
    "    line1\n    line2\n\n"
    "* * *\n\n"
    "a  \nb\n\n"
    '![Alt](i.png)var s = "a\\_b";'
)

ESCAPES_PAGE = ("<p>1. not a list</p><p>- dash</p><p>+ plus</p><p># hash</p><p>> quote</p><p>=== rule</p>"
                "<p>a_b*c `d` [e] \\f</p><p>  lots   of\n\n space  </p><p>a <b> bold </b> c</p>")
ESCAPES_MARKDOWN = ("1\\. not a list\n\n\\- dash\n\n\\+ plus\n\n\\# hash\n\n\\> quote\n\n\\=== rule\n\n"
                    "a\\_b\\*c \\`d\\` \\[e\\] \\\\f\n\nlots of space\n\na **bold** c")

TEXT_PAGE = ("<html><head><title>Not shown</title><style>p{}</style></head><body>"
             "<h1>Head</h1><p>para  one\n\ttabbed</p><script>hidden()</script><p>two</p>"
             "<noscript><img src=x></noscript><template><p>inert</p></template>\u00a0end\u3000</body></html>")
TEXT_RESULT = "Headpara one tabbedtwo<img src=x> end"


ROUTES: dict[str, Route] = {
    "/page": _page("<!DOCTYPE html><p>caf\u00e9 \U0001f600</p>"),
    "/bom": _page(b"\xef\xbb\xbf<p>after bom</p>"),
    "/latin1": _page(b"<p>caf\xe9</p>", "text/html; charset=iso-8859-1"),
    "/conventions": _page(CONVENTIONS_PAGE),
    "/escapes": _page(ESCAPES_PAGE),
    "/text": _page(TEXT_PAGE),
    "/json": _page('{"b": 1, "2": [1.0, 2.5e30, 1e-7, 123456789012345678901], "a": "\\u00e9\\n", "n": null}',
                   "application/json"),
    "/json-bom": _page(b'\xef\xbb\xbf[true]', "application/json"),
    "/not-json": _page("<!DOCTYPE html><html><body>nope</body></html>"),
    "/empty": _page(""),
    "/trailing": _page('{"a": 1} x', "application/json"),
    "/binary": _page(bytes(range(256)) * 8 + b"%PDF-1.5 \x00\xff\xfe", "application/pdf"),
    "/echo": _echo,
    "/moved": _redirect("/page"),
    "/loop": _redirect("/loop"),
    "/to-file": _redirect("file:///etc/passwd"),
    "/gone": _page("gone", "text/plain", 404),
    "/secret": _page("no", "text/plain", 401),
    "/forbidden": _page("no", "text/plain", 403),
    "/broken": _page("oops", "text/plain", 500),
    "/stalled": _stalled,
    "/endless": _endless,
    "/big": _page("<p>" + "y" * 5000 + "</p>"),
}


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    running = Site(ROUTES)
    yield running
    running.stop()


# --------------------------------------------------------------------------- the server under test


@dataclass
class Server:
    portal: BlockingPortal
    session: ClientSession
    server_info: Any
    tools: list[Any]

    def call(self, name: str, arguments: dict[str, Any] | None) -> tuple[str, bool | None]:
        """(text, is_error) of a tool result, or (message, None) for a JSON-RPC error."""
        try:
            result = self.portal.call(self.session.call_tool, name, arguments)
        except MCPError as exc:
            assert exc.code == INTERNAL_ERROR, exc
            return exc.message, None
        assert len(result.content) == 1 and result.content[0].type == "text"
        return result.content[0].text, result.is_error

    def ok(self, name: str, arguments: dict[str, Any]) -> str:
        text, is_error = self.call(name, arguments)
        assert is_error is False, text
        return text

    def failed(self, name: str, arguments: dict[str, Any]) -> str:
        text, is_error = self.call(name, arguments)
        assert is_error is True, text
        return text

    def rpc_error(self, name: str, arguments: dict[str, Any] | None) -> str:
        text, is_error = self.call(name, arguments)
        assert is_error is None, text
        return text


@asynccontextmanager
async def _connect(env: dict[str, str]) -> AsyncIterator[tuple[ClientSession, Any, list[Any]]]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "decathlon.standins.fetch"],
        cwd=str(REPO_ROOT),
        env={**get_default_environment(), "PYTHONPATH": str(REPO_ROOT), **env},  # env may put the shim first
    )
    async with stdio_client(params) as (read_stream, write_stream), ClientSession(read_stream, write_stream) as session:
        initialized = await session.initialize()
        tools = await session.list_tools()
        yield session, initialized.server_info, tools.tools


@contextmanager
def _serve(env: dict[str, str]) -> Iterator[Server]:
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(_connect(env)) as connected:
        session, info, tools = connected
        yield Server(portal, session, info, tools)


@pytest.fixture(scope="module")
def srv() -> Iterator[Server]:
    # No proxy from the environment may come between the server and 127.0.0.1.
    with _serve({"NO_PROXY": "*", "no_proxy": "*"}) as running:
        yield running


# --------------------------------------------------------------------------- identity and tools


def test_server_identifies_itself_as_the_reference(srv: Server) -> None:
    assert (srv.server_info.name, srv.server_info.version) == ("@tokenizin/mcp-npx-fetch", "0.13.37")


def test_tools_are_listed_with_the_reference_names_and_schemas(srv: Server) -> None:
    # Names, shapes and required fields are the reference's; the descriptions are our own wording.
    listed = {tool.name: (tool.description, tool.input_schema) for tool in srv.tools}
    assert [tool.name for tool in srv.tools] == ["fetch_html", "fetch_markdown", "fetch_txt", "fetch_json"]

    def schema(url: dict[str, str]) -> dict[str, Any]:
        return {"type": "object", "properties": {"url": url, "headers": HEADERS_SCHEMA}, "required": ["url"]}

    assert listed == {
        "fetch_html": ("Download a web page and return its raw HTML", schema(URL_SCHEMA)),
        "fetch_markdown": ("Download a web page and return it converted to Markdown", schema(URL_SCHEMA)),
        "fetch_txt": ("Download a web page and return only its text, without markup", schema(URL_SCHEMA)),
        "fetch_json": ("Download a JSON document and return it",
                       schema({"type": "string", "description": "Address of the JSON document"})),
    }


# --------------------------------------------------------------------------- fetch_html and the body


def test_fetch_html_returns_the_body_untouched(srv: Server, site: Site) -> None:
    assert srv.ok("fetch_html", {"url": f"{site.base}/page"}) == "<!DOCTYPE html><p>caf\u00e9 \U0001f600</p>"


def test_the_body_is_utf8_whatever_the_charset_and_loses_its_bom(srv: Server, site: Site) -> None:
    assert srv.ok("fetch_html", {"url": f"{site.base}/bom"}) == "<p>after bom</p>"
    # Response.text() ignores the charset parameter: Latin-1 bytes are invalid UTF-8.
    assert srv.ok("fetch_html", {"url": f"{site.base}/latin1"}) == "<p>caf\ufffd</p>"


def test_a_binary_body_comes_back_as_replacement_characters_not_a_crash(srv: Server, site: Site) -> None:
    url = f"{site.base}/binary"
    html = srv.ok("fetch_html", {"url": url})
    assert "\ufffd" in html and "%PDF-1.5" in html
    assert "%PDF-1.5" in srv.ok("fetch_txt", {"url": url})
    assert "%PDF-1.5" in srv.ok("fetch_markdown", {"url": url})


def test_redirects_are_followed(srv: Server, site: Site) -> None:
    assert srv.ok("fetch_html", {"url": f"{site.base}/moved"}) == "<!DOCTYPE html><p>caf\u00e9 \U0001f600</p>"


def test_a_data_url_is_fetched_like_any_other(srv: Server) -> None:
    assert srv.ok("fetch_txt", {"url": "data:text/html,<p>hi%20there</p>"}) == "hi there"
    assert srv.ok("fetch_json", {"url": "data:application/json;base64,eyJhIjogMX0="}) == '{"a":1}'


# --------------------------------------------------------------------------- failures as isError results (recorded wording)


@pytest.mark.parametrize("path,status", [("/gone", 404), ("/secret", 401), ("/forbidden", 403), ("/broken", 500)])
def test_an_http_error_status_is_reported_as_recorded(srv: Server, site: Site, path: str, status: int) -> None:
    url = f"{site.base}{path}"
    for tool in ("fetch_html", "fetch_markdown", "fetch_txt", "fetch_json"):
        assert srv.failed(tool, {"url": url}) == f"Failed to fetch {url}: HTTP error: {status}"


@pytest.mark.parametrize("url", [
    "file:///etc/passwd",  # recorded: file:// URLs read "fetch failed"
    "ftp://127.0.0.1/x",
    "mailto:someone@example.test",
    "about:blank",
])
def test_urls_fetch_cannot_get_fail_the_way_undici_does(srv: Server, url: str) -> None:
    assert srv.failed("fetch_txt", {"url": url}) == f"Failed to fetch {url}: fetch failed"


def test_an_unreachable_host_or_a_redirect_loop_reads_fetch_failed(srv: Server, site: Site) -> None:
    closed = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = closed.server_address[1]
    closed.server_close()  # nothing listens there now
    url = f"http://127.0.0.1:{port}/x"
    assert srv.failed("fetch_html", {"url": url}) == f"Failed to fetch {url}: fetch failed"
    for path in ("/loop", "/to-file"):
        url = f"{site.base}{path}"
        assert srv.failed("fetch_markdown", {"url": url}) == f"Failed to fetch {url}: fetch failed"


def test_credentials_in_the_url_are_refused_before_any_request(srv: Server, site: Site) -> None:
    url = site.base.replace("http://", "http://user:pw@") + "/page"
    assert srv.failed("fetch_html", {"url": url}) == (
        f"Failed to fetch {url}: Request cannot be constructed from a URL that includes credentials: {url}")


# --------------------------------------------------------------------------- fetch_json


def test_fetch_json_is_compact_json_stringify_output(srv: Server, site: Site) -> None:
    # Integer-like keys first, JavaScript number formatting, no spaces, non-ASCII kept.
    assert srv.ok("fetch_json", {"url": f"{site.base}/json"}) == (
        '{"2":[1,2.5e+30,1e-7,123456789012345680000],"b":1,"a":"\u00e9\\n","n":null}')
    assert srv.ok("fetch_json", {"url": f"{site.base}/json-bom"}) == "[true]"


def test_a_body_that_is_not_json_fails_with_the_v8_message_alone(srv: Server, site: Site) -> None:
    # JSON.parse throws outside the fetch, so there is no "Failed to fetch" prefix.
    assert srv.failed("fetch_json", {"url": f"{site.base}/not-json"}) == (
        "Unexpected token '<', \"<!DOCTYPE \"... is not valid JSON")
    assert srv.failed("fetch_json", {"url": f"{site.base}/empty"}) == "Unexpected end of JSON input"
    assert srv.failed("fetch_json", {"url": f"{site.base}/trailing"}) == (
        "Unexpected non-whitespace character after JSON at position 9 (line 1 column 10)")


# --------------------------------------------------------------------------- fetch_markdown and fetch_txt


def test_fetch_markdown_follows_turndown_defaults(srv: Server, site: Site) -> None:
    assert srv.ok("fetch_markdown", {"url": f"{site.base}/conventions"}) == CONVENTIONS_MARKDOWN


def test_fetch_markdown_escapes_and_collapses_whitespace_like_turndown(srv: Server, site: Site) -> None:
    assert srv.ok("fetch_markdown", {"url": f"{site.base}/escapes"}) == ESCAPES_MARKDOWN


def test_fetch_markdown_of_an_empty_page_is_empty(srv: Server, site: Site) -> None:
    assert srv.ok("fetch_markdown", {"url": f"{site.base}/empty"}) == ""


def test_fetch_txt_is_body_text_without_scripts_and_styles_on_one_line(srv: Server, site: Site) -> None:
    assert srv.ok("fetch_txt", {"url": f"{site.base}/text"}) == TEXT_RESULT


# --------------------------------------------------------------------------- headers


def test_the_default_and_custom_headers_are_sent(srv: Server, site: Site) -> None:
    sent = json.loads(srv.ok("fetch_json", {"url": f"{site.base}/echo", "headers": {"X-Token": " abc "}}))
    assert sent["user-agent"] == [USER_AGENT]
    assert sent["x-token"] == ["abc"]  # leading/trailing whitespace is trimmed, as Headers does
    assert sent["accept"] == ["*/*"]
    replaced = json.loads(srv.ok("fetch_json", {"url": f"{site.base}/echo", "headers": {"User-Agent": "me"}}))
    assert replaced["user-agent"] == ["me"]
    # A differently-cased key is a second property; Headers joins the two values.
    joined = json.loads(srv.ok("fetch_json", {"url": f"{site.base}/echo", "headers": {"user-agent": "me"}}))
    assert joined["user-agent"] == [f"{USER_AGENT}, me"]


def test_headers_undici_rejects_fail_the_fetch_with_its_type_error(srv: Server, site: Site) -> None:
    url = f"{site.base}/echo"
    assert srv.failed("fetch_html", {"url": url, "headers": {"bad name": "x"}}) == (
        f'Failed to fetch {url}: Headers.append: "bad name" is an invalid header name.')
    assert srv.failed("fetch_html", {"url": url, "headers": {"X-A": "line\nbreak"}}) == (
        f'Failed to fetch {url}: Headers.append: "line\nbreak" is an invalid header value.')
    assert srv.failed("fetch_html", {"url": url, "headers": {"X-A": "caf\u00e9 \u20ac"}}) == (
        f"Failed to fetch {url}: Cannot convert argument to a ByteString because the character at index 5 "
        "has a value of 8364 which is greater than 255.")
    # JavaScript counts UTF-16 code units: an emoji is two, and the first is what is reported.
    assert srv.failed("fetch_html", {"url": url, "headers": {"X-\U0001f600": "x"}}) == (
        f"Failed to fetch {url}: Cannot convert argument to a ByteString because the character at index 2 "
        "has a value of 55357 which is greater than 255.")


# --------------------------------------------------------------------------- bad input: thrown, so JSON-RPC errors


def _zod(*issues: dict[str, Any]) -> str:
    return json.dumps(list(issues), indent=2, ensure_ascii=False)


def test_a_missing_or_mistyped_url_is_a_zod_error(srv: Server) -> None:
    assert srv.rpc_error("fetch_html", {}) == _zod(
        {"code": "invalid_type", "expected": "string", "received": "undefined", "path": ["url"], "message": "Required"})
    assert srv.rpc_error("fetch_txt", {"url": 7}) == _zod(
        {"code": "invalid_type", "expected": "string", "received": "number", "path": ["url"],
         "message": "Expected string, received number"})
    assert srv.rpc_error("fetch_html", None) == _zod(
        {"code": "invalid_type", "expected": "object", "received": "undefined", "path": [], "message": "Required"})


@pytest.mark.parametrize("url", ["example.com", "", "http://", "https://exa mple.com/", "http://1.2.3.256/",
                                 "http://host:99999/"])
def test_a_string_new_url_rejects_is_an_invalid_url(srv: Server, url: str) -> None:
    assert srv.rpc_error("fetch_markdown", {"url": url}) == _zod(
        {"validation": "url", "code": "invalid_string", "message": "Invalid url", "path": ["url"]})


def test_headers_must_be_an_object_of_strings(srv: Server, site: Site) -> None:
    url = f"{site.base}/page"
    assert srv.rpc_error("fetch_html", {"url": url, "headers": "X-A: 1"}) == _zod(
        {"code": "invalid_type", "expected": "object", "received": "string", "path": ["headers"],
         "message": "Expected object, received string"})
    assert srv.rpc_error("fetch_html", {"url": url, "headers": {"b": 1, "a": None}}) == _zod(
        {"code": "invalid_type", "expected": "string", "received": "number", "path": ["headers", "b"],
         "message": "Expected string, received number"},
        {"code": "invalid_type", "expected": "string", "received": "null", "path": ["headers", "a"],
         "message": "Expected string, received null"})


def test_every_issue_is_reported_at_once_in_schema_order(srv: Server) -> None:
    assert srv.rpc_error("fetch_json", {"headers": [], "url": "nope"}) == _zod(
        {"validation": "url", "code": "invalid_string", "message": "Invalid url", "path": ["url"]},
        {"code": "invalid_type", "expected": "object", "received": "array", "path": ["headers"],
         "message": "Expected object, received array"})


def test_an_unknown_tool_is_not_found_but_arguments_are_checked_first(srv: Server, site: Site) -> None:
    assert srv.rpc_error("fetch_pdf", {"url": f"{site.base}/page"}) == "Tool not found"
    assert "Required" in srv.rpc_error("fetch_pdf", {})


# --------------------------------------------------------------------------- bounded time and size


@pytest.fixture(scope="module")
def limited() -> Iterator[Server]:
    env = {"NO_PROXY": "*", "no_proxy": "*", "DECATHLON_FETCH_TIMEOUT": "2", "DECATHLON_FETCH_MAX_BYTES": "3000"}
    with _serve(env) as running:
        yield running


def test_a_stalled_response_ends_as_fetch_failed_within_the_time_limit(limited: Server, site: Site) -> None:
    url = f"{site.base}/stalled"
    began = time.monotonic()
    assert limited.failed("fetch_html", {"url": url}) == f"Failed to fetch {url}: fetch failed"
    assert time.monotonic() - began < 6


def test_a_body_over_the_size_limit_is_cut_and_says_so(limited: Server, site: Site) -> None:
    note = "\n\n[Response body truncated: only the first 3000 bytes were read.]"
    html = limited.ok("fetch_html", {"url": f"{site.base}/big"})
    assert html == "<p>" + "y" * 2997 + note
    assert limited.ok("fetch_txt", {"url": f"{site.base}/big"}) == "y" * 2997 + note
    endless = limited.ok("fetch_markdown", {"url": f"{site.base}/endless"})
    assert endless.endswith(note) and endless.startswith("x" * 100)
    url = f"{site.base}/big"
    assert limited.failed("fetch_json", {"url": url}) == f"Failed to fetch {url}: response body exceeds 3000 bytes"


# --------------------------------------------------------------------------- recorded real runs


@dataclass
class RecordedCall:
    run: str
    tool: str
    arguments: dict[str, Any]
    shown: str  # exactly what the model was shown


def _recorded_fetch_calls() -> list[RecordedCall]:
    if not TRAJECTORIES.is_dir() or not any(TRAJECTORIES.glob("*.json")):
        pytest.fail(HOW) if REQUIRED else pytest.skip(HOW)
    calls: list[RecordedCall] = []
    for path in sorted(TRAJECTORIES.glob("*.json")):
        messages = json.loads(path.read_text(encoding="utf-8"))["messages"]
        shown = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
        for message in messages:
            for call in message.get("tool_calls") or []:
                name = call["function"]["name"]
                if name.startswith("fetch-fetch_") and call["id"] in shown:
                    calls.append(RecordedCall(path.stem, name.removeprefix("fetch-"),
                                              json.loads(call["function"]["arguments"]), shown[call["id"]]))
    return calls


def _shown_text(call: RecordedCall) -> str | None:
    """The text item the model was shown, unless Toolathlon cut it (it then no longer parses)."""
    try:
        item = json.loads(call.shown)
    except json.JSONDecodeError:
        return None
    return item["text"] if isinstance(item, dict) and item.get("type") == "text" else None


def _request_url(url: str) -> str:
    parsed = parse_url(url)
    assert parsed is not None, url
    return str(httpx.URL(parsed.request_url))


def _cassette(calls: list[RecordedCall]) -> tuple[list[RecordedCall], list[dict[str, Any]]]:
    """The recorded calls whose responses the recording determines, and those responses."""
    replayable: list[RecordedCall] = []
    interactions: list[dict[str, Any]] = []
    for call in calls:
        text = _shown_text(call)
        if text is None:
            continue
        url = call.arguments["url"]
        status = re.fullmatch(re.escape(f"Failed to fetch {url}: HTTP error: ") + r"(\d+)", text)
        if text == f"Failed to fetch {url}: fetch failed":
            response = None  # nothing recorded: in replay the request misses and is refused
        elif status is not None:
            response = {"status": int(status.group(1)), "headers": {"content-type": "text/html"}, "body": ""}
        elif call.tool in ("fetch_html", "fetch_json"):
            response = {"status": 200, "headers": {"content-type": "text/html"}, "body": text}
        else:
            continue  # Markdown or text of a page whose HTML was never shown
        replayable.append(call)
        if response is not None:
            interactions.append({"process": "fetch", "response": response, "request": {
                "method": "GET", "url": _request_url(url), "headers": {}, "body": None, "body_b64": None}})
    return replayable, interactions


def test_recorded_calls_replay_byte_for_byte_through_the_http_shim(tmp_path: Path) -> None:
    from decathlon.sandbox.http import env_for, prepare_replay, shim_dir

    calls = _recorded_fetch_calls()
    if not (shim_dir() / "vcr").is_dir():
        pytest.skip("HTTP shim not installed: run ci/install_servers.py")
    replayable, interactions = _cassette(calls)
    prepare_replay(tmp_path, interactions)
    mismatches = []
    with _serve(env_for("replay", tmp_path, "fetch", [], base={"PYTHONPATH": str(REPO_ROOT)})) as replaying:
        for call in replayable:
            text, is_error = replaying.call(call.tool, call.arguments)
            assert is_error is not None, (call.run, text)
            if render([{"type": "text", "text": text}]) != call.shown:
                mismatches.append((call.run, call.tool, call.arguments["url"], text[:200], call.shown[:200]))
    assert not mismatches, mismatches
    # 43 recorded calls: 12 errors (HTTP 401/403/404, fetch failed), 11 HTML or JSON bodies shown whole.
    assert len(calls) == 43 and len(replayable) >= 20, (len(calls), len(replayable))
    print(f"replayed {len(replayable)} of {len(calls)} recorded fetch calls byte for byte")


def _recorded_arxiv(calls: list[RecordedCall], tool: str, arxiv_id: str) -> str:
    for call in calls:
        if call.tool == tool and call.arguments["url"] == f"https://arxiv.org/abs/{arxiv_id}":
            text = _shown_text(call)
            assert text is not None
            return text
    pytest.fail(f"no recorded {tool} of arXiv {arxiv_id}")


def _generic(text: str) -> str:
    return re.sub(r"\d{4}\.\d{4,5}", "ID", text)


@pytest.fixture(scope="module")
def arxiv() -> Iterator[tuple[list[RecordedCall], Site]]:
    """A recorded arXiv abstract page (2308.01825, as shown whole by fetch_html), served locally twice:
    as it was, and with its self-closed ``<script ... /></script>`` written as a normal element."""
    calls = _recorded_fetch_calls()
    page = _recorded_arxiv(calls, "fetch_html", "2308.01825")
    self_closed = '<script language="javascript" src="/static/browse/0.3.4/js/accordion.js" /></script>'
    assert page.count(self_closed) == 1
    plain = page.replace(self_closed, self_closed.replace(" /></script>", "></script>"))
    running = Site({"/as-recorded": _page(page), "/plain-script": _page(plain)})
    yield calls, running
    running.stop()


def test_markdown_of_an_arxiv_page_has_the_recorded_domino_quirk(srv: Server, arxiv) -> None:
    calls, pages = arxiv
    ours = srv.ok("fetch_markdown", {"url": f"{pages.base}/as-recorded"})
    # Recorded (another paper, same template): after a self-closed <script/>, domino reads the rest
    # of the page, turndown's wrapper end tag included, as script text.
    shown = _recorded_arxiv(calls, "fetch_markdown", "2502.19187")
    quirk = r'\\\[(\d{4}\.\d{5})\\\] [^\n]*?\S {12}</script> <link rel="canonical" href="https://arxiv\.org/abs/\1"/> '
    for text in (shown, ours):
        assert re.match(quirk, text), text[:300]
        assert text.endswith("</script> </body> </html></x-turndown>")
        assert "\n" not in text
    assert len(_generic(ours)) == pytest.approx(len(_generic(shown)), rel=0.1)


def test_markdown_of_an_arxiv_page_matches_the_recorded_layout(srv: Server, arxiv) -> None:
    calls, pages = arxiv
    ours = _generic(srv.ok("fetch_markdown", {"url": f"{pages.base}/plain-script"})).split("\n")
    shown = _generic(_recorded_arxiv(calls, "fetch_markdown", "2410.23123")).split("\n")
    # The <head> leaves the title followed by one space per whitespace run between void elements.
    assert ours[0] == "\\[ID\\] Scaling Relationship on Learning Mathematical Reasoning with Large Language Models" + " " * 30
    assert shown[0].endswith("Reasoning" + " " * 30)
    # Everything up to the paper's own details, and everything after them, is as recorded.
    assert ours[1:40] == shown[1:40]
    assert ours[-117:] == shown[-117:]


def test_text_of_an_arxiv_page_matches_the_recorded_extraction(srv: Server, arxiv) -> None:
    calls, pages = arxiv
    ours = _generic(srv.ok("fetch_txt", {"url": f"{pages.base}/as-recorded"}))
    shown = _generic(_recorded_arxiv(calls, "fetch_txt", "2302.13971"))
    head = "About Computer Science > Computation and Language arXiv:ID (cs) [Submitted on "
    assert ours[: ours.index(head) + len(head)] == shown[: shown.index(head) + len(head)]
    tail = " export BibTeX citation Loading... BibTeX formatted citation"
    assert ours[ours.index(tail):] == shown[shown.index(tail):]
