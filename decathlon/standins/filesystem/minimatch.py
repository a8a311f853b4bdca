"""The subset of ``minimatch`` (``{dot: true}``) needed for ``excludePatterns``.

Supported: ``*``, ``?``, ``[...]`` classes, ``\\`` escapes, ``{a,b}`` brace
alternatives and ``**`` path segments. Not supported (treated literally):
extglobs such as ``+(a|b)``, ``!`` negation, ``{1..3}`` ranges. As in minimatch,
a trailing ``/**`` needs at least one more segment, so ``a/**`` does not
match ``a`` itself.
"""

from __future__ import annotations

import functools
import re

_GLOBSTAR = object()


def _expand_braces(pattern: str) -> list[str]:
    depth = 0
    start = -1
    for index, char in enumerate(pattern):
        if char == "\\":
            continue
        if char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                options = _split_top_level(pattern[start + 1 : index])
                if len(options) < 2:
                    continue
                prefix, suffix = pattern[:start], pattern[index + 1 :]
                return [expanded for option in options for expanded in _expand_braces(prefix + option + suffix)]
    return [pattern]


def _split_top_level(body: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current = ""
    for char in body:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += char == "{"
        depth -= char == "}" and depth > 0
        current += char
    parts.append(current)
    return parts


def _segment_regex(segment: str) -> re.Pattern[str]:
    out = ""
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "\\" and index + 1 < len(segment):
            out += re.escape(segment[index + 1])
            index += 2
            continue
        if char == "*":
            out += "[^/]*"
        elif char == "?":
            out += "[^/]"
        elif char == "[":
            close = segment.find("]", index + 2)
            if close == -1:
                out += re.escape(char)
            else:
                body = segment[index + 1 : close]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                out += "[" + ("^" if negate else "") + body.replace("\\", "\\\\").replace("[", "\\[") + "]"
                index = close
        else:
            out += re.escape(char)
        index += 1
    return re.compile(out + r"\Z", re.DOTALL)


@functools.lru_cache(maxsize=256)
def _compile(pattern: str) -> tuple[tuple[object, ...], ...]:
    compiled = []
    for expanded in _expand_braces(pattern):
        parts = tuple(_GLOBSTAR if part == "**" else _segment_regex(part) for part in expanded.split("/"))
        compiled.append(parts)
    return tuple(compiled)


def _match_segments(file_parts: tuple[str, ...], pattern: tuple[object, ...]) -> bool:
    if not pattern:
        return not file_parts
    if not file_parts:
        return False
    head = pattern[0]
    if head is _GLOBSTAR:
        if len(pattern) == 1:
            return all(part not in (".", "..") for part in file_parts)
        for skip in range(len(file_parts)):
            if skip and file_parts[skip - 1] in (".", ".."):
                return False
            if _match_segments(file_parts[skip:], pattern[1:]):
                return True
        return False
    assert isinstance(head, re.Pattern)
    return bool(head.match(file_parts[0])) and _match_segments(file_parts[1:], pattern[1:])


def minimatch(path: str, pattern: str) -> bool:
    if pattern.startswith("#"):
        return False
    file_parts = tuple(path.split("/"))
    return any(_match_segments(file_parts, compiled) for compiled in _compile(pattern))
