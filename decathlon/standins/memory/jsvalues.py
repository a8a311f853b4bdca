"""JavaScript value semantics the reference's TypeScript relies on, for JSON-shaped Python values.

The reference never validates its arguments: it reads properties and calls array/string
methods on whatever JSON the client sent or the memory file held, so wrong shapes surface
as V8 TypeErrors ("Cannot read properties of undefined (reading 'filter')", "entities.filter
is not a function") or, where JavaScript quietly copes, as odd but real results (a string
``entityNames`` is searched with ``String.prototype.includes``). Values here are what
``json.loads`` produces, plus ``UNDEFINED`` for a missing property.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Final


class _Undefined:
    """JavaScript's ``undefined``: what reading a missing property gives (distinct from ``null``)."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED: Final = _Undefined()

# Methods that exist on the receiver's prototype, for the calls the reference makes.
_ARRAY_METHODS = frozenset({"filter", "map", "forEach", "some", "find", "includes", "push"})
_STRING_METHODS = frozenset({"includes", "toLowerCase"})

# String.prototype.trim's set: ECMAScript WhiteSpace and LineTerminator code points.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


class JsError(Exception):
    """An exception the reference throws (``Error``, ``TypeError``, ``SyntaxError``); only its message is sent."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def as_double(value: int | float) -> float:
    """A JSON number as JavaScript holds it (an IEEE double); huge integers overflow to +-Infinity."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def number_to_string(value: int | float) -> str:
    """``Number.prototype.toString()``: shortest round-trip digits, exponent only outside 1e-7..1e21."""
    x = as_double(value)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"  # also -0
    sign = "-" if x < 0 else ""
    # repr() gives the same shortest correctly rounded digits as V8; only the layout differs.
    _, digit_tuple, exponent = Decimal(repr(abs(x))).as_tuple()
    assert isinstance(exponent, int)  # x is finite here: NaN and the infinities returned above
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exponent += len(digit_tuple) - len(digits)
    k = len(digits)
    n = k + int(exponent)  # value = 0.<digits> * 10**n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        body = "0." + "0" * -n + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
        body = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


def to_string(value: Any) -> str:
    """``String(value)`` as a template literal or ``String.prototype.includes`` applies it."""
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if is_number(value):
        return number_to_string(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ",".join("" if item is None or item is UNDEFINED else to_string(item) for item in value)
    return "[object Object]"


def same_value_key(value: Any) -> tuple[Any, ...]:
    """A hashable key under which two values are equal exactly when ``===`` / SameValueZero says so.

    Objects and arrays compare by identity, as in JavaScript; numbers by their double value.
    """
    if value is UNDEFINED:
        return ("undefined",)
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("boolean", value)
    if is_number(value):
        return ("number", as_double(value))
    if isinstance(value, str):
        return ("string", value)
    return ("object", id(value))


def strict_equals(left: Any, right: Any) -> bool:
    return same_value_key(left) == same_value_key(right)


def get(value: Any, key: str) -> Any:
    """``value.key`` for a property that no built-in prototype defines (name, from, observations...)."""
    if value is None or value is UNDEFINED:
        raise JsError(f"Cannot read properties of {to_string(value)} (reading '{key}')")
    if isinstance(value, dict):
        return value.get(key, UNDEFINED)
    return UNDEFINED


def require_method(value: Any, method: str, expression: str) -> None:
    """Fail as V8 does when ``<expression>.<method>(...)`` is called on a value lacking that method."""
    if value is None or value is UNDEFINED:
        raise JsError(f"Cannot read properties of {to_string(value)} (reading '{method}')")
    available = _ARRAY_METHODS if isinstance(value, list) else _STRING_METHODS if isinstance(value, str) else ()
    if method not in available:
        raise JsError(f"{expression}.{method} is not a function")


def includes(container: Any, item: Any, expression: str) -> bool:
    """``<expression>.includes(item)``: SameValueZero membership for arrays, substring test for strings."""
    require_method(container, "includes", expression)
    if isinstance(container, str):
        return to_string(item) in container
    wanted = same_value_key(item)
    return any(same_value_key(element) == wanted for element in container)


def to_lower_case(value: Any, expression: str) -> str:
    """``<expression>.toLowerCase()``; Python's full Unicode lowercasing matches JavaScript's (final sigma included)."""
    require_method(value, "toLowerCase", expression)
    return value.lower()


def pair_surrogates(text: str) -> str:
    """Join surrogate halves that sit next to each other into one character, as a UTF-16 string would read them."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def utf16_units(text: str) -> list[str]:
    """The string's UTF-16 code units, each as a one-unit string (what spreading a string into an object yields)."""
    encoded = text.encode("utf-16-le", "surrogatepass")
    return [encoded[i : i + 2].decode("utf-16-le", "surrogatepass") for i in range(0, len(encoded), 2)]


def spread_into(target: dict[str, Any], value: Any) -> None:
    """``{...target, ...value}``: copy value's own enumerable properties (strings and arrays by index)."""
    if isinstance(value, dict):
        target.update(value)
    elif isinstance(value, list):
        target.update((str(index), item) for index, item in enumerate(value))
    elif isinstance(value, str):
        target.update((str(index), unit) for index, unit in enumerate(utf16_units(value)))
    # null, undefined, numbers and booleans have no own enumerable properties.
