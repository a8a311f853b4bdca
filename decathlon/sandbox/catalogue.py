"""How each server definition of a source runs here: live (a PyPI package in its own virtualenv, or
our stand-in), or replay only. One data table, server_catalogue.yaml, decides; no server is a special
case in code.
"""
from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from decathlon.errors import InfraError, Kind
from decathlon.sandbox.launchers import Launch, parse_launch

TABLE = Path(__file__).with_name("server_catalogue.yaml")
STAND_IN_PYTHON = "${decathlon_python}"


@dataclass(frozen=True)
class Entry:
    """One row of the table."""

    registry: str
    package: str
    runs: str  # live | stand-in | replay
    env: str | None = None
    scripts: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    python: str | None = None
    module: str | None = None
    why: str | None = None
    network: bool = False


@dataclass(frozen=True)
class Plan:
    """A server definition resolved against the table; templates still unfilled."""

    server: str
    launch: Launch
    entry: Entry | None  # None: runs as written (python, an absolute path)
    command: str | None = None  # None when replay-only
    args: list[str] = field(default_factory=list)

    @property
    def runs(self) -> str:
        return "replay" if self.command is None else "live"

    @property
    def how(self) -> str:
        e = self.entry
        if e is None:
            return "as written"
        if e.runs == "stand-in":
            return f"stand-in {e.module}"
        if e.runs == "live":
            return f"{e.package} (PyPI, env {e.env})"
        return f"replay only: {e.why}"

    def replay_only_error(self) -> InfraError:
        return InfraError(Kind.REPLAY_ONLY_SERVER, f"MCP server {self.server!r} (`{self.launch.written}`) cannot run "
                          f"live here: {self.entry.why if self.entry else 'no way to run it'}. Run the task from "
                          f"recorded cassettes instead (`--cassettes DIR`, replay), or make it live by adding a "
                          f"stand-in or a package for it to decathlon/sandbox/server_catalogue.yaml")


@functools.cache
def table() -> dict[tuple[str, str], Entry]:
    raw = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    rows: dict[tuple[str, str], Entry] = {}
    for registry in ("npm", "pypi"):
        for package, row in sorted((raw.get(registry) or {}).items()):
            rows[(registry, package)] = _entry(registry, package, row)
    rows[("local", "")] = _entry("local", "", raw["local"])
    for name, row in sorted((raw.get("local-servers") or {}).items()):
        rows[("local", name)] = entry = _entry("local", name, row)
        if entry.runs == "live":
            raise ValueError(f"{TABLE}: local-servers:{name}: a server of the checkout's own tree has no package to "
                             "run live: stand-in or replay")
    return rows


def _entry(registry: str, package: str, row: dict[str, Any]) -> Entry:
    runs = row.get("runs")
    if runs not in ("live", "stand-in", "replay"):
        raise ValueError(f"{TABLE}: {registry}:{package}: runs must be live, stand-in or replay, not {runs!r}")
    return Entry(registry, package, runs, env=row.get("env"), scripts=tuple(row.get("scripts") or ()),
                 modules=tuple(row.get("modules") or ()), python=row.get("python"), module=row.get("module"),
                 why=row.get("why"), network=bool(row.get("network")))


def _normal(name: str) -> str:
    """PyPI compares names case-insensitively with -, _ and . the same."""
    return name.lower().replace("_", "-").replace(".", "-")


def _find(registry: str, package: str) -> Entry | None:
    if registry == "pypi":
        want = _normal(package)
        return next((e for (r, p), e in table().items() if r == "pypi" and _normal(p) == want), None)
    return table().get((registry, package))


def _providing(kind: str, name: str) -> Entry | None:
    """The PyPI package whose console script (or module) `uv run` would find under this name."""
    for (registry, _), entry in table().items():
        if registry == "pypi" and name in (entry.scripts if kind == "script" else entry.modules):
            return entry
    return None


def _unknown(server: str, launch: Launch, what: str) -> InfraError:
    return InfraError(Kind.UNKNOWN_SERVER_PACKAGE, f"server {server}: {what} (launched as `{launch.written}`) is not "
                      f"in the server catalogue; add a row for it to {TABLE.name} (runs: live with a PyPI "
                      f"package, stand-in, or replay)")


