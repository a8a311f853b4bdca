"""Request parameters as the vendors' own servers hand them to their code: bracketed names in query strings and
form bodies, in the two dialects the emulated vendors run (Rails for Canvas, PHP's `parse_str` for WordPress),
a request body decoded by its content type, and typed reads that never raise on what a client sent.

Both dialects build one nested dict from `a[b][]=1` style names; they differ where the servers differ: Rails starts
a new hash in `a[][x]=1&a[][x]=2` and keeps a badly bracketed name whole; PHP numbers `[]` entries, turns spaces and
dots in the base name into `_`, and an array whose keys are 0..n-1 is a list. A vendor gives its own error shape
for a body its server would refuse (`decode_body`'s `refuse`), so the layer never answers in another vendor's words.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterable, Literal, NoReturn, overload
from urllib.parse import parse_qsl

Dialect = Literal["rails", "php"]

_PART = re.compile(r"\[([^\[\]]*)\]")
_PHP_KEY = re.compile(r"^([^\[]*)((?:\[[^\]]*\])*)$")
_PHP_PART = re.compile(r"\[([^\]]*)\]")


def nest(pairs: Iterable[tuple[str, Any]], dialect: Dialect = "rails") -> dict[str, Any]:
    """One nested dict from (name, value) pairs, as the dialect's server builds its params."""
    return _nest_php(pairs) if dialect == "php" else _nest_rails(pairs)


def parse_query(text: str, dialect: Dialect = "rails") -> dict[str, Any]:
    return nest(parse_qsl(text, keep_blank_values=True), dialect)


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`extra` into `base`, hashes merged key by key (Rails' params from query and body)."""
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            deep_merge(base[k], v)
        else:
            base[k] = v
    return base


def decode_body(content_type: str, raw: bytes, refuse: Callable[[str], NoReturn],
                dialect: Dialect = "rails") -> dict[str, Any]:
    """A request body's parameters: a JSON object as it is (a JSON non-object under `_json`, as Rails wraps it),
    a form body nested in the dialect, anything else none. `refuse("json" | "form")` raises the vendor's error for
    a body that does not decode."""
    if not raw:
        return {}
    ctype = content_type.split(";", 1)[0].strip().lower()
    if ctype == "application/json" or (not ctype and raw[:1] in (b"{", b"[")):
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            refuse("json")
        return data if isinstance(data, dict) else {"_json": data}
    if ctype in ("application/x-www-form-urlencoded", "") or ctype.startswith("text/"):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            refuse("form")
        return parse_query(text, dialect)
    return {}


# ---- Rails ------------------------------------------------------------------------------------------------------

def split_key(key: str) -> list[str]:
    """`a[b][]` -> ["a", "b", ""]; a key that is not well bracketed stays whole."""
    head, bracket, rest = key.partition("[")
    if not bracket:
        return [key]
    rest = "[" + rest
    parts = _PART.findall(rest)
    if "".join(f"[{p}]" for p in parts) != rest or not head:
        return [key]
    return [head, *parts]


def _nest_rails(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        _assign(out, split_key(key), value)
    return out


def _assign(target: dict[str, Any], parts: list[str], value: Any) -> None:
    key, rest = parts[0], parts[1:]
    if not rest:
        target[key] = value
        return
    if rest[0] == "":
        lst = target.get(key)
        if not isinstance(lst, list):
            lst = target[key] = []
        tail = rest[1:]
        if not tail:
            lst.append(value)
            return
        # `a[][x]=1&a[][y]=2&a[][x]=3`: a new hash starts when the last one already has this key
        if not lst or not isinstance(lst[-1], dict) or _has_path(lst[-1], tail):
            lst.append({})
        _assign(lst[-1], tail, value)
        return
    child = target.get(key)
    if not isinstance(child, dict):
        child = target[key] = {}
    _assign(child, rest, value)


def _has_path(d: dict[str, Any], parts: list[str]) -> bool:
    cur: Any = d
    for p in parts:
        if p == "" or not isinstance(cur, dict) or p not in cur:
            return False
        cur = cur[p]
    return True


# ---- PHP ---------------------------------------------------------------------------------------------------------

def _nest_php(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for raw_key, value in pairs:
        match = _PHP_KEY.match(raw_key)
        if not match or not match.group(1):
            head, bracket, rest = raw_key.partition("[")
            if head and bracket and "]" not in rest:  # PHP turns an unclosed `[` into `_`, as it does spaces and dots
                raw_key = re.sub(r"[ .]", "_", head) + "_" + rest
            root[raw_key] = value
            continue
        base = re.sub(r"[ .]", "_", match.group(1))
        parts = _PHP_PART.findall(match.group(2))
        if not parts:
            root[base] = value
            continue
        node = root.setdefault(base, {})
        if not isinstance(node, dict):
            node = root[base] = {}
        for index, part in enumerate(parts):
            key = part if part != "" else str(_next_index(node))
            if index == len(parts) - 1:
                node[key] = value
            else:
                child = node.get(key)
                if not isinstance(child, dict):
                    child = node[key] = {}
                node = child
    return {key: _listify(value) for key, value in root.items()}


def _next_index(node: dict[str, Any]) -> int:
    numbers = [int(k) for k in node if k.lstrip("-").isdigit()]
    return max(numbers) + 1 if numbers else 0


def _listify(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    converted = {key: _listify(item) for key, item in value.items()}
    keys = list(converted)
    if keys and all(k.isdigit() for k in keys) and [int(k) for k in keys] == list(range(len(keys))):
        return [converted[k] for k in keys]
    return converted


# ---- typed reads: a value a client sent, or the default; never an exception -----------------------------------

_TRUE = {"true", "1", "on", "yes", "t"}
_FALSE = {"false", "0", "off", "no", "f", "", "null", "nil"}


def as_bool(value: Any, default: bool | None = None) -> bool | None:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0
    s = str(value).strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    return default


@overload
def as_int(value: Any, default: int) -> int: ...
@overload
def as_int(value: Any, default: int | None = None) -> int | None: ...
def as_int(value: Any, default: int | None = None) -> int | None:
    if value is None or isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else default
    try:
        return int(str(value).strip())
    except ValueError:
        return default


@overload
def as_float(value: Any, default: float) -> float: ...
@overload
def as_float(value: Any, default: float | None = None) -> float | None: ...
def as_float(value: Any, default: float | None = None) -> float | None:
    if value is None or isinstance(value, bool):
        return default
    if isinstance(value, (int, float)):
        return float(value)
    s = str(value).strip()
    if s == "":
        return default
    try:
        return float(s)
    except ValueError:
        return default


def as_list(value: Any) -> list[Any]:
    """Arrays arrive as lists, a single scalar, or a hash indexed `0`, `1`... (form `a[0][x]=`)."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        if value and all(str(k).isdigit() for k in value):
            return [value[k] for k in sorted(value, key=lambda k: int(k))]
        return [value]
    return [value]


def as_str_list(value: Any) -> list[str]:
    return [str(v) for v in as_list(value) if v is not None and not isinstance(v, (dict, list))]
