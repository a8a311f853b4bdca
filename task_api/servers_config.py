"""Toolathlon-style MCP server definitions: configs/mcp_servers/*.yaml, with template variables.

Template variables, as Toolathlon fills them: ${agent_workspace}, ${local_servers_paths},
${local_binary_paths}, ${config.<key>}, ${token.<key>}; and ours: ${decathlon_servers} (where the
project's installed MCP servers live, DECATHLON_SERVERS_DIR) and ${decathlon_python} (the
interpreter running the task API, for the project's own stand-in servers).
"""
from __future__ import annotations

import os
import re
import runpy
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from task_api.errors import InfraError

DEFAULT_TIMEOUT = 60.0
START_TIMEOUT = float(os.environ.get("DECATHLON_SERVER_START_TIMEOUT", "60"))
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_.\-]*)\}")


@dataclass(frozen=True)
class ServerSpec:
    name: str
    command: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    timeout: float = DEFAULT_TIMEOUT

    def to_json(self) -> dict:
        return {"name": self.name, "command": self.command, "args": self.args, "env": self.env,
                "cwd": self.cwd, "timeout": self.timeout}

    @classmethod
    def from_json(cls, raw: dict) -> "ServerSpec":
        return cls(**raw)


def default_servers_dir() -> Path:
    env = os.environ.get("DECATHLON_SERVERS_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1] / ".servers"


def load_raw_configs(source: Path) -> dict[str, dict]:
    """Every server definition of a source, by its `name:` (not always the file stem)."""
    folder = source / "configs" / "mcp_servers"
    configs: dict[str, dict] = {}
    for path in sorted(folder.glob("*.yaml")):
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise InfraError("bad_server_config", f"{path}: not valid YAML ({exc})") from exc
        if not isinstance(raw, dict) or "name" not in raw:
            raise InfraError("bad_server_config", f"{path}: needs a mapping with a `name`")
        configs[str(raw["name"])] = raw
    return configs


class Templates:
    """Fills ${...} variables; config/token modules are executed only if a template asks."""

    def __init__(self, source: Path, workspace: Path, task_dir: Path) -> None:
        self.source = source
        self.task_dir = task_dir
        self.simple = {
            "agent_workspace": str(workspace),
            "local_servers_paths": str(source / "local_servers"),
            "local_binary_paths": str(source / "local_binary"),
            "decathlon_servers": str(default_servers_dir()),
            "decathlon_python": sys.executable,
        }
        self._config: dict | None = None
        self._token: dict | None = None

    def _module_dict(self, path: Path, attr: str) -> dict:
        if not path.is_file():
            return {}
        try:
            value = runpy.run_path(str(path)).get(attr, {})
        except Exception as exc:  # their module, their failure: name it
            raise InfraError("bad_server_config", f"{path} failed to load: {exc!r}") from exc
        return dict(value)

    def _lookup(self, name: str) -> str:
        if name in self.simple:
            return self.simple[name]
        kind, _, key = name.partition(".")
        if kind == "config":
            if self._config is None:
                self._config = self._module_dict(self.source / "configs" / "global_configs.py", "global_configs")
            table = self._config
        elif kind == "token":
            if self._token is None:
                # The task's own file overrides the global one, as in Toolathlon.
                self._token = self._module_dict(self.source / "configs" / "token_key_session.py",
                                                "all_token_key_session")
                self._token.update(self._module_dict(self.task_dir / "token_key_session.py",
                                                     "all_token_key_session"))
            table = self._token
        else:
            raise InfraError("bad_server_config", f"unknown template variable ${{{name}}}")
        if key not in table:
            raise InfraError("missing_credential", f"${{{name}}} is not set: add `{key}` to the "
                             f"{'global configs' if kind == 'config' else 'token_key_session'} of the source")
        return str(table[key])

    def fill(self, value: Any) -> Any:
        if isinstance(value, str):
            return _VAR.sub(lambda m: self._lookup(m.group(1)), value)
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        return value


def resolve_servers(raw_configs: dict[str, dict], names: list[str], templates: Templates,
                    default_cwd: Path) -> list[ServerSpec]:
    specs = []
    for name in names:
        raw = raw_configs.get(name)
        if raw is None:
            known = ", ".join(sorted(raw_configs)) or "none"
            raise InfraError("unknown_server", f"the task needs MCP server {name!r}, which no "
                             f"configs/mcp_servers/*.yaml defines (defined: {known})")
        kind = raw.get("type", "stdio")
        if kind != "stdio":
            raise InfraError("bad_server_config", f"server {name}: type {kind!r} is not supported (stdio only)")
        params = templates.fill(raw.get("params") or {})
        specs.append(ServerSpec(
            name=name,
            command=_field(name, params, "command", str, required=True),
            args=[str(a) for a in _field(name, params, "args", list) or []],
            env={str(k): str(v) for k, v in (_field(name, params, "env", dict) or {}).items()},
            cwd=str(params["cwd"]) if params.get("cwd") else str(default_cwd),
            timeout=_timeout(name, raw.get("client_session_timeout_seconds")),
        ))
    return specs


def _field(server: str, params: Any, key: str, kind: type, required: bool = False) -> Any:
    """One key of a server's `params`, of the type Toolathlon's YAML gives it (a string `args:` would
    otherwise be split into characters), or `bad_server_config` naming the key."""
    if not isinstance(params, dict):
        raise InfraError("bad_server_config", f"server {server}: `params` must be a mapping "
                         f"(command, args, env, cwd), not {type(params).__name__}")
    value = params.get(key)
    if value is None or value == "":
        if required:
            raise InfraError("bad_server_config", f"server {server}: params.{key} is missing")
        return None
    if not isinstance(value, kind):
        noun = {str: "a string", list: "a list", dict: "a mapping"}[kind]
        raise InfraError("bad_server_config", f"server {server}: params.{key} must be {noun}, "
                         f"not {type(value).__name__} ({str(value)[:60]!r})")
    return value


def _timeout(server: str, raw: Any) -> float:
    if raw is None or raw == "":
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except (TypeError, ValueError):
        value = float("nan")
    if not 0 < value < 86400:  # NaN fails both
        raise InfraError("bad_server_config", f"server {server}: client_session_timeout_seconds must be a "
                         f"number of seconds, not {str(raw)[:60]!r}")
    return value