def plan_server(server: str, raw: dict[str, Any]) -> Plan:
    params = raw.get("params")
    if not isinstance(params, dict):
        raise InfraError(Kind.BAD_SERVER_CONFIG, f"server {server}: `params` must be a mapping "
                         f"(command, args, env, cwd), not {type(params).__name__}")
    if not isinstance(params.get("command"), str) or not params["command"]:
        raise InfraError(Kind.BAD_SERVER_CONFIG, f"server {server}: params.command is missing or not a string")
    args = params.get("args") or []
    if not isinstance(args, list):
        raise InfraError(Kind.BAD_SERVER_CONFIG, f"server {server}: params.args must be a list, not "
                         f"{type(args).__name__} ({str(args)[:60]!r})")
    launch = parse_launch(server, params["command"], [str(a) for a in args])
    if launch.kind in ("python", "direct"):
        return Plan(server, launch, None, params["command"], launch.args)
    entry: Entry | None
    if launch.kind == "local":
        # A server of the checkout's own tree runs here only where the table names its folder.
        entry = table().get(("local", launch.local or "")) or table()[("local", "")]
    elif launch.kind == "uv-run":
        entry = _providing("module" if launch.module else "script", launch.module or launch.entry or "")
        if entry is None:
            what = f"module {launch.module!r}" if launch.module else f"command {launch.entry!r}"
            raise _unknown(server, launch, f"`uv run` {what}")
    else:
        entry = _find(launch.registry or "", launch.package or "")
        if entry is None:
            raise _unknown(server, launch, f"{launch.registry} package {launch.package!r}")
    if entry.runs == "replay":
        return Plan(server, launch, entry)
    if entry.runs == "stand-in":
        # A stand-in with an `env` runs on that virtualenv's pins (the Snowflake connector's, say), importing this
        # project through its .pth (ci/install_servers.py).
        python = f"${{decathlon_servers}}/{entry.env}/bin/python" if entry.env else STAND_IN_PYTHON
        return Plan(server, launch, entry, python, ["-m", str(entry.module), *launch.args])
    env = "${decathlon_servers}/" + str(entry.env)
    if launch.module:
        return Plan(server, launch, entry, f"{env}/bin/python", ["-m", launch.module, *launch.args])
    if launch.kind == "uvx" and launch.entry not in entry.scripts:
        raise InfraError(Kind.UNKNOWN_SERVER_PACKAGE, f"server {server}: PyPI package {entry.package!r} has no "
                         f"command {launch.entry!r} in the catalogue (it has: {', '.join(entry.scripts) or 'none'})")
    return Plan(server, launch, entry, f"{env}/bin/{launch.entry}", list(launch.args))


def plan_servers(raw_configs: dict[str, dict], names: list[str]) -> list[Plan]:
    """Every server a live episode needs, or the first reason it cannot have them: before any work."""
    plans = []
    for name in names:
        raw = raw_configs.get(name)
        if raw is None:
            known = ", ".join(sorted(raw_configs)) or "none"
            raise InfraError(Kind.UNKNOWN_SERVER, f"the task needs MCP server {name!r}, which no "
                             f"configs/mcp_servers/*.yaml defines (defined: {known})")
        plan = plan_server(name, raw)
        if plan.runs == "replay":
            raise plan.replay_only_error()
        plans.append(plan)
    return plans


def check_installed(plan: Plan, servers_dir: Path) -> None:
    """A live package's virtualenv must be there: named at once, not as a spawn failure later."""
    entry = plan.entry
    if entry is None or entry.runs not in ("live", "stand-in") or entry.env is None or plan.command is None:
        return
    binary = Path(plan.command.replace("${decathlon_servers}", str(servers_dir)))
    if binary.exists():
        return
    needs = f" (it needs Python ≥ {entry.python}; this interpreter is {sys.version_info[0]}.{sys.version_info[1]})" \
        if entry.python and sys.version_info < tuple(int(x) for x in entry.python.split(".")) else ""
    what = f"PyPI package {entry.package!r}" if entry.runs == "live" else f"our stand-in {entry.module}"
    raise InfraError(Kind.SERVER_NOT_INSTALLED, f"MCP server {plan.server!r} runs {what} from "
                     f"{servers_dir / str(entry.env)}, which is not installed{needs}: run `python "
                     f"ci/install_servers.py` (DECATHLON_SERVERS_DIR={servers_dir}) or use an image that has it")


def runnable_servers(raw_configs: dict[str, dict], names: list[str], servers_dir: Path,
                     omit_unavailable: bool) -> tuple[list[str], list[dict]]:
    """The servers a live episode starts, and those it leaves out. By default a server that cannot run
    here fails the episode at once; `omit_unavailable` (a policy that calls no tool, a grader check)
    leaves it out instead, and says so."""
    keep, omitted = [], []
    for name in names:
        try:
            plan = plan_servers(raw_configs, [name])[0]
            check_installed(plan, servers_dir)
        except InfraError as exc:
            if not omit_unavailable or exc.kind not in ("replay_only_server", "server_not_installed"):
                raise
            omitted.append({"name": name, "kind": exc.kind, "why": exc.message})
            continue
        keep.append(name)
    return keep, omitted


def split_for_rerun(raw_configs: dict[str, dict], names: list[str], servers_dir: Path) -> tuple[list[str], list[dict]]:
    """A recorded run re-executed: the servers that run offline here are live; the rest (replay-only,
    network-backed, not installed) are answered from the recording, and listed with the reason."""
    live, replayed = [], []
    for name in names:
        if name not in raw_configs:
            plan_servers(raw_configs, [name])  # raises unknown_server, named
        plan = plan_server(name, raw_configs[name])
        why = None
        if plan.runs == "replay":
            why = plan.entry.why if plan.entry else "no way to run it here"
        elif plan.entry is not None and plan.entry.network:
            why = "its answers come from the network"
        else:
            try:
                check_installed(plan, servers_dir)
            except InfraError as exc:
                why = exc.message
        if why is None:
            live.append(name)
        else:
            replayed.append({"name": name, "why": why})
    return live, replayed
