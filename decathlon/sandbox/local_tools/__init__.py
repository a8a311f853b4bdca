"""The `local-*` tools, by the keys Toolathlon's task_config.json uses for them."""
from __future__ import annotations

from decathlon.sandbox.local_tools.base import LocalTool
from decathlon.sandbox.local_tools.basic import CLAIM_DONE, SLEEP
from decathlon.sandbox.local_tools.history import CONTEXT, HISTORY
from decathlon.sandbox.local_tools.overlong import TOOLS as OVERLONG
from decathlon.sandbox.local_tools.python_exec import PYTHON_EXECUTE
from decathlon.sandbox.local_tools.web_search import WEB_SEARCH

GROUPS: dict[str, list[LocalTool]] = {
    "claim_done": [CLAIM_DONE],
    "python_execute": [PYTHON_EXECUTE],
    "sleep": [SLEEP],
    "handle_overlong_tool_outputs": OVERLONG,
    "history": HISTORY,
    "manage_context": CONTEXT,
    "web_search": [WEB_SEARCH],
}


def tools_for(keys: list[str]) -> tuple[dict[str, LocalTool], list[str]]:
    """The tools a task asked for, by name, and the keys we do not know (reported, not fatal)."""
    tools: dict[str, LocalTool] = {}
    unknown = []
    for key in keys:
        group = GROUPS.get(key)
        if group is None:
            unknown.append(key)
            continue
        for tool in group:
            tools[tool.name] = tool
    return tools, unknown
