"""Built-in `local-*` tools: the types they share and the argument checks they all need."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from decathlon.sandbox.clock import AgentClock


@dataclass
class ToolLogEntry:
    turn: int
    tool: str
    arguments: str
    content: str
    is_error: bool


@dataclass
class Context:
    """What a local tool may see of its episode."""
    workspace: Path
    log: list[ToolLogEntry] = field(default_factory=list)
    overlong_sessions: dict[str, dict] = field(default_factory=dict)
    # The episode's frozen clock, if it has one: what the agent's own processes start with.
    clock: AgentClock | None = None

    def process_env(self) -> dict[str, str]:
        """What a process the agent starts gets beyond agent_env's basics: the frozen clock, where there is one."""
        return self.clock.now_env() if self.clock is not None else {}


@dataclass
class LocalResult:
    text: str
    is_error: bool = False
    # A request to the host to shorten the conversation: {"keep_last_turns": N}.
    context: dict | None = None


Runner = Callable[[dict[str, Any], Context], Awaitable[LocalResult]]


@dataclass(frozen=True)
class LocalTool:
    name: str  # without the `local-` prefix
    description: str
    parameters: dict
    run: Runner

    def schema(self) -> dict:
        return {"type": "function", "function": {"name": f"local-{self.name}", "description": self.description,
                                                 "parameters": self.parameters}}


class ArgError(ValueError):
    pass


_TYPES: dict[str, type | tuple[type, ...]] = {"string": str, "integer": int, "number": (int, float), "boolean": bool,
                                              "array": list, "object": dict}


def check_args(params: dict, args: dict[str, Any]) -> dict[str, Any]:
    """Validate against the tool's own JSON schema (the subset our schemas use)."""
    props = params.get("properties", {})
    for key in params.get("required", []):
        if key not in args:
            raise ArgError(f"missing required argument '{key}'")
    for key, value in args.items():
        spec = props.get(key)
        if spec is None:
            raise ArgError(f"unexpected argument '{key}' (accepted: {', '.join(sorted(props)) or 'none'})")
        want = spec.get("type")
        types = want if isinstance(want, list) else [want] if want else []
        ok = not types or any(
            isinstance(value, _TYPES[t]) and not (t in ("integer", "number") and isinstance(value, bool))
            for t in types if t in _TYPES) or (value is None and "null" in types)
        if not ok:
            raise ArgError(f"argument '{key}' must be of type {' or '.join(types)}, got {type(value).__name__}")
        if "enum" in spec and value not in spec["enum"]:
            raise ArgError(f"argument '{key}' must be one of {spec['enum']}")
    return args


def obj(properties: dict, required: list[str] | None = None) -> dict:
    return {"type": "object", "properties": properties, "required": required or []}
