"""Request URLs and bodies as axios 1.12 (the reference's HTTP client) builds them.

A path is joined to ``https://<CANVAS_DOMAIN>/api/v1`` unless it is absolute (pagination's
``next`` links are); ``params`` become the query string the way axios serializes an object:
keys in order, ``null``/``undefined`` left out, a flat array as repeated ``key[]=v``, nested
objects as ``key[sub]=v``, each part percent-encoded like ``encodeURIComponent`` but with
``: $ , [ ]`` kept and spaces as ``+``. Bodies are ``JSON.stringify`` of the object literal.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from decathlon.standins.memory.stringify import own_keys, stringify

from .jsargs import UNDEFINED, to_string

_ABSOLUTE = re.compile(r"^([a-z][a-z\d+\-.]*:)?//", re.IGNORECASE)
# encodeURIComponent leaves A-Z a-z 0-9 - _ . ! ~ * ' ( ) alone; axios then restores : $ , [ ].
_URI_COMPONENT_SAFE = "-_.!~*'()"
_RESTORED = {"%3A": ":", "%24": "$", "%2C": ",", "%20": "+", "%5B": "[", "%5D": "]"}
_RESTORE = re.compile("|".join(_RESTORED), re.IGNORECASE)


def is_absolute(url: str) -> bool:
    return bool(_ABSOLUTE.match(url))


def combine(base: str, path: str) -> str:
    if is_absolute(path):
        return path
    return re.sub(r"/?/$", "", base) + "/" + re.sub(r"^/+", "", path)


def _encode(value: Any) -> str:
    text = to_string(value)
    encoded = quote(text.encode("utf-8", "surrogatepass"), safe=_URI_COMPONENT_SAFE)
    return _RESTORE.sub(lambda m: _RESTORED[m.group().upper()], encoded)


def _is_visitable(value: Any) -> bool:
    return isinstance(value, (dict, list))


def _render_key(path: list[str] | None, key: str) -> str:
    if not path:
        return key
    tokens = [*path, key]
    return "".join(token if i == 0 else f"[{token}]" for i, token in enumerate(_strip_brackets(t) for t in tokens))


def _strip_brackets(key: str) -> str:
    return key[:-2] if key.endswith("[]") else key


def _pairs(params: dict[str, Any]) -> list[tuple[str, Any]]:
    pairs: list[tuple[str, Any]] = []

    def visit(value: Any, key: str, path: list[str] | None) -> bool:
        # Objects and arrays, even empty ones, are truthy to the reference's `value && ...` test.
        if path is None and isinstance(value, (dict, list)):
            if key.endswith("{}"):
                pairs.append((key, stringify(value)))
                return False
            if (isinstance(value, list) and not any(_is_visitable(el) for el in value)) or (
                key.endswith("[]") and isinstance(value, list)
            ):
                name = _strip_brackets(key)
                pairs.extend((f"{name}[]", el) for el in value if el is not None and el is not UNDEFINED)
                return False
        if _is_visitable(value):
            return True
        pairs.append((_render_key(path, key), value))
        return False

    def build(value: dict[str, Any] | list[Any], path: list[str] | None) -> None:
        items = (
            [(key, value[key]) for key in own_keys(value)]
            if isinstance(value, dict)
            else [(str(i), el) for i, el in enumerate(value)]
        )
        for key, el in items:
            if el is None or el is UNDEFINED:
                continue
            if visit(el, key.strip() if isinstance(key, str) else key, path):
                build(el, [*(path or []), key])

    build(params, None)
    return pairs


def query_string(params: dict[str, Any] | None) -> str:
    if not params:
        return ""
    return "&".join(f"{_encode(name)}={_encode(_form_value(value))}" for name, value in _pairs(params))


def _form_value(value: Any) -> Any:
    # toFormData's convertValue: null becomes the empty string; everything else is String()-ed later.
    return "" if value is None else value


def build_url(base: str, path: str, params: dict[str, Any] | None = None) -> str:
    url = combine(base, path)
    hash_at = url.find("#")
    if hash_at != -1:
        url = url[:hash_at]
    serialized = query_string(params)
    if serialized:
        url += ("&" if "?" in url else "?") + serialized
    return url


def json_body(data: Any) -> bytes:
    """``JSON.stringify(data)``: what axios sends for an object body (never called with ``undefined``)."""
    return stringify(data, "").encode("utf-8", "surrogatepass")
