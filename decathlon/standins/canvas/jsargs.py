"""The JavaScript semantics the reference applies to its (never validated) tool arguments.

Arguments arrive as JSON-shaped Python values. The reference reads them with destructuring
(a missing key is ``undefined``, distinct from ``null``), checks them with ``!value``, puts them
into URLs with template literals and into JSON bodies with ``JSON.stringify`` (which drops
``undefined`` members). These helpers reproduce exactly those operations; the value semantics
themselves (``String(x)``, number formatting, ``undefined``) are the memory stand-in's.
"""

from __future__ import annotations

import math
import re
from typing import Any

from decathlon.standins.memory.jsvalues import UNDEFINED, JsError, is_number, to_string
from decathlon.standins.memory.stringify import own_keys

__all__ = [
    "UNDEFINED",
    "JsError",
    "arg",
    "drop_undefined",
    "js_min",
    "parse_int",
    "rest",
    "to_number",
    "to_string",
    "truthy",
]

_JS_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|Infinity)")


def arg(args: dict[str, Any], key: str) -> Any:
    """``args.key``: the value, or ``UNDEFINED`` when the client did not send it."""
    return args.get(key, UNDEFINED)


def truthy(value: Any) -> bool:
    """JavaScript's ToBoolean: false for undefined, null, false, 0, NaN and ""; objects and arrays are true."""
    if value is UNDEFINED or value is None or value is False:
        return False
    if value is True:
        return True
    if is_number(value):
        return not (value == 0 or (isinstance(value, float) and math.isnan(value)))
    if isinstance(value, str):
        return value != ""
    return True


def rest(args: dict[str, Any], *taken: str) -> dict[str, Any]:
    """``const { a, b, ...rest } = args``: the other own properties, in JavaScript's property order."""
    return {key: args[key] for key in own_keys(args) if key not in taken}


def drop_undefined(obj: dict[str, Any]) -> dict[str, Any]:
    """An object literal as ``JSON.stringify`` will write it: members holding ``undefined`` vanish."""
    return {key: value for key, value in obj.items() if value is not UNDEFINED}


def to_number(value: Any) -> float:
    """``Number(value)`` for JSON-shaped values (what ``Math.min`` applies to its arguments)."""
    if value is UNDEFINED:
        return math.nan
    if value is None or value is False:
        return 0.0
    if value is True:
        return 1.0
    if is_number(value):
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    if isinstance(value, list):
        return to_number(to_string(value))
    if isinstance(value, dict):
        return math.nan
    text = value.strip(" \t\n\r\v\f\u00a0\ufeff\u2028\u2029")
    if text == "":
        return 0.0
    lowered = text.lower()
    for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
        if lowered.startswith(prefix):
            try:
                return float(int(text[2:], base))
            except ValueError:
                return math.nan
    if _JS_NUMBER.fullmatch(text):
        return float(text.replace("Infinity", "inf"))
    return math.nan


def js_min(*values: Any) -> float:
    """``Math.min``: NaN if any argument is NaN, else the smallest."""
    numbers = [to_number(value) for value in values]
    if any(math.isnan(number) for number in numbers):
        return math.nan
    return min(numbers)


def parse_int(text: str) -> float:
    """``parseInt(text)`` (radix 10): the leading integer, or NaN."""
    match = re.match(r"\s*([+-]?\d+)", text)
    return float(int(match.group(1))) if match else math.nan
