"""`decathlon servers`: every server definition of a source, and how it runs here."""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml
from rich.markup import escape
from rich.table import Table

from decathlon.cli.console import console
from decathlon.errors import InfraError, Kind
from decathlon.checkout import server_facts
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
    runs_here: str | None = None  # what runs (decathlon.checkout.server_facts.RUNS): package, stand-in, replay…
    what: str | None = None  # the thing that runs, in words: `google-cloud-mcp 1.0.0 (PyPI), started by our …`
    against: str | None = None  # what it talks to: the episode's mail server, emulated BigQuery, the network…
    version: str | None = None  # the version ci/servers pins the package that runs at

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
    facts = server_facts.describe(name, plan)
    base.runs_here, base.what, base.against, base.version = facts.runs, facts.what, facts.against, facts.version
    pin = pins.pin(launch.kind, launch.registry or (entry.registry if entry else None), base.package)
    base.pin = pin.to_json() if pin else None
    if entry is None:
        base.available = True
        base.note = "not a catalogued launcher: run exactly as written"
    elif entry.runs == "stand-in":
        base.available = importlib.util.find_spec(str(entry.module)) is not None
        base.note = None if base.available else f"stand-in {entry.module} is missing from this installation"
        if base.available and entry.env and facts.package:  # the real package, on its own virtualenv
            base.installed = installed_version(servers_dir / entry.env, facts.package)
            base.available = base.installed is not None
            if not base.available:
                base.note = f"{facts.package} is not installed in {servers_dir / entry.env} (python ci/install_servers.py)"
    elif entry.runs == "live":
        env = servers_dir / str(entry.env)
        base.installed = installed_version(env, entry.package)
        base.available = base.installed is not None
        if not base.available:
            needs = f"; it needs Python ≥ {entry.python}" if entry.python else ""
            base.note = f"not installed in {env}{needs} (python ci/install_servers.py, or an image that has it)"
        elif pin and pin.version != base.installed:
            base.note = f"the checkout pins {pin.version} ({pin.origin}); {base.installed} runs here"
    if base.note is None and pin and base.installed and pin.version != base.installed:
        base.note = f"the checkout pins {pin.version} ({pin.origin}); {base.installed} runs here"
    return base


def users_of(source: Path) -> dict[str, list[str]]:
    """Each server name, and the tasks that name it."""
    users: dict[str, list[str]] = {}
    for info in catalogue(source):
        for server in info.servers:
            users.setdefault(server, []).append(info.id)
    return users


def server_rows(source: Path, users: dict[str, list[str]] | None = None) -> list[ServerRow]:
    """Every server definition of `source`, and how it runs here: the listing's rows (and the docs' tables)."""
    pins = CheckoutPins(source)
    servers_dir = default_servers_dir()
    users = users_of(source) if users is None else users
    rows = []
    for path, raw, problem in _definitions(source):
        if raw is None:
            rows.append(ServerRow(path.stem, path.name, "", None, "error", "bad_server_config", False, note=problem))
        else:
            rows.append(_row(path, raw, pins, servers_dir, users))
    rows.sort(key=lambda r: (r.name, r.file))
    return rows


def servers_command(ns: argparse.Namespace) -> int:
    source = resolve_source(ns.source)
    users = users_of(source)
    rows = server_rows(source, users)
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
        console().print(_table(rows))
    return 1 if any(r.runs == "error" for r in rows) else 0


def _title(rows: list[ServerRow]) -> str:
    live = sum(r.runs == "live" for r in rows)
    replay = sum(r.runs == "replay" for r in rows)
    broken = len(rows) - live - replay
    missing = sum(r.runs == "live" and not r.available for r in rows)
    parts = [f"{live} run here" + (f" ({missing} not installed)" if missing else ""), f"{replay} replay only"]
    if broken:
        parts.append(f"{broken} broken")
    return f"{len(rows)} server definitions: {', '.join(parts)}"


def _table(rows: list[ServerRow]) -> Table:
    table = Table(title=_title(rows))
    for col in ("server", "runs here", "against", "checkout pin", "installed", "tasks"):
        table.add_column(col, overflow="fold")
    for r in rows:
        if r.runs == "error":
            what = f"[red]{escape(r.how)}[/]"
        else:
            what = escape(r.what or r.how)
        here = r.installed or ("yes" if r.available else "[red]missing[/]" if r.runs == "live" else "")
        pin = f"{r.pin['version']} ({r.pin['from']})" if r.pin else ""
        table.add_row(r.name, what, escape(r.against or ""), escape(pin), here, str(len(r.tasks)))
    return table
