"""The vendors' own answers in recorded real runs: every tool call of a service's server with the exact text the
model was shown, in the run's order, and the Python reprs the servers print rows in, read back safely.

A run is Toolathlon's trajectory format (`{"pass", "messages": [OpenAI chat messages]}`): an assistant message's
`tool_calls` name the tool (`<server>-<tool>`) and its JSON arguments; the `tool` message with the same
`tool_call_id` holds the answer, usually a JSON text item `{"type": "text", "text": …}`. Runs are third-party
data read where they lie; nothing of them is kept.
"""
from __future__ import annotations

import ast
import datetime as dt
import json
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Exchange:
    """One tool call of a recorded run and the vendor's answer as the model saw it."""

    task: str
    index: int  # its place among the run's tool calls (0-based)
    tool: str
    arguments: dict[str, Any] = field(hash=False)
    answer: str

    @property
    def name(self) -> str:
        return f"{self.task}#{self.index} {self.tool}"


def answer_text(content: Any) -> str:
    """The text of a tool message: the text item's `text` where the content is one, else the content as it is."""
    if isinstance(content, list):
        return "".join(answer_text(c) for c in content)
    if isinstance(content, dict):
        return str(content.get("text", json.dumps(content)))
    text = str(content)
    try:
        item = json.loads(text)
    except ValueError:
        return text
    return str(item.get("text", text)) if isinstance(item, dict) and item.get("type") == "text" else text


def exchanges(path: Path, prefix: str) -> list[Exchange]:
    """The run's calls of tools named `prefix…`, with their answers, in order (a call never answered is left out)."""
    run = json.loads(path.read_text(encoding="utf-8"))
    messages = run.get("messages") or []
    answers = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    out: list[Exchange] = []
    index = 0
    for m in messages:
        for call in m.get("tool_calls") or []:
            fn = call.get("function") or {}
            name = str(fn.get("name") or "")
            if name.startswith(prefix) and call.get("id") in answers:
                try:
                    arguments = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    arguments = {"__unparsed__": fn.get("arguments")}
                out.append(Exchange(path.stem, index, name, arguments if isinstance(arguments, dict) else {},
                                    answer_text(answers[call.get("id")])))
            index += 1
    return out


class NotALiteral(ValueError):
    """A repr this reader does not take (anything but literals and the datetime/Decimal constructors)."""


_CONSTRUCTORS = {"datetime.datetime": dt.datetime, "datetime.date": dt.date, "datetime.time": dt.time,
                 "datetime.timedelta": dt.timedelta, "Decimal": Decimal, "datetime.timezone": dt.timezone}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    raise NotALiteral(ast.dump(node))


def _value(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand)
    if isinstance(node, ast.Dict):
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values) if k is not None}
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_value(e) for e in node.elts]
    if isinstance(node, ast.Attribute) and _dotted(node) == "datetime.timezone.utc":
        return dt.timezone.utc
    if isinstance(node, ast.Call):
        build = _CONSTRUCTORS.get(_dotted(node.func))
        if build is None:
            raise NotALiteral(_dotted(node.func))
        return build(*[_value(a) for a in node.args], **{k.arg: _value(k.value) for k in node.keywords if k.arg})
    raise NotALiteral(ast.dump(node))


def python_value(text: str) -> Any:
    """A repr as a server printed it (`{'at': datetime.datetime(2025, 1, 2, tzinfo=datetime.timezone.utc)}`),
    read without evaluating anything: literals and the datetime/Decimal constructors only."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise NotALiteral(str(exc)) from None
    return _value(tree.body)


@dataclass
class Case:
    """One replayed call: its verdict (`agreed`, `disagreed`, `cannot-rebuild`), how it was judged or why not. A
    vendor's tier says how an answer reads as lines (`lines`: what may differ and means nothing taken out)."""

    exchange: Exchange
    verdict: str
    how: str
    recorded: str = ""
    emulated: str = ""

    def lines(self, text: str) -> list[str]:
        return text.splitlines()

    def diff(self) -> str:
        import difflib

        return "\n".join(difflib.unified_diff(self.lines(self.recorded), self.lines(self.emulated), "recorded",
                                              "emulator", lineterm="", n=1))

