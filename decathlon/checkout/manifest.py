"""The Toolathlon task manifest: facts about the 108 tasks, generated from the facts table.

The table (`tasks.csv`, shared/data/toolathlon) is third-party data, so the manifest is generated
where it is used (fixtures/toolathlon/manifest.json, not committed) by `decathlon manifest build`
or on first use, from $DECATHLON_TOOLATHLON_DATA (default: ../shared/data/toolathlon beside the
checkout). It lists each task's servers, local tools, offline class, local services, credentials
and Toolathlon's conflict groups; the catalogue lists it and checks a user's checkout against it.
"""
from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

from decathlon.errors import InfraError, Kind
from decathlon.tape.store import write_atomic

REPO = Path(__file__).resolve().parents[2]
MANIFEST = REPO / "fixtures" / "toolathlon" / "manifest.json"
SOURCE_ALIAS = "toolathlon-manifest"
# Toolathlon's tasks/finalpool/task_conflict.json: tasks sharing remote state never run at once.
CONFLICT_GROUPS = [["set-conf-cr-ddl", "student-interview"], ["dataset-license-issue", "huggingface-upload"],
                   ["woocommerce-customer-survey", "woocommerce-product-recall"]]
VERSION = 1


def data_dir() -> Path:
    env = os.environ.get("DECATHLON_TOOLATHLON_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data" / "toolathlon"


def _list(cell: str) -> list[str]:
    return [x.strip() for x in cell.split(";") if x.strip()] if cell and cell.strip() not in ("none", "no") else []


def _credentials(cell: str) -> list[str]:
    """`yes: web_search: Serper API key; github: GitHub PAT` → ["github: GitHub PAT", "web_search: Serper API key"]."""
    cell = cell.strip()
    if not cell.startswith("yes"):
        return []
    return sorted(x.strip() for x in re.sub(r"^yes:\s*", "", cell).split(";") if x.strip())


def generate(table: Path) -> dict:
    try:
        rows = list(csv.DictReader(table.read_text(encoding="utf-8").splitlines()))
    except OSError as exc:
        raise InfraError(Kind.NO_FACTS_TABLE, f"cannot read the Toolathlon facts table {table}: {exc}; set "
                         "DECATHLON_TOOLATHLON_DATA to the folder holding tasks.csv") from exc
    group_of = {t: sorted(g) for g in CONFLICT_GROUPS for t in g}
    tasks = []
    for r in sorted(rows, key=lambda r: r["task_id"]):
        tasks.append({
            "id": r["task_id"],
            "servers": _list(r["mcp_servers"]),
            "local_tools": _list(r["local_tools"]),
            "offline_class": r["offline_class"],
            "local_services": _list(r["needs_local_service"]),
            "credentials": _credentials(r["needs_external_credentials"]),
            "has_preprocess": r["has_preprocess"].strip() == "yes",
            "conflict_group": group_of.get(r["task_id"]),
        })
    return {"version": VERSION, "generated_from": table.name, "tasks": tasks,
            "conflict_groups": [sorted(g) for g in CONFLICT_GROUPS]}


def build(out: Path = MANIFEST, table: Path | None = None) -> dict:
    manifest = generate(table or data_dir() / "tasks.csv")
    write_atomic(out, json.dumps(manifest, indent=1, sort_keys=True) + "\n")  # parallel workers may race here
    return manifest


def load() -> dict:
    """The manifest, generated first if it is not there yet (or is older than the table)."""
    table = data_dir() / "tasks.csv"
    if MANIFEST.is_file() and (not table.is_file() or MANIFEST.stat().st_mtime >= table.stat().st_mtime):
        return json.loads(MANIFEST.read_text(encoding="utf-8"))
    return build(MANIFEST, table)


def drift(manifest: dict, checkout_tasks: dict[str, dict]) -> list[str]:
    """How a Toolathlon checkout differs from the manifest: missing or extra tasks, other servers,
    other local tools, a preprocess added or gone. `checkout_tasks`: id → {servers, local_tools, has_preprocess}."""
    want = {t["id"]: t for t in manifest["tasks"]}
    out = [f"missing from the checkout: {t}" for t in sorted(set(want) - set(checkout_tasks))]
    out += [f"not in the manifest: {t}" for t in sorted(set(checkout_tasks) - set(want))]
    for tid in sorted(set(want) & set(checkout_tasks)):
        m, c = want[tid], checkout_tasks[tid]
        for key in ("servers", "local_tools"):
            if sorted(m[key]) != sorted(c[key]):
                added, gone = sorted(set(c[key]) - set(m[key])), sorted(set(m[key]) - set(c[key]))
                out.append(f"{tid}: {key} differ (checkout adds {added or 'none'}, lacks {gone or 'none'})")
        if m["has_preprocess"] != c["has_preprocess"]:
            out.append(f"{tid}: preprocess {'added' if c['has_preprocess'] else 'gone'}")
    return out
