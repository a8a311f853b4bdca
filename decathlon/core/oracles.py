"""Scripted trajectories: a task's oracle (a sequence of tool calls that solves it).

Format (fixtures/toolathlon-mini/oracles/<task>.json):
    {"task": "<name>",
     "steps": [{"tool": "<server>-<tool>", "arguments": {...}}              # one call per turn
               | {"calls": [{"tool": ..., "arguments": {...}}, ...]}, ...], # parallel calls
     "final": "text of the last assistant message"}
String arguments may use ${workspace}, ${launch_time} ("YYYY-MM-DD HH:MM:SS Weekday") and
${launch_date} (YYYY-MM-DD), filled from the episode's setup.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from decathlon.errors import InfraError, Kind


@dataclass(frozen=True)
class Call:
    tool: str
    arguments: Any  # a dict, or a raw string sent as is (to script malformed calls)


@dataclass(frozen=True)
class Oracle:
    task: str
    steps: list[list[Call]]
    final: str


def oracle_dir(source: Path) -> Path:
    return source / "oracles"


def load_oracle(source: Path, task: str, folder: Path | None = None) -> Oracle:
    path = (folder or oracle_dir(source)) / f"{task}.json"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InfraError(Kind.NO_ORACLE, f"task {task} has no oracle ({path})", "policy") from exc
    except json.JSONDecodeError as exc:
        raise InfraError(Kind.BAD_ORACLE, f"{path}: {exc}", "policy") from exc
    steps = []
    for step in raw.get("steps", []):
        calls = step["calls"] if "calls" in step else [step]
        steps.append([Call(c["tool"], c.get("arguments", {})) for c in calls])
    return Oracle(task, steps, raw.get("final", "Done."))


def fill(value: Any, variables: dict[str, str]) -> Any:
    if isinstance(value, str):
        for key, sub in variables.items():
            value = value.replace("${" + key + "}", sub)
        return value
    if isinstance(value, list):
        return [fill(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, variables) for k, v in value.items()}
    return value


def variables(workspace: str, launch_time: str) -> dict[str, str]:
    return {"workspace": workspace, "launch_time": launch_time, "launch_date": launch_time[:10]}


def call_id(task: str, turn: int, index: int) -> str:
    """Deterministic tool-call ids: the same episode gives the same ids on every run."""
    return "call_" + hashlib.sha256(f"{task}:{turn}:{index}".encode()).hexdigest()[:24]


def assistant_message(oracle: Oracle, turn: int, variables_: dict[str, str]) -> dict:
    """The assistant message for the given turn (0-based); past the last step, the final text."""
    if turn >= len(oracle.steps):
        return {"role": "assistant", "content": oracle.final}
    calls = []
    for i, call in enumerate(oracle.steps[turn]):
        args = fill(call.arguments, variables_)
        calls.append({"id": call_id(oracle.task, turn, i), "type": "function",
                      "function": {"name": call.tool,
                                   "arguments": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)}})
    return {"role": "assistant", "content": None, "tool_calls": calls}
