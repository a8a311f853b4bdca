"""One bound on how deeply JSON read from outside may nest, for every reader on both sides of the wire.

What a sandbox answers and what a recording holds are not ours: a tool output of 30,000 nested brackets
is a valid string to pass on, but parsed it makes `json.loads` (and every recursive walk after it) raise
RecursionError. No reply, cassette, trajectory or result we read legitimately nests anywhere near
MAX_DEPTH, so anything deeper is refused here, once, as TooDeep: a ValueError, so a reader that already
turns bad JSON into its own named error does the same for this. Lives in decathlon.tape because the sandbox
reads cassettes with it too.
"""
from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 200  # containers inside containers; Toolathlon's deepest recordings and schemas nest < 20

_DECODER = json.JSONDecoder()


class TooDeep(ValueError):
    def __init__(self) -> None:
        super().__init__(f"nested too deeply: more than {MAX_DEPTH} levels of arrays and objects")


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests lists, tuples or dicts more than `limit` deep; iterative, so safe at any depth."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, (list, tuple)) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list, tuple)))
    return False


def _bounded(value: Any) -> Any:
    if too_deep(value):
        raise TooDeep()
    return value


def loads(text: str | bytes) -> Any:
    """json.loads, but TooDeep for a value nested past MAX_DEPTH (CPython's parser itself recurses: past
    its own limit it raises RecursionError, which is the same fault)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep() from None
    return _bounded(value)


def raw_decode(text: str, start: int = 0) -> tuple[Any, int]:
    """JSONDecoder.raw_decode (the first JSON value at `start` and where it ends), bounded like `loads`."""
    try:
        value, end = _DECODER.raw_decode(text, start)
    except RecursionError:
        raise TooDeep() from None
    return _bounded(value), end

