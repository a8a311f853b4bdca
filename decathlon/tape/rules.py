"""Declared rules for volatile fields: what may differ between a recording and a replay, and how it is
normalised before comparing. Anything not declared here must match exactly."""
from __future__ import annotations

import re

# Output of built-in tools that run live during a replay: (pattern, replacement) per tool.
LOCAL_VOLATILE: dict[str, list[tuple[re.Pattern[str], str]]] = {
    "python-execute": [(re.compile(r"Execution time: [0-9.]+ seconds"), "Execution time: <volatile> seconds")],
}
# Argument fields ignored when matching calls, per MCP server (dotted paths).
VOLATILE_ARGUMENTS: dict[str, list[str]] = {}
# Folders of the workspace whose changes are not a tool's side effect (the task API writes them).
WORKSPACE_SKIP = (".overlong_tool_outputs", ".python_tmp")


def normalise_local(tool: str, text: str) -> str:
    for pattern, replacement in LOCAL_VOLATILE.get(tool, []):
        text = pattern.sub(replacement, text)
    return text
