"""The system prompt template's placeholders, filled as Toolathlon's runner fills them."""
from __future__ import annotations

import os
from pathlib import Path

PLACEHOLDER = "!!<<<<||||{}||||>>>>!!"
# Single-turn mode (the benchmark's) appends an instruction to work alone; these are our words.
SINGLE_TURN_NOTE = ("\nPlease complete the given task on your own: do not ask the user for confirmation or "
                    "further information, as none will be given.")


def fill_system_prompt(template: str, workspace: Path, launch_time: str, cwd: Path | None = None) -> str:
    cwd = cwd or workspace
    values = {
        "workspace_dir": str(workspace),
        "workspace_dir_rela": os.path.relpath(workspace, cwd),
        "current_working_dir": str(cwd),
        "time": launch_time,
    }
    text = template
    for key, value in values.items():
        text = text.replace(PLACEHOLDER.format(key), value)
    return text + SINGLE_TURN_NOTE
