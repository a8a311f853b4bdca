"""Canvas's numbered pagination: `page`/`per_page` in, a `Link` header out.

Canvas pages every list endpoint (10 per page unless `per_page` says otherwise, at most 100) and
names the neighbouring pages in a `Link` header built on the request's own URL, keeping its other
query parameters: `<...page=1&per_page=10>; rel="current",<...page=2...>; rel="next",
<...page=1...>; rel="first",<...page=3...>; rel="last"` (`prev` when there is one). The canvas MCP
server follows `rel="next"` to its end and reads page numbers back out of these URLs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence, TypeVar
from urllib.parse import urlencode

from aiohttp import web

T = TypeVar("T")

DEFAULT_PER_PAGE = 10
MAX_PER_PAGE = 100


@dataclass(frozen=True)
class Page:
    items: list
    link: str


def _positive(text: str | None, default: int) -> int:
    try:
        n = int(str(text))
    except (TypeError, ValueError):
        return default
    return n if n > 0 else default


def paginate(request: web.Request, items: Sequence[T], default_per_page: int = DEFAULT_PER_PAGE,
             max_per_page: int = MAX_PER_PAGE) -> Page:
    q = request.rel_url.query
    per_page = min(_positive(q.get("per_page"), default_per_page), max_per_page)
    page = _positive(q.get("page"), 1)
    last = max(1, math.ceil(len(items) / per_page))
    start = (page - 1) * per_page
    chunk = list(items[start:start + per_page])

    base = f"{request.scheme}://{request.host}{request.path}"
    kept = [(k, v) for k, v in q.items() if k not in ("page", "per_page")]

    def url(n: int) -> str:
        return f"{base}?{urlencode([*kept, ('page', str(n)), ('per_page', str(per_page))])}"

    rels = [(url(page), "current")]
    if page < last:
        rels.append((url(page + 1), "next"))
    if page > 1:
        rels.append((url(min(page - 1, last)), "prev"))
    rels.append((url(1), "first"))
    rels.append((url(last), "last"))
    return Page(chunk, ",".join(f'<{u}>; rel="{r}"' for u, r in rels))
