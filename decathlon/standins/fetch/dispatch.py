"""Turning a tool call into result text plus an error flag, or into the reference's thrown error."""

from __future__ import annotations

from typing import Any

from .tools import CONVERTERS, run_tool
from .validation import ArgumentError, validate_arguments


class ProtocolFailure(Exception):
    """The reference threw from its request handler: the client gets a JSON-RPC error (-32603)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


async def call_tool(name: str, arguments: dict[str, Any] | None) -> tuple[str, bool]:
    # Upstream parses the arguments before looking at the tool name, so an unknown tool called
    # with bad arguments reports the arguments.
    try:
        payload = validate_arguments(arguments)
    except ArgumentError as error:
        raise ProtocolFailure(error.message) from None
    if name not in CONVERTERS:
        raise ProtocolFailure("Tool not found")
    try:
        return await run_tool(name, payload)
    except Exception as exc:  # noqa: BLE001 - upstream's Fetcher catches everything into an isError result
        return str(exc) or type(exc).__name__, True
