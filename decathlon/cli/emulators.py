"""`decathlon emulators`: every emulated vendor (decathlon.emulators.registry), where an episode reaches it, the MCP
servers that bring it, and what of its API it answers."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from rich.markup import escape
from rich.table import Table

from decathlon.cli.console import console
from decathlon.emulators import registry


def emulators_command(ns: argparse.Namespace) -> int:
    vendors = registry.vendors()
    if ns.json:
        json.dump([{**asdict(v), "module": v.module} for v in vendors], sys.stdout, indent=2)
        print()
        return 0
    table = Table(title="Emulated vendors (decathlon.emulators.<name>, declared in its vendor.py)")
    for column in ("emulator", "emulates", "reached at", "servers", "protocol", "answers"):
        table.add_column(column, overflow="fold")
    for v in vendors:
        where = ", ".join(h.pattern for h in v.hosts) + " (the SaaS front)" if v.reach == "front" else \
            "loopback " + ", ".join(str(p) for p in v.ports) + " (an episode service)"
        table.add_row(v.name, escape(v.title), escape(where), ", ".join(v.servers) or "-", v.protocol, escape(v.surface))
    console().print(table)
    return 0
