"""What the model is shown for a tool result, byte for byte as Toolathlon shows it.

Toolathlon's runner (openai-agents) turns an MCP result into one string: a single content item
is its compact JSON (`{"type":"text","text":…,"annotations":null}`), several items are a JSON
list in json.dumps' default style. Outputs over 100,000 characters are cut, and the whole output
is saved under <workspace>/.overlong_tool_outputs/ for the paging tools.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from decathlon.sandbox.replay.protocol import unpack_extras

MAX_CHARS = int(os.environ.get("BENCH_MAX_SINGLE_TURN_RETURN_CHARS", "100000"))
OVERLONG_DIR = ".overlong_tool_outputs"
_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"  # shortuuid's


def content_item(item: dict[str, Any]) -> dict[str, Any]:
    """One MCP content item in the key order and shape the recordings show."""
    item = unpack_extras(item)
    out: dict[str, Any] = {"type": item.get("type")}
    for key, value in item.items():
        if key in ("type", "_meta", "meta", "annotations"):
            continue
        out[key] = value
    out["annotations"] = item.get("annotations")
    # Extra fields a server adds (cli-mcp-server's "error": true) come after, as pydantic dumps them.
    ordered = {"type": out.pop("type")}
    known = [k for k in ("text", "data", "mimeType", "resource", "uri", "name") if k in out]
    for key in known:
        ordered[key] = out.pop(key)
    ordered["annotations"] = out.pop("annotations")
    ordered.update(out)
    return ordered


def render(items: list[dict[str, Any]]) -> str:
    if len(items) == 1:
        return json.dumps(content_item(items[0]), ensure_ascii=False, separators=(",", ":"))
    if not items:
        return "[]"
    return json.dumps([content_item(i) for i in items])


def shortuuid(seed: str) -> str:
    """A 22-character id like Toolathlon's, derived from the output so replays are stable."""
    number = int.from_bytes(hashlib.sha256(seed.encode("utf-8", "surrogatepass")).digest(), "big")
    chars = []
    for _ in range(22):
        number, rem = divmod(number, len(_ALPHABET))
        chars.append(_ALPHABET[rem])
    return "".join(chars)


def cut_overlong(text: str, tool_name: str, workspace: Path, seq: int) -> str:
    if len(text) <= MAX_CHARS:
        return text
    uid = shortuuid(f"{seq}\0{tool_name}\0{text}")
    folder = workspace / OVERLONG_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{uid}.json"
    tmp = path.with_suffix(".tmp")
    # The output verbatim, as upstream saves it: an MCP answer is its content item's JSON
    # ({"type": "text", "text": ...}), which is what an agent's code reading the file expects.
    tmp.write_text(text, encoding="utf-8", errors="surrogatepass")
    os.replace(tmp, path)
    return (f"{text[:MAX_CHARS]} ...\n\n(The output of the tool call (shortuuid identifier: {uid}) is too "
            f"long! Only the first {MAX_CHARS} characters are shown here. The original output length is "
            f"{len(text)} characters. The full output has been saved to the file {path}. Please check "
            "this file carefully, as it may be very long!)")
