"""Request parameters the way Rails hands them to Canvas's controllers.

Query strings and form bodies use bracketed names (`course[name]=x`, `assignment[submission_types][]=a`,
`quiz_questions[][id]=1&quiz_questions[][answer]=2`); JSON bodies are merged in as they are. Scripts
send both (requests' `data=`/`json=`, aiohttp, axios), so every handler reads one nested dict.
A JSON body's keys are taken literally, as Rails does: `{"recipients[]": [...]}` is not `recipients`.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable, overload
from urllib.parse import parse_qsl

from decathlon.emulators.canvas.errors import ApiError

_PART = re.compile(r"\[([^\[\]]*)\]")


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


def _assign(target: dict, parts: list[str], value: Any) -> None:
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


def _has_path(d: dict, parts: list[str]) -> bool:
    cur: Any = d
    for p in parts:
        if p == "":
            return False
        if not isinstance(cur, dict) or p not in cur:
            return False
        cur = cur[p]
    return True


def nest(pairs: Iterable[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        _assign(out, split_key(key), value)
    return out


def merge(base: dict, extra: dict) -> dict:
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            merge(base[k], v)
        else:
            base[k] = v
    return base


def parse_body(content_type: str, raw: bytes) -> dict:
    """The body's parameters; ApiError 400 for a body Rails would refuse to parse."""
    if not raw:
        return {}
    ctype = content_type.split(";", 1)[0].strip().lower()
    if ctype == "application/json" or (not ctype and raw[:1] in (b"{", b"[")):
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise ApiError(400, {"errors": [{"message": "The request body is not valid JSON."}]}) from None
        if isinstance(data, dict):
            return data
        # Rails wraps a non-object JSON body as `_json`; nothing Canvas reads looks there
        return {"_json": data}
    if ctype in ("application/x-www-form-urlencoded", "") or ctype.startswith("text/"):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ApiError(400, {"errors": [{"message": "The request body is not valid form data."}]}) from None
        return nest(parse_qsl(text, keep_blank_values=True))
    return {}


# --- typed reads ---------------------------------------------------------------------------------

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


def as_list(value: Any) -> list:
    """Rails arrays arrive as lists, a single scalar, or a hash indexed `0`, `1`... (form `a[0][x]=`)."""
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


def number(value: float | int | None) -> float | int | None:
    """Numbers as Canvas's JSON writes them: 10 not 10.0, 7.5 as is."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
