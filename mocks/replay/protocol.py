"""What the replay server and its client agree on beyond MCP itself. Standard library only."""
from __future__ import annotations

# JSON-RPC error code of a replay miss (implementation-defined server-error range).
REPLAY_MISS_CODE = -32050
# Fields a recorded server put in a content item beyond the MCP schema (cli-mcp-server's "error": true)
# travel in the item's _meta under this key, since the SDK's result models drop unknown fields.
EXTRA_META_KEY = "io.decathlon/extra"
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
