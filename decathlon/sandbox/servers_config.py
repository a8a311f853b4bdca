"""Toolathlon-style MCP server definitions: configs/mcp_servers/*.yaml, with template variables.

Template variables, as Toolathlon fills them: ${agent_workspace}, ${local_servers_paths},
${local_binary_paths}, ${config.<key>}, ${token.<key>}; and ours: ${decathlon_servers} (where the
project's installed MCP servers live, DECATHLON_SERVERS_DIR) and ${decathlon_python} (the
interpreter running the task API, for the project's own stand-in servers).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from decathlon.sandbox.catalogue import check_installed, plan_servers
from decathlon.errors import InfraError, Kind

DEFAULT_TIMEOUT = 60.0
START_TIMEOUT = float(os.environ.get("DECATHLON_SERVER_START_TIMEOUT", "60"))
# A task folder's parts that are the grader's answers (its evaluator, its ground truth).
GRADER_ONLY = frozenset({"evaluation", "groundtruth_workspace"})
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
    return Path(__file__).resolve().parents[2] / ".servers"


def load_raw_configs(source: Path) -> dict[str, dict]:
    """Every server definition of a source, by its `name:` (not always the file stem)."""
    folder = source / "configs" / "mcp_servers"
    configs: dict[str, dict] = {}
    for path in sorted(folder.glob("*.yaml")):
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise InfraError(Kind.BAD_SERVER_CONFIG, f"{path}: not valid YAML ({exc})") from exc
        if not isinstance(raw, dict) or "name" not in raw:
            raise InfraError(Kind.BAD_SERVER_CONFIG, f"{path}: needs a mapping with a `name`")
        configs[str(raw["name"])] = raw
    return configs


def module_table(path: Path, attr: str, cwd: Path) -> dict:
    """A config module's table, read by the task's interpreter (a checkout's config modules import what its
    environment has, addict for one), from `cwd` (the source's root, as Toolathlon runs them)."""
    if not path.is_file():
        return {}
    from decathlon.sandbox.subproc import task_python
    code = ("import json, runpy, sys\n"
            "print(json.dumps(dict(runpy.run_path(sys.argv[1]).get(sys.argv[2]) or {}), default=str))\n")
    try:
        proc = subprocess.run([task_python(), "-c", code, str(path), attr], cwd=str(cwd),
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InfraError(Kind.BAD_SERVER_CONFIG, f"{path} could not be loaded: {exc}") from None
    if proc.returncode != 0:  # their module, their failure: name it
        raise InfraError(Kind.BAD_SERVER_CONFIG, f"{path} failed to load: {proc.stderr.strip()[-800:]}")
    try:
        return dict(json.loads(proc.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError, TypeError) as exc:
        raise InfraError(Kind.BAD_SERVER_CONFIG, f"{path}: `{attr}` is not a table of values ({exc})") from None


class Templates:
    """Fills ${...} variables; config/token modules are executed only if a template asks.

    `private` is the grader's episode root, which the task's token module resolves paths against
    (`str(Path(__file__).parent / "email_config.json")`). The agent's servers cannot read it where users
    are separated, so a value naming a file inside it is handed over as a read-only copy in `shared`
    (see `_hand_over`), except the files in `withheld`: the user's own keys under `--saas real`
    (decathlon/sandbox/real_keys.py), which no file the agent can read ever holds.
    """

    def __init__(self, source: Path, workspace: Path, task_dir: Path, *, private: Path | None = None,
                 shared: Path | None = None, withheld: frozenset[Path] = frozenset()) -> None:
        self.source = source
        self.task_dir = task_dir
        self.private = private
        self.shared = shared
        self.withheld = frozenset(p.resolve() for p in withheld)
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
        return module_table(path, attr, self.source)

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
            raise InfraError(Kind.BAD_SERVER_CONFIG, f"unknown template variable ${{{name}}}")
        if key not in table:
            raise InfraError(Kind.MISSING_CREDENTIAL, f"${{{name}}} is not set: add `{key}` to the "
                             f"{'global configs' if kind == 'config' else 'token_key_session'} of the source")
        return self._hand_over(str(table[key]))

    def _hand_over(self, value: str) -> str:
        """A file inside the grader's root, as a read-only copy the agent's servers can open.

        Copied, not exposed: the grader's root also holds the evaluator and its ground truth, which are
        never handed over (nor a folder, which could hold them); those values are left as they are, and
        a server started with one fails to open it, by name. Named by a digest of the value, so two
        variables naming one file share one copy."""
        if self.private is None or self.shared is None or not os.path.isabs(value):
            return value
        try:
            resolved = Path(value).resolve(strict=True)
            inside = resolved.relative_to(self.private.resolve())
        except (OSError, ValueError):  # missing, or not the grader's (a link out of it included)
            return value
        if not resolved.is_file() or GRADER_ONLY & set(inside.parts) or resolved in self.withheld:
            return value
        target = self.shared / hashlib.sha256(value.encode()).hexdigest()[:12] / resolved.name
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.chmod(target.parent, 0o755)
            shutil.copyfile(resolved, target)
            os.chmod(target, 0o444)
        return str(target)

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
    """The task's servers as this machine runs them (decathlon/sandbox/catalogue.py), templates filled."""
    specs = []
    for plan in plan_servers(raw_configs, names):
        raw = raw_configs[plan.server]
        kind = raw.get("type", "stdio")
        if kind != "stdio":
            raise InfraError(Kind.BAD_SERVER_CONFIG, f"server {plan.server}: type {kind!r} is not supported (stdio only)")
        params = raw.get("params") or {}
        env = _field(plan.server, params, "env", dict) or {}
        cwd = _field(plan.server, params, "cwd", str)
        check_installed(plan, Path(templates.simple["decathlon_servers"]))
        specs.append(ServerSpec(
            name=plan.server,
            command=templates.fill(str(plan.command)),
            args=[str(a) for a in templates.fill(plan.args)],
            env={str(k): str(v) for k, v in templates.fill(env).items()},
            cwd=templates.fill(cwd) if cwd else str(default_cwd),
            timeout=_timeout(plan.server, raw.get("client_session_timeout_seconds")),
        ))
    return specs


def _field(server: str, params: Any, key: str, kind: type, required: bool = False) -> Any:
    """One key of a server's `params`, of the type Toolathlon's YAML gives it (a string `args:` would
    otherwise be split into characters), or `bad_server_config` naming the key."""
    if not isinstance(params, dict):
        raise InfraError(Kind.BAD_SERVER_CONFIG, f"server {server}: `params` must be a mapping "
                         f"(command, args, env, cwd), not {type(params).__name__}")
    value = params.get(key)
    if value is None or value == "":
        if required:
            raise InfraError(Kind.BAD_SERVER_CONFIG, f"server {server}: params.{key} is missing")
        return None
    if not isinstance(value, kind):
        nouns: dict[type, str] = {str: "a string", list: "a list", dict: "a mapping"}
        noun = nouns[kind]
        raise InfraError(Kind.BAD_SERVER_CONFIG, f"server {server}: params.{key} must be {noun}, "
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
        raise InfraError(Kind.BAD_SERVER_CONFIG, f"server {server}: client_session_timeout_seconds must be a "
                         f"number of seconds, not {str(raw)[:60]!r}")
    return value

