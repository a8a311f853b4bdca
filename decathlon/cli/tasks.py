"""`decathlon tasks`: each task of a source, and what runs here and how (decathlon.checkout.task_status)."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from decathlon.checkout import manifest, task_status
from decathlon.checkout.tasks import catalogue, resolve_source
from decathlon.cli.console import console
from decathlon.errors import InfraError
from decathlon.training.splits import apply_split_and_curriculum

_STYLE = {"graded": "green", "graded-without-seed": "yellow", "needs-seed": "yellow", "rerun-only": "cyan",
          "replay-only": "red", "broken": "red"}


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
    found = task_status.statuses(source, infos)
    every = dict(found)
    if ns.runs == "live":
        infos = [i for i in infos if found[i.id].graded]
    if getattr(ns, "status", None):
        infos = [i for i in infos if found[i.id].kind.code == ns.status]
    for i in infos:
        if i.error:
            print(f"decathlon: task {i.id} cannot run: {i.error}", file=sys.stderr)
    if ns.json:
        print(json.dumps([{**i.to_json(), **found[i.id].to_json()} for i in infos], indent=2, ensure_ascii=False))
        return 0
    table = Table(title=f"{len(infos)} tasks{_qualifier(ns)}", caption=_caption(every), caption_justify="left")
    for col in ("task", "status", "here: what it gets, or every reason it is not graded", "servers"):
        table.add_column(col, overflow="fold")
    for i in infos:
        s = found[i.id]
        table.add_row(i.id, f"[{_STYLE[s.kind.code]}]{s.kind.code}[/]", escape(s.summary()), ", ".join(i.servers))
    console().print(table)
    return 0


def _caption(found: dict[str, task_status.TaskStatus]) -> str:
    counts = task_status.counts(found)
    lines = [f"{counts[k.code]} {k.code}: {k.label}; still runs: {k.still_runs}" for k in task_status.KINDS
             if counts[k.code]]
    return "\n".join(lines)


def _checkout_statuses() -> tuple[Path | None, dict[str, task_status.TaskStatus]]:
    """The statuses of the checkout at TOOLATHLON_ROOT, if there is one: the manifest's facts are upstream's, what runs
    here is the checkout's and this machine's."""
    root = os.environ.get("TOOLATHLON_ROOT")
    if not root:
        return None, {}
    try:
        source = resolve_source(root)
        return source, task_status.statuses(source)
    except InfraError as exc:
        print(f"decathlon: TOOLATHLON_ROOT: {exc.message}; the statuses are left out", file=sys.stderr)
        return None, {}


def _credentials_here(credentials: list[str]) -> list[str]:
    """The manifest's credentials (`google-cloud: GCP service account…`), those of a vendor emulated here said so."""
    from decathlon.sandbox.saas import SERVER_EMULATORS
    out = []
    for cred in credentials:
        server = cred.split(":", 1)[0].strip()
        out.append(f"{cred} (emulated here; yours only with --saas real)" if server in SERVER_EMULATORS else cred)
    return out


def _manifest_listing(ns: argparse.Namespace) -> int:
    by_id = {t["id"]: t for t in manifest.load()["tasks"]}
    tasks = [by_id[name] for name in apply_split_and_curriculum(list(by_id), ns)]
    checkout, found = _checkout_statuses()
    if checkout is None:
        print("decathlon: the manifest holds upstream's facts; set TOOLATHLON_ROOT to a checkout to see what runs here "
              "(`decathlon tasks --source CHECKOUT`)", file=sys.stderr)
    rows = []
    for t in tasks:
        row = {**t, "credentials": _credentials_here(t["credentials"])}
        if t["id"] in found:
            row.update(found[t["id"]].to_json())
        rows.append(row)
    if ns.runs == "live":
        rows = [r for r in rows if r.get("status") == task_status.GRADED.code]
    if getattr(ns, "status", None):
        rows = [r for r in rows if r.get("status") == ns.status]
    if ns.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    title = f"{len(rows)} Toolathlon tasks (manifest{f'; here: {checkout}' if checkout else ''}){_qualifier(ns)}"
    table = Table(title=title, caption=_caption(found) if found else None, caption_justify="left")
    for col in ("task", "servers", "offline class (upstream)", "status here", "services (upstream)", "credentials",
                "conflicts with"):
        table.add_column(col, overflow="fold")
    for r in rows:
        others = [x for x in (r["conflict_group"] or []) if x != r["id"]]
        status = r.get("status")
        shown = f"[{_STYLE[status]}]{status}[/]" if status else ""
        table.add_row(r["id"], ", ".join(r["servers"]), r["offline_class"], shown, ", ".join(r["local_services"]),
                      escape("; ".join(r["credentials"])), ", ".join(others))
    console().print(table)
    return 0


def _qualifier(ns: argparse.Namespace) -> str:
    parts = [f"{ns.split} split"] if ns.split != "all" else []
    if getattr(ns, "runs", None) == "live":
        parts.append("those a live policy runs and their real scripts grade here")
    if getattr(ns, "status", None):
        parts.append(f"status {ns.status}")
    if ns.curriculum is not None:
        parts.append(f"easiest first by {ns.curriculum}")
    return f" ({', '.join(parts)})" if parts else ""
