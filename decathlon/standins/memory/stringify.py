"""``JSON.stringify`` as V8 writes it: the result text (2-space indent) and the memory file's lines (compact).

Differences from ``json.dumps`` that the model or the file would show: integer-like keys come
first in ascending order (JavaScript's own-property order), numbers print in JavaScript's
format (``1e21``, ``0.000001``, never ``1.0``), non-finite numbers become ``null``, properties
whose value is ``undefined`` are left out, lone surrogates are escaped as ``\\udXXX`` and no
other non-ASCII character is escaped.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .jsvalues import UNDEFINED, as_double, is_number, number_to_string

_MAX_ARRAY_INDEX = 2**32 - 2
_SHORT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}
# A surrogate pair written as two code points is one character to JavaScript, so it stays as is.
_NEEDS_ESCAPE = re.compile(r'[\ud800-\udbff][\udc00-\udfff]|[\x00-\x1f"\\\ud800-\udfff]')


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if len(char) == 2:
        return char
    return _SHORT_ESCAPES.get(char) or f"\\u{ord(char):04x}"


def quote(text: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and str(int(key)) == key and int(key) <= _MAX_ARRAY_INDEX


def own_keys(obj: dict[str, Any]) -> list[str]:
    """Property order of a JavaScript object: array indices ascending, then the rest by insertion."""
    indices = sorted((key for key in obj if _is_array_index(key)), key=int)
    if not indices:
        return list(obj)
    return indices + [key for key in obj if not _is_array_index(key)]


def _primitive(value: Any) -> str | None:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if is_number(value):
        return number_to_string(value) if math.isfinite(as_double(value)) else "null"
    if isinstance(value, str):
        return quote(value)
    return None


def stringify(value: Any, indent: str = "") -> str:
    """``JSON.stringify(value, null, indent)`` for an object or array (what the reference ever passes).

    Iterative, like the parser: a graph read from a file may nest deeper than Python's recursion limit.
    """
    out: list[str] = []
    # Open containers: [closing bracket, remaining members, depth, no member written yet].
    stack: list[list[Any]] = []

    def begin(item: Any, depth: int) -> None:
        primitive = _primitive(item)
        if primitive is not None:
            out.append(primitive)
        elif isinstance(item, list):
            if item:
                out.append("[")
                stack.append(["]", iter([(None, element) for element in item]), depth, True])
            else:
                out.append("[]")
        else:
            members = [(key, item[key]) for key in own_keys(item) if item[key] is not UNDEFINED]
            if members:
                out.append("{")
                stack.append(["}", iter(members), depth, True])
            else:
                out.append("{}")

    separator = ": " if indent else ":"
    begin(value, 0)
    while stack:
        frame = stack[-1]
        closing, members, depth, first = frame
        member = next(members, None)
        if member is None:
            stack.pop()
            out.append(("\n" + indent * depth if indent else "") + closing)
            continue
        frame[3] = False
        key, item = member
        out.append(("" if first else ",") + ("\n" + indent * (depth + 1) if indent else ""))
        if key is not None:
            out.append(quote(key) + separator)
        if item is UNDEFINED:
            out.append("null")  # only array elements can get here: undefined properties were left out
        else:
            begin(item, depth + 1)
    return "".join(out)
