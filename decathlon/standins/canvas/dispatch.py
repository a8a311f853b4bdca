"""Turning a tool call into the reference's result: text, and whether it is an error.

The reference catches everything its tools throw and answers ``Error: <message>`` with
``isError: true`` (Canvas errors, its own ``Missing required field`` checks, TypeErrors from
odd arguments, Node's fs errors, an unknown tool). Only a result JavaScript cannot even put
into a message (``JSON.stringify(undefined)``: marking a module item complete) reaches the client
as a failure of the call itself; here that is a JSON-RPC error, since the Python SDK cannot
send a text content without text.
"""

from __future__ import annotations

import re
import sys
import traceback
from typing import Any

from decathlon.standins.memory.jsvalues import JsError, pair_surrogates

from .api import CanvasAPIError, PlainError
from .tools import TOOLS, Context

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class ProtocolFailure(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def wire_safe(text: str) -> str:
    # Node would send a lone surrogate (half an emoji cut by a 200-unit error excerpt) escaped;
    # the Python SDK cannot encode one, so it becomes U+FFFD.
    return _LONE_SURROGATE.sub("\ufffd", pair_surrogates(text))


async def call_tool(ctx: Context, name: str, arguments: dict[str, Any] | None) -> tuple[str, bool]:
    args = arguments or {}
    handler = TOOLS.get(name)
    try:
        if handler is None:
            raise PlainError(f"Unknown tool: {name}")
        text = await handler(ctx, args)
    except (CanvasAPIError, PlainError, JsError) as error:
        return wire_safe(f"Error: {error.message}"), True
    except RecursionError:
        return "Error: Maximum call stack size exceeded", True
    except Exception as error:  # noqa: BLE001 - a bug here must not take the server down
        traceback.print_exc(file=sys.stderr)
        return wire_safe(f"Error: {error}"), True
    if text is None:
        raise ProtocolFailure(f"{name} produced no result text (JSON.stringify gave undefined)")
    return wire_safe(text), False
