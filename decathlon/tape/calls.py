"""A run's tool calls as a sequence that two runs can be compared by: what an imported run's recorded
verdict belongs to (decathlon/sandbox/evaluate.py grades an import only if the episode made exactly these calls).

Each call is its name and a digest of its canonical, workspace-tokenized arguments: the same call made
in another workspace, with keys in another order, is the same call.
"""
from __future__ import annotations

import hashlib
from typing import Any

from decathlon.tape import nesting
from decathlon.tape.canonical import canonical, tokenize


def _arguments(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    if not raw.strip():
        return {}
    try:
        return nesting.loads(raw)
    except ValueError:
        return raw  # not JSON, or nested past the bound: the text itself is the call


def call_sequence(messages: list[dict], workspace: str) -> list[list[str]]:
    """[[tool name, arguments digest], …] of every call that got a result, in order."""
    answered = {m.get("tool_call_id") for m in messages if isinstance(m, dict) and m.get("role") == "tool"}
    out: list[list[str]] = []
    for m in messages:
        if not isinstance(m, dict) or m.get("role") != "assistant":
            continue
        for call in m.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict) or call.get("id") not in answered:
                continue
            args = canonical(tokenize(_arguments(fn.get("arguments")), workspace))
            out.append([str(fn.get("name")), hashlib.sha256(args.encode("utf-8", "surrogatepass")).hexdigest()[:16]])
    return out


def first_difference(recorded: list[list[str]], made: list[list[str]]) -> str | None:
    """None if `made` is `recorded`, else where they part, in words."""
    for i, (want, have) in enumerate(zip(recorded, made)):
        if list(want) != list(have):
            same = want[0] == have[0]
            return (f"call #{i + 1} was {have[0]}" + (" with other arguments" if same else "")
                    + f" where the recording has {want[0]}")
    if len(made) < len(recorded):
        return f"it stopped after {len(made)} of the {len(recorded)} recorded calls (next: {recorded[len(made)][0]})"
    if len(made) > len(recorded):
        return f"it made {len(made) - len(recorded)} call(s) more than the {len(recorded)} recorded"
    return None
