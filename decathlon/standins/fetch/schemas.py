"""Tool names and input schemas of ``@tokenizin/mcp-npx-fetch`` (the same names, argument shapes and
required fields, so recorded calls replay unchanged); the descriptions are our own wording.

The schemas are loose (``headers`` is any object); the reference validates afterwards with
zod, which is stricter (string values, a parseable URL): see validation.py.
"""

from __future__ import annotations

from typing import Any


def _schema(url_description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": url_description},
            "headers": {"type": "object", "description": "Extra HTTP request headers (optional)"},
        },
        "required": ["url"],
    }


TOOL_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "fetch_html": ("Download a web page and return its raw HTML", _schema("Address of the page")),
    "fetch_markdown": ("Download a web page and return it converted to Markdown", _schema("Address of the page")),
    "fetch_txt": (
        "Download a web page and return only its text, without markup",
        _schema("Address of the page"),
    ),
    "fetch_json": ("Download a JSON document and return it", _schema("Address of the JSON document")),
}
