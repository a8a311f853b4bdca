"""What the replay server and its client agree on beyond MCP itself. Standard library only."""
from __future__ import annotations

# JSON-RPC error code of a replay miss (implementation-defined server-error range).
REPLAY_MISS_CODE = -32050
# Fields a recorded server put in a content item beyond the MCP schema (cli-mcp-server's "error": true)
# travel in the item's _meta under this key, since the SDK's result models drop unknown fields.
EXTRA_META_KEY = "io.decathlon/extra"
# A result imported from a transcript is the exact string the model was shown, carried as one text
# item marked with this _meta key: the task API shows it verbatim (no re-rendering, no re-cutting).
SHOWN_META_KEY = "io.decathlon/shown"
SCHEMA_KEYS = {
    "text": {"type", "text", "annotations", "_meta"},
    "image": {"type", "data", "mimeType", "annotations", "_meta"},
    "audio": {"type", "data", "mimeType", "annotations", "_meta"},
    "resource": {"type", "resource", "annotations", "_meta"},
    "resource_link": {"type", "uri", "name", "title", "description", "mimeType", "size", "annotations", "_meta", "icons"},
}


def pack_extras(item: dict) -> dict:
    keys = SCHEMA_KEYS.get(item.get("type", ""), set(item))
    extra = {k: v for k, v in item.items() if k not in keys}
    if not extra:
        return item
    out = {k: v for k, v in item.items() if k in keys}
    out["_meta"] = {**(out.get("_meta") or {}), EXTRA_META_KEY: extra}
    return out


def unpack_extras(item: dict) -> dict:
    meta = item.get("_meta")
    if not isinstance(meta, dict) or EXTRA_META_KEY not in meta:
        return item
    out = {k: v for k, v in item.items() if k != "_meta"}
    rest = {k: v for k, v in meta.items() if k != EXTRA_META_KEY}
    if rest:
        out["_meta"] = rest
    out.update(meta[EXTRA_META_KEY])
    return out


def shown_item(text: str) -> dict:
    return {"type": "text", "text": text, "_meta": {SHOWN_META_KEY: True}}


def verbatim(items: list[dict]) -> str | None:
    """The exact string to show, if the result is an imported transcript's."""
    if len(items) == 1 and isinstance(items[0].get("_meta"), dict) and items[0]["_meta"].get(SHOWN_META_KEY):
        return items[0].get("text", "")
    return None
