"""fetch_txt's text: the page parsed as JSDOM parses it, scripts and styles removed, body text.

The reference does ``new JSDOM(html)``, removes every ``script`` and ``style`` element,
takes ``document.body.textContent`` and replaces each run of JavaScript whitespace with one
space before trimming. So the <head> (title included) never shows, <noscript> content shows
as its raw markup (JSDOM parses with scripting enabled, so it is text), and block boundaries
leave no separator: ``<p>a</p><p>b</p>`` reads ``ab``, as recorded runs show.
"""

from __future__ import annotations

import re

from ..memory.jsvalues import JS_WHITESPACE
from .dom import Element, text_content
from .htmlparse import parse_document

_JS_WHITESPACE_RUN = re.compile("[" + re.escape(JS_WHITESPACE) + "]+")


def html_to_text(html: str) -> str:
    document, body = parse_document(html)
    # getElementsByTagName matches the qualified name in every namespace (an svg <script> too).
    doomed = [node for node in document.descendants()
              if isinstance(node, Element) and node.name in ("script", "style")]
    for element in doomed:
        element.detach()
    return _JS_WHITESPACE_RUN.sub(" ", text_content(body)).strip(JS_WHITESPACE)
