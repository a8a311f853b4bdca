"""local-web_search: Google results through the Serper API, as Toolathlon does (needs SERPER_API_KEY)."""
from __future__ import annotations

import asyncio
import json
import os
import urllib.request

from decathlon.sandbox.local_tools.base import Context, LocalResult, LocalTool, obj

ENDPOINT = os.environ.get("SERPER_ENDPOINT", "https://google.serper.dev/search")
TIMEOUT = 30


def _query(query: str, num: int, key: str) -> dict:
    req = urllib.request.Request(ENDPOINT, data=json.dumps({"q": query, "num": num}).encode(),
                                 headers={"X-API-KEY": key, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:  # noqa: S310 - fixed https endpoint
        return json.loads(resp.read())


async def _run(args: dict, ctx: Context) -> LocalResult:
    key = os.environ.get("SERPER_API_KEY", "").split(",")[0].strip()
    if not key:
        return LocalResult("Error: web search is unavailable: SERPER_API_KEY is not set in the sandbox",
                           is_error=True)
    try:
        data = await asyncio.to_thread(_query, args["query"], int(args.get("num_results") or 10), key)
    except Exception as exc:  # noqa: BLE001 - network and API failures are the tool's result, not a crash
        return LocalResult(f"Error: web search failed: {exc}", is_error=True)
    blocks = [f"Title: {r.get('title', '')}\nLink: {r.get('link', '')}\nSnippet: {r.get('snippet', '')}"
              for r in data.get("organic", [])]
    return LocalResult("\n\n".join(blocks) if blocks else "No results found.")


WEB_SEARCH = LocalTool("web_search", "Search the web and return titles, links and snippets.",
                       obj({"query": {"type": "string"}, "num_results": {"type": "integer"}}, ["query"]), _run)
