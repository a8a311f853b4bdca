"""`decathlon seeds check|capture|from-runs`: the resources tasks start from that lived in the task authors' accounts (a
template spreadsheet the preprocess copies), which no checkout holds: which a library of seed packs has, and writing
them from a live account (decathlon.sandbox.vendor_seeds, decathlon.checkout.seed_capture)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from decathlon.checkout.tasks import resolve_source
from decathlon.cli.console import console
from decathlon.errors import InfraError, Kind
from decathlon.sandbox import taskdef, vendor_seeds


def _tasks(source: Path, named: list[str] | None) -> list[str]:
    every = taskdef.list_tasks(source)
    unknown = sorted(set(named or []) - set(every))
    if unknown:
        raise InfraError(Kind.UNKNOWN_TASK, f"no task {', '.join(unknown)} in {source}")
    return sorted(named) if named else every


def check_command(ns: argparse.Namespace) -> int:
    source = resolve_source(ns.source)
    rows = []
    for task in _tasks(source, ns.task):
        pack = ns.seeds / task if ns.seeds is not None else None
        rows += vendor_seeds.check(pack, vendor_seeds.needs(source, task))
    if ns.json:
        json.dump([{"task": f.need.task, "emulator": f.need.emulator, "kind": f.need.source.kind,
                    "resource": f.need.resource, "named_at": f"{f.need.file}:{f.need.line}",
                    "present": f.present, "missing": list(f.missing)} for f in rows], sys.stdout, indent=2)
        print()
    else:
        table = Table(title=f"Seeds the tasks of {source} start from" + (f", in {ns.seeds}" if ns.seeds else ""))
        for column in ("task", "resource", "named at", "seed"):
            table.add_column(column, overflow="fold")
        for f in rows:
            state = "[green]present[/]" if f.present else "[red]missing[/] " + escape(", ".join(f.missing))
            table.add_row(f.need.task, escape(f"{f.need.emulator}: {f.need.source.kind} {f.need.resource}"),
                          escape(f"{f.need.file}:{f.need.line}"), state)
        console().print(table)
        missing = sorted({f.need.task for f in rows if not f.present})
        print(f"{len(rows)} resource(s) in {len({f.need.task for f in rows})} task(s); "
              + (f"missing for {', '.join(missing)}: `{vendor_seeds.capture_command('TASK', ns.seeds)}` writes them"
                 if missing else "every one present"), file=sys.stderr)
    return 1 if any(not f.present for f in rows) else 0


def capture_command(ns: argparse.Namespace) -> int:
    source = resolve_source(ns.source)
    try:
        token = ns.token_file.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise InfraError(Kind.MISSING_CREDENTIAL, f"--token-file {ns.token_file}: {exc.strerror}") from None
    if not token:
        raise InfraError(Kind.MISSING_CREDENTIAL, f"--token-file {ns.token_file} is empty (an OAuth access token "
                         "with read access to Drive and Sheets)")
    from decathlon.checkout import seed_capture  # httpx, only for this verb

    needs = [n for task in _tasks(source, ns.task) for n in vendor_seeds.needs(source, task)]
    if not needs:
        print("decathlon seeds: none of these tasks starts from a vendor resource; nothing to capture", file=sys.stderr)
        return 0
    written = seed_capture.capture(needs, ns.out, token, ns.endpoint,
                                   progress=lambda line: print(f"decathlon seeds: {line}", file=sys.stderr))
    print(f"decathlon seeds: {len(written)} file(s) for {len({w.need.task for w in written})} task(s) in {ns.out}; "
          f"run with --seeds {ns.out}", file=sys.stderr)
    return 0


def from_runs_command(ns: argparse.Namespace) -> int:
    from decathlon.recordings import seeds_from_runs

    source = resolve_source(ns.source)
    if not ns.runs.is_dir():
        raise InfraError(Kind.USAGE, f"--runs {ns.runs}: not a folder of recorded runs (<task>.json each)")
    needs = [n for task in _tasks(source, ns.task) for n in vendor_seeds.needs(source, task)]
    outcomes = seeds_from_runs.from_runs(needs, ns.runs, ns.out)
    for o in outcomes:
        print(f"{o.task}: {o.template}: " + (f"built from the run ({len(o.written)} files)" if o.built
                                             else f"not complete in the run: {o.why}"))
    built = sum(o.built for o in outcomes)
    print(f"decathlon seeds: {built} of {len(outcomes)} template(s) built from {ns.runs} into {ns.out}; the others "
          "need `decathlon seeds capture`", file=sys.stderr)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("seeds", help="seed packs: what tasks start from that lived in the task authors' accounts "
                       "(a template spreadsheet), which no checkout holds")
    verbs = s.add_subparsers(dest="seeds_command", required=True)
    c = verbs.add_parser("check", help="per task, the resources its preprocess starts from and whether the library "
                         "has them (exit 1 when one is missing)")
    c.add_argument("--source", help="a Toolathlon root (default: $TOOLATHLON_ROOT)")
    c.add_argument("--seeds", type=Path, metavar="LIB", help="a library of seed packs (LIB/<task>/<emulator>/…)")
    c.add_argument("--task", action="append", help="only this task (repeatable)")
    c.add_argument("--json", action="store_true")
    cap = verbs.add_parser("capture", help="write the seed packs from a live account: read-only GETs of each "
                           "resource, answers written as they came")
    cap.add_argument("--source", help="a Toolathlon root (default: $TOOLATHLON_ROOT)")
    cap.add_argument("--out", type=Path, required=True, metavar="LIB", help="the library to write (LIB/<task>/…)")
    cap.add_argument("--task", action="append", help="only this task (repeatable; default: every task that needs one)")
    cap.add_argument("--token-file", type=Path, required=True,
                     help="a file holding an OAuth access token that may read the resources (Drive and Sheets "
                     "read-only scopes)")
    cap.add_argument("--endpoint", help="send the requests here instead of the vendor's hosts (Host kept): an "
                     "emulator standing in for the vendor")
    fr = verbs.add_parser("from-runs", help="build seeds from recorded runs where a run shows the template whole "
                          "(says, per task, why not where it does not)")
    fr.add_argument("--source", help="a Toolathlon root (default: $TOOLATHLON_ROOT)")
    fr.add_argument("--runs", type=Path, required=True, help="a folder of recorded runs (<task>.json each)")
    fr.add_argument("--out", type=Path, required=True, metavar="LIB", help="the library to write (LIB/<task>/…)")
    fr.add_argument("--task", action="append", help="only this task (repeatable)")


def seeds_command(ns: argparse.Namespace) -> int:
    verbs = {"check": check_command, "capture": capture_command, "from-runs": from_runs_command}
    return verbs[ns.seeds_command](ns)
