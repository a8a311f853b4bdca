"""`decathlon servers`: every server definition of a source, and how it runs here."""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml
from rich.table import Table

from decathlon.cli.console import console
from decathlon.errors import InfraError, Kind
from decathlon.checkout.server_pins import CheckoutPins, installed_version
from decathlon.checkout.tasks import catalogue, resolve_source
from decathlon.sandbox import catalogue as server_catalogue
from decathlon.sandbox.servers_config import default_servers_dir


@dataclass
class ServerRow:
    name: str
    file: str
    launcher: str  # the launch as the YAML writes it, templates unfilled
    package: str | None
    runs: str  # live | replay | error
    how: str
    available: bool  # live and installed here (stand-ins: importable)
    pin: dict | None = None  # what the checkout pins, and where
    installed: str | None = None
    tasks: list[str] = field(default_factory=list)
    note: str | None = None

    def to_json(self) -> dict:
        return asdict(self)


def _definitions(source: Path) -> list[tuple[Path, dict | None, str | None]]:
    folder = source / "configs" / "mcp_servers"
    if not folder.is_dir():
        raise InfraError(Kind.BAD_SOURCE, f"{source} has no configs/mcp_servers/: not a Toolathlon root (give the "
                         "folder that holds configs/ and tasks/)")
    out: list[tuple[Path, dict | None, str | None]] = []
    for path in sorted(folder.glob("*.yaml")):
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            out.append((path, None, f"not valid YAML ({str(exc).splitlines()[0]})"))
            continue
        if not isinstance(raw, dict) or "name" not in raw:
            out.append((path, None, "needs a mapping with a `name`"))
            continue
        out.append((path, raw, None))
    return out


def _row(path: Path, raw: dict, pins: CheckoutPins, servers_dir: Path, users: dict[str, list[str]]) -> ServerRow:
    name = str(raw["name"])
    base = ServerRow(name, path.name, "", None, "error", "", False, tasks=users.get(name, []))
    params = raw.get("params")
    if not isinstance(params, dict):
        params = {}
    base.launcher = " ".join(str(x) for x in [params.get("command", ""), *(params.get("args") or [])]).strip()
    try:
        plan = server_catalogue.plan_server(name, raw)
    except InfraError as exc:
        base.how, base.note = exc.kind, exc.message
        return base
    launch, entry = plan.launch, plan.entry
    base.package = launch.package or (entry.package if entry and entry.package else None)
    base.runs, base.how = plan.runs, plan.how
    pin = pins.pin(launch.kind, launch.registry or (entry.registry if entry else None), base.package)
    base.pin = pin.to_json() if pin else None
    if entry is None:
        base.available = True
        base.note = "not a catalogued launcher: run exactly as written"
    elif entry.runs == "stand-in":
        base.available = importlib.util.find_spec(str(entry.module)) is not None
        base.note = None if base.available else f"stand-in {entry.module} is missing from this installation"
    elif entry.runs == "live":
        env = servers_dir / str(entry.env)
        base.installed = installed_version(env, entry.package)
        base.available = base.installed is not None
        if not base.available:
            needs = f"; it needs Python ≥ {entry.python}" if entry.python else ""
            base.note = f"not installed in {env}{needs} (python ci/install_servers.py, or an image that has it)"
        elif pin and pin.version != base.installed:
            base.note = f"the checkout pins {pin.version} ({pin.origin}); {base.installed} runs here"
    return base


def servers_command(ns: argparse.Namespace) -> int:
    source = resolve_source(ns.source)
    pins = CheckoutPins(source)
    servers_dir = default_servers_dir()
    users: dict[str, list[str]] = {}
    for info in catalogue(source):
        for server in info.servers:
            users.setdefault(server, []).append(info.id)
    rows = []
    for path, raw, problem in _definitions(source):
        if raw is None:
            rows.append(ServerRow(path.stem, path.name, "", None, "error", "bad_server_config", False, note=problem))
        else:
            rows.append(_row(path, raw, pins, servers_dir, users))
    rows.sort(key=lambda r: (r.name, r.file))
    defined = {r.name for r in rows}
    for server in sorted(set(users) - defined):
        print(f"decathlon: tasks need MCP server {server!r}, which no configs/mcp_servers/*.yaml defines: "
              f"{', '.join(users[server])}", file=sys.stderr)
    for r in rows:
        if r.runs == "error":
            print(f"decathlon: {r.file}: {r.note}", file=sys.stderr)
    if ns.json:
        print(json.dumps([r.to_json() for r in rows], indent=2, ensure_ascii=False))
    else:
        live = sum(r.runs == "live" for r in rows)
        table = Table(title=f"{len(rows)} server definitions: {live} live, {len(rows) - live} replay only or broken")
        for col in ("server", "runs", "how", "checkout pin", "here", "tasks"):
            table.add_column(col, overflow="fold")
        for r in rows:
            here = r.installed or ("yes" if r.available else "[red]missing[/]" if r.runs == "live" else "")
            pin = f"{r.pin['version']} ({r.pin['from']})" if r.pin else ""
            table.add_row(r.name, r.runs, r.how, pin, here, str(len(r.tasks)))
        console().print(table)
    return 1 if any(r.runs == "error" for r in rows) else 0
