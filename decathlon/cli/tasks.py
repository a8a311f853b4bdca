"""`decathlon tasks`."""
from __future__ import annotations

import argparse
import json
import sys

from decathlon.cli.console import console
from rich.table import Table

from decathlon.checkout import manifest
from decathlon.training.splits import apply_split_and_curriculum
from decathlon.checkout.tasks import catalogue, live_blockers, resolve_source


def tasks_command(ns: argparse.Namespace) -> int:
    if ns.source == manifest.SOURCE_ALIAS:
        return _manifest_listing(ns)
    source = resolve_source(ns.source)
    infos = catalogue(source)
    if ns.check_manifest:
        problems = manifest.drift(manifest.load(), {i.id: {"servers": i.servers, "local_tools": i.local_tools,
                                                           "has_preprocess": i.has_preprocess} for i in infos})
        for p in problems:
            print(p)
        print(f"{'drift' if problems else 'no drift'}: {len(problems)} difference(s) from the Toolathlon manifest",
              file=sys.stderr)
        return 1 if problems else 0
    by_id = {i.id: i for i in infos}
    infos = [by_id[name] for name in apply_split_and_curriculum(list(by_id), ns)]
    blocked = live_blockers(source, infos)
    if ns.runs == "live":
        infos = [i for i in infos if blocked[i.id] is None]
    for i in infos:
        if i.error:
            print(f"decathlon: task {i.id} cannot run: {i.error}", file=sys.stderr)
    if ns.json:
        print(json.dumps([{**i.to_json(), "live_here": blocked[i.id] is None,
                           **({"live_blocked_by": blocked[i.id]} if blocked[i.id] else {})} for i in infos], indent=2))
        return 0
    table = Table(title=f"{len(infos)} tasks{_qualifier(ns)}")
    for col in ("task", "servers", "local tools", "preprocess", "groundtruth", "live here"):
        table.add_column(col)
    for i in infos:
        table.add_row(i.id if not i.error else f"{i.id} [red](broken)[/]", ", ".join(i.servers),
                      ", ".join(i.local_tools), "yes" if i.has_preprocess else "",
                      "yes" if i.has_groundtruth else "", "yes" if blocked[i.id] is None else f"no ({blocked[i.id]})")
    console().print(table)
    return 0


def _manifest_listing(ns: argparse.Namespace) -> int:
    by_id = {t["id"]: t for t in manifest.load()["tasks"]}
    tasks = [by_id[name] for name in apply_split_and_curriculum(list(by_id), ns)]
    if ns.json:
        print(json.dumps(tasks, indent=2))
        return 0
    table = Table(title=f"{len(tasks)} Toolathlon tasks (manifest){_qualifier(ns)}")
    for col in ("task", "servers", "offline class", "services", "credentials", "conflicts with"):
        table.add_column(col)
    for t in tasks:
        others = [x for x in (t["conflict_group"] or []) if x != t["id"]]
        table.add_row(t["id"], ", ".join(t["servers"]), t["offline_class"], ", ".join(t["local_services"]),
                      "; ".join(t["credentials"]), ", ".join(others))
    console().print(table)
    return 0


def _qualifier(ns: argparse.Namespace) -> str:
    parts = [f"{ns.split} split"] if ns.split != "all" else []
    if getattr(ns, "runs", None) == "live":
        parts.append("those a live policy can run here")
    if ns.curriculum is not None:
        parts.append(f"easiest first by {ns.curriculum}")
    return f" ({', '.join(parts)})" if parts else ""
