"""Turning a tool call into result text plus an error flag; never raises."""

from __future__ import annotations

from typing import Any

from .errors import ToolError
from .paths import Sandbox
from .schemas import TOOL_SPECS
from .tools import TOOLS
from .validation import validate_arguments


def call_tool(sandbox: Sandbox, name: str, arguments: dict[str, Any] | None) -> tuple[str, bool]:
    try:
        spec = TOOL_SPECS.get(name)
        if spec is None:
            raise ToolError(f"Unknown tool: {name}")
        args = arguments or {}
        validate_arguments(name, spec[1], args)
        return TOOLS[name](sandbox, args), False
    except ToolError as exc:
        return f"Error: {exc.message}", True
    except Exception as exc:  # noqa: BLE001 - a tool bug must still reach the model as a tool error
        return f"Error: {exc}", True
