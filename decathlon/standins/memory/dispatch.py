"""Turning a tool call into result text, or into the message of the error the reference would throw."""

from __future__ import annotations

import re
from typing import Any

from .jsvalues import JsError, pair_surrogates
from .operations import OPERATIONS
from .storage import MemoryFile

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _wire_safe(text: str) -> str:
    # Node escapes a lone surrogate (say, half of an emoji quoted in a JSON.parse message) in the
    # JSON-RPC text; the Python SDK cannot encode one at all, so it becomes U+FFFD here.
    return _LONE_SURROGATE.sub("\ufffd", pair_surrogates(text))


class ToolFailure(Exception):
    """The reference threw: the client gets a JSON-RPC error (code -32603) carrying this message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def call_tool(store: MemoryFile, name: str, arguments: dict[str, Any] | None) -> str:
    # Upstream checks for arguments before it looks the tool up, so an unknown tool called
    # without arguments reports the missing arguments.
    if arguments is None:
        raise ToolFailure(_wire_safe(f"No arguments provided for tool: {name}"))
    operation = OPERATIONS.get(name)
    if operation is None:
        raise ToolFailure(_wire_safe(f"Unknown tool: {name}"))
    try:
        # Result text never holds a lone surrogate: JSON.stringify escapes them.
        return pair_surrogates(operation(store, arguments))
    except JsError as exc:
        raise ToolFailure(_wire_safe(exc.message)) from None
    except RecursionError:
        raise ToolFailure("Maximum call stack size exceeded") from None
