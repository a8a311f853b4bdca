"""Canonical forms for matching: key order, whitespace and number forms do not make two calls differ.

The agent workspace's absolute path differs between the recording and each replay, so it is stored
as the token ${agent_workspace} and put back on the way out.
"""
from __future__ import annotations

import json
import math
from typing import Any

WORKSPACE_TOKEN = "${agent_workspace}"


def _numbers(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return int(value)
        return value
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _numbers(v) for k, v in value.items()}
    return value


def drop_paths(args: Any, paths: list[str]) -> Any:
    """Remove declared volatile fields (dotted paths) before matching."""
    if not paths or not isinstance(args, dict):
        return args
    out = json.loads(json.dumps(args))
    for path in paths:
        target = out
        parts = path.split(".")
        for part in parts[:-1]:
            target = target.get(part) if isinstance(target, dict) else None
            if target is None:
                break
        if isinstance(target, dict):
            target.pop(parts[-1], None)
    return out


def canonical(args: Any, volatile: list[str] | None = None) -> str:
    """The matching key of a call's arguments."""
    return json.dumps(_numbers(drop_paths(args, volatile or [])), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)


def map_strings(value: Any, fn) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [map_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_strings(v, fn) for k, v in value.items()}
    return value


def tokenize(value: Any, workspace: str) -> Any:
    if not workspace:
        return value
    return map_strings(value, lambda s: s.replace(workspace, WORKSPACE_TOKEN))


def detokenize(value: Any, workspace: str) -> Any:
    return map_strings(value, lambda s: s.replace(WORKSPACE_TOKEN, workspace))
