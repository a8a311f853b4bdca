"""`decathlon tasks`."""
from __future__ import annotations

import argparse
import json

from decathlon.console import console
from rich.table import Table

from decathlon.tasks import catalogue, resolve_source


def tasks_command(ns: argparse.Namespace) -> int:
    infos = catalogue(resolve_source(ns.source))
    if ns.json:
        print(json.dumps([i.to_json() for i in infos], indent=2))
        return 0
    table = Table(title=f"{len(infos)} tasks")
    for col in ("task", "servers", "local tools", "preprocess", "groundtruth"):
        table.add_column(col)
    for i in infos:
        table.add_row(i.id, ", ".join(i.servers), ", ".join(i.local_tools), "yes" if i.has_preprocess else "",
                      "yes" if i.has_groundtruth else "")
    console().print(table)
    return 0
