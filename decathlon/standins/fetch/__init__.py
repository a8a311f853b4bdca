"""Offline-capable stand-in for the npm MCP server ``@tokenizin/mcp-npx-fetch`` (1.0.0).

Run as ``python -m decathlon.standins.fetch``; it serves MCP over stdio with the reference's four
tools (fetch_html, fetch_markdown, fetch_txt, fetch_json), their descriptions and input
schemas (``url``, optional ``headers``), result text and errors. Toolathlon's package-lock
pins the versions followed here: turndown 7.2.0 over @mixmark-io/domino 2.2.0, jsdom 25.0.1,
zod 3.25.76, Node 22's fetch.

Taken from recorded real runs (43 calls): the ``isError`` texts ``Failed to fetch <url>:
HTTP error: <status>`` (401, 403, 404) and ``Failed to fetch <url>: fetch failed`` (unreachable
hosts and ``file://`` URLs); fetch_html's body passed through untouched; fetch_json's compact
``JSON.stringify``; fetch_txt's body-only text with every whitespace run one space (no <head>,
no scripts or styles, block boundaries leaving no space); fetch_markdown's turndown defaults
(setext headings, ``*   `` lists, escaped ``\\[``/``\\_``, inline links with unescaped spaces,
page title and inline script text kept, a run of single spaces left by the <head>), and
domino's self-closing-``<script/>`` quirk that turns the rest of a page into literal text
ending in ``</x-turndown>``. tests/test_fetch_server.py replays the 23 recorded calls whose
response the recording determines through the HTTP shim, byte for byte, and converts a
recorded arXiv page: its Markdown and text match what runs were shown for other arXiv pages
line for line, apart from the paper's own details.

Assumed from the reference's source and its dependencies where no recording shows the case:
the argument errors (zod issue JSON, thrown, so a JSON-RPC error -32603), ``Tool not found``,
V8's ``JSON.parse`` messages, undici's header TypeErrors and credentials error, data: URLs
being fetched, and the default request headers. ``JSON.parse`` / ``JSON.stringify`` semantics
(V8 messages, key order, number format) are the memory stand-in's modules, shared.

Deliberate differences: time and size are bounded (10 s to connect, 30 s per read, 60 s in
all, all reported as ``fetch failed``; bodies beyond 10 MiB are cut and the result says so at
its end, and fetch_json reports such a body as too large); HTTP goes through httpx, so the
record/replay shim intercepts it, and environment proxy settings are honoured (Node's fetch
ignores them); the HTML parser follows the WHATWG algorithm closely but not completely (no
template insertion modes, no implied tbody/tr); the initialize result declares no
``resources`` capability (upstream declares one it does not implement); the SDK orders each
inputSchema's top-level keys its own way.

There is deliberately no ``inprocess_server``: the server's HTTP must go through the
record/replay shim, which is loaded into the server's own process.
"""
