"""Scripted trajectories: a task's oracle (a sequence of tool calls that solves it).

Format (fixtures/toolathlon-mini/oracles/<task>.json):
    {"task": "<name>",
     "steps": [{"tool": "<server>-<tool>", "arguments": {...}}              # one call per turn
               | {"calls": [{"tool": ..., "arguments": {...}}, ...]}, ...], # parallel calls
     "final": "text of the last assistant message"}
String arguments may use ${workspace}, ${launch_time} ("YYYY-MM-DD HH:MM:SS Weekday") and
${launch_date} (YYYY-MM-DD), filled from the episode's setup, and what an earlier call saved: a call's
`"save": {"form": "formId"}` keeps the first `formId` of its JSON answer as ${form}, for an id the vendor makes
(a form's) that a later call names.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from decathlon.errors import InfraError, Kind
from decathlon.recordings.id_translation import unwrap


@dataclass(frozen=True)
class Call:
    tool: str
    arguments: Any  # a dict, or a raw string sent as is (to script malformed calls)
    save: dict[str, str] = field(default_factory=dict)  # variable → the key of the answer's JSON it holds


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
        steps.append([Call(c["tool"], c.get("arguments", {}), dict(c.get("save") or {})) for c in calls])
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


def saved(oracle: Oracle, messages: list[dict]) -> dict[str, str]:
    """The variables earlier calls of the conversation saved from their answers (none where an answer lacks the key:
    the later call then names `${var}` as it is, and fails as a model's would)."""
    wanted = {call_id(oracle.task, t, i): call.save for t, step in enumerate(oracle.steps)
              for i, call in enumerate(step) if call.save}
    out: dict[str, str] = {}
    for message in messages:
        save = wanted.get(message.get("tool_call_id", "")) if message.get("role") == "tool" else None
        if not save:
            continue
        try:
            answer = json.loads(unwrap(message.get("content")))
        except ValueError:
            continue
        for name, key in save.items():
            found = _first(answer, key)
            if found is not None:
                out[name] = found
    return out


def _first(value: Any, key: str, depth: int = 0) -> str | None:
    if depth > 20:
        return None
    if isinstance(value, dict):
        if isinstance(value.get(key), (str, int)) and not isinstance(value.get(key), bool):
            return str(value[key])
        children = list(value.values())
    elif isinstance(value, list):
        children = value
    else:
        return None
    for child in children:
        found = _first(child, key, depth + 1)
        if found is not None:
            return found
    return None


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
