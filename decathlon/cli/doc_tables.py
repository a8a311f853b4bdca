"""The documentation's tables of what runs here, written from the program's own answers so that they cannot drift:
`decathlon servers --json` (docs/checkout.md, docs/services.md), `decathlon tasks --json` (the statuses of the
checkout's tasks in docs/checkout.md) and the status vocabulary (README.md).

    python -m decathlon.cli.doc_tables [--source CHECKOUT] [--check]

Each table sits between `<!-- table NAME: … -->` and `<!-- end NAME -->`; the rest of the page is prose. The checkout's
tables need a checkout (`--source` or TOOLATHLON_ROOT); the README's do not. `--check` writes nothing and exits 1 if a
page differs (tests/test_doc_tables.py does the same).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from decathlon.checkout.status_kinds import KINDS

REPO = Path(__file__).resolve().parents[2]
CHECKOUT_MD = REPO / "docs" / "checkout.md"
SERVICES_MD = REPO / "docs" / "services.md"
README = REPO / "README.md"
SERVER_COLUMNS = ("server", "launched as", "runs here", "against")


@dataclass(frozen=True)
class Block:
    page: Path
    name: str
    render: Callable[[], str]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(columns: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def parse(text: str) -> list[dict[str, str]]:
    """A markdown table back into rows (cells unescaped, backticks around a whole cell dropped)."""
    lines = [line for line in text.strip().splitlines() if line.startswith("|")]
    if len(lines) < 2:
        return []

    def cells(line: str) -> list[str]:
        parts = re.split(r"(?<!\\)\|", line.strip())[1:-1]
        return [p.strip().replace("\\|", "|") for p in parts]

    head = cells(lines[0])
    out = []
    for line in lines[2:]:
        row = [c[1:-1] if len(c) > 1 and c.startswith("`") and c.endswith("`") else c for c in cells(line)]
        out.append(dict(zip(head, row)))
    return out


def servers_table(rows: list[dict], only: Callable[[dict], bool] | None = None) -> str:
    """`decathlon servers --json` rows as the docs show them."""
    chosen = [r for r in rows if r.get("runs") != "error" and (only is None or only(r))]
    return markdown(SERVER_COLUMNS, [(r["name"], f"`{r['launcher']}`", r["what"] or "", r["against"] or "")
                                     for r in chosen])


def talks_to_a_service(row: dict) -> bool:
    """The servers docs/services.md is about: those against the episode's own services and SaaS emulators."""
    against = row.get("against") or ""
    return row.get("runs") == "live" and against.startswith("the episode's") and "workspace" not in against


def statuses_table(tasks: list[dict]) -> str:
    """`decathlon tasks --json` rows, as counts and names per status."""
    rows: list[tuple[str, ...]] = []
    for kind in KINDS:
        names = [t["id"] for t in tasks if t.get("status") == kind.code]
        if names:
            rows.append((f"`{kind.code}`", str(len(names)), kind.label, ", ".join(names)))
    return markdown(("status", "tasks", "means", "which"), rows)


def emulators_table() -> str:
    """The vendors' descriptors (decathlon.emulators.registry), as `decathlon emulators` lists them."""
    from decathlon.emulators import registry
    rows = []
    for v in registry.vendors():
        where = ", ".join(f"`{h.pattern}`" for h in v.hosts) + " through the SaaS front" if v.reach == "front" else \
            "loopback " + ", ".join(str(p) for p in v.ports)
        rows.append((f"`{v.name}`", v.title, where, ", ".join(f"`{s}`" for s in v.servers), v.protocol, v.surface,
                     f"`decathlon/emulators/{v.name}`"))
    return markdown(("emulator", "emulates", "reached at", "servers", "protocol", "answers", "code"), rows)


def coverage_table(emulator: str) -> str:
    """decathlon.emulators.<emulator>.coverage, run where Google's discovery documents are (the saas venv)."""
    import subprocess
    from decathlon.sandbox.services import saas_python
    module = f"decathlon.emulators.{emulator}.coverage"
    out = subprocess.run([saas_python(), "-m", module], capture_output=True, text=True,
                         timeout=120, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    if out.returncode != 0:
        raise RuntimeError(f"{module} failed ({saas_python()}): {out.stderr[-1000:]}")
    return out.stdout.strip()


def gcp_coverage_table() -> str:
    return coverage_table("gcp")


def workspace_coverage_table() -> str:
    return coverage_table("workspace")


def legend_table() -> str:
    return markdown(("status", "means", "what still runs"), [(f"`{k.code}`", k.label, k.still_runs) for k in KINDS])


def _marker(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- table {re.escape(name)}:[^>]*-->\n)(.*?)(\n<!-- end {re.escape(name)} -->)", re.S)


def current(page: Path, name: str) -> str | None:
    m = _marker(name).search(page.read_text(encoding="utf-8"))
    return m.group(2) if m else None


def replace(text: str, name: str, table: str) -> str:
    pattern = _marker(name)
    if not pattern.search(text):
        raise KeyError(f"no `<!-- table {name}: … -->` … `<!-- end {name} -->` block")
    return pattern.sub(lambda m: m.group(1) + table + m.group(3), text, count=1)


def blocks(source: Path | None) -> list[Block]:
    out = [Block(README, "statuses", legend_table), Block(CHECKOUT_MD, "statuses", legend_table),
           Block(SERVICES_MD, "emulators", emulators_table), Block(SERVICES_MD, "gcp-coverage", gcp_coverage_table),
           Block(SERVICES_MD, "workspace-coverage", workspace_coverage_table)]
    if source is None:
        return out
    from decathlon.checkout import task_status
    from decathlon.checkout.tasks import catalogue
    from decathlon.cli.servers import server_rows

    def server_json() -> list[dict]:
        return [r.to_json() for r in server_rows(source)]

    def task_json() -> list[dict]:
        infos = catalogue(source)
        found = task_status.statuses(source, infos)
        return [{**i.to_json(), **found[i.id].to_json()} for i in infos]

    out += [Block(CHECKOUT_MD, "servers", lambda: servers_table(server_json())),
            Block(CHECKOUT_MD, "task-statuses", lambda: statuses_table(task_json())),
            Block(SERVICES_MD, "service-servers", lambda: servers_table(server_json(), talks_to_a_service))]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m decathlon.cli.doc_tables", description=__doc__.splitlines()[0])
    p.add_argument("--source", help="a Toolathlon checkout (default: $TOOLATHLON_ROOT); without one only the README's")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page differs")
    ns = p.parse_args(argv)
    raw = ns.source or os.environ.get("TOOLATHLON_ROOT")
    source = Path(raw).absolute() if raw else None
    pages: dict[Path, str] = {}
    differs = []
    for block in blocks(source):
        text = pages.get(block.page) or block.page.read_text(encoding="utf-8")
        new = replace(text, block.name, block.render())
        if new != text:
            differs.append(f"{block.page.relative_to(REPO)}: table {block.name}")
        pages[block.page] = new
    if ns.check:
        for d in differs:
            print(f"differs from the program: {d}", file=sys.stderr)
        return 1 if differs else 0
    for page, text in pages.items():
        page.write_text(text, encoding="utf-8")
    for d in differs:
        print(f"wrote {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
