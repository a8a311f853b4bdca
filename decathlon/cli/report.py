"""`decathlon report DIR…`: the numbers of runs and recorded runs, as tables, JSON or one HTML page."""
from __future__ import annotations

import argparse
import json
import sys

from rich.table import Table

from decathlon.cli.console import console as make_console
from decathlon.errors import InfraError, Kind
from decathlon.reports.report import NOTE, PHASES, build_report, trajectory
from decathlon.tape.store import write_atomic


def _num(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def overall_line(run: dict) -> str:
    """A run's overall numbers in one line."""
    p1 = run["pass@1"]
    std = f" ± {p1['std']:.2f}" if p1["std"] is not None else ""
    k = run["k"]
    text = (f"Pass@1 {_num(p1['mean'])}{std} ({run['passed']}/{run['graded']}"
            + (f" over {len(p1['per_repeat'])} repeats" if len(p1["per_repeat"]) > 1 else "") + ")")
    if k > 1:
        text += f", Pass@{k} {_num(run['pass@k'])}, Pass^{k} {_num(run['pass^k'])}"
        if run["tasks_short_of_k"]:
            text += f" ({run['tasks_short_of_k']} task(s) with fewer than {k} graded episodes left out)"
    text += (f"; avg turns {_num(run['avg_turns'], 1)}, avg tool calls {_num(run['avg_tool_calls'], 1)}"
             f"; infra errors {run['infra_errors']} of {run['episodes']} episodes")
    metrics = run.get("metrics") or {}
    if metrics:
        text += "; metrics " + ", ".join(f"{name} {_num(m['mean'])}" + (f" ({m['episodes']} of {m['of']} episodes)"
                                                                        if m["episodes"] != m["of"] else "")
                                         for name, m in sorted(metrics.items()))
    if run.get("missing"):
        text += (f"; {len(run['missing'])} of {run['planned']} planned episodes have no result (the run did not "
                 "finish: `decathlon run --resume --out DIR` completes it)")
    return text


def _task_table(run: dict) -> Table:
    k = run["k"]
    table = Table(title=run["label"], caption=NOTE)
    cols = ["task", "pass@1", *( [f"pass@{k}", f"pass^{k}"] if k > 1 else []), "passed", "infra", "turns",
            "tool calls", *PHASES]
    for col in cols:
        table.add_column(col, justify="left" if col == "task" else "right")
    for t in run["tasks"]:
        table.add_row(t["task"], _num(t["pass@1"]), *([_num(t["pass@k"]), _num(t["pass^k"])] if k > 1 else []),
                      f"{t['passed']}/{t['graded']}", str(t["infra_errors"]), _num(t["avg_turns"], 1),
                      _num(t["avg_tool_calls"], 1),
                      *(f"{t['timings'][p]:.2f}s" if p in t["timings"] else "-" for p in PHASES))
    return table


def report_command(ns: argparse.Namespace) -> int:
    report = build_report(ns.dirs, skip_broken=ns.skip_broken)
    if ns.html is not None:
        from decathlon.reports.html import render_html
        if ns.html.is_dir():
            raise InfraError(Kind.USAGE, f"--html {ns.html} is a folder; name the page's file, e.g. {ns.html / 'index.html'}")
        try:
            write_atomic(ns.html, render_html(report, trajectory))
        except OSError as exc:
            raise InfraError(Kind.USAGE, f"cannot write --html {ns.html} ({exc.strerror or exc}); name another file") from None
    if ns.json:
        sys.stdout.write(json.dumps(report, indent=1) + "\n")
        return 0
    console = make_console()
    for run in report["runs"]:
        if not ns.summary:
            console.print(_task_table(run))
        console.print(f"[bold]{run['label']}[/]: {overall_line(run)}", soft_wrap=True)  # one line, whatever the width
        for c in run["conflicts"]:
            console.print(f"  conflict group {' + '.join(c['group'].split(','))}: {c['waited_episodes']} episode(s) "
                          f"waited {c['wait_seconds']:.1f} s in all for another task of the group (live mode)")
        for s in run["skipped"]:
            console.print(f"  [yellow]skipped[/] {s}")
        for m in run["missing"][:20]:
            console.print(f"  [yellow]no result[/] {m}")
        if len(run["missing"]) > 20:
            console.print(f"  [yellow]no result[/] … and {len(run['missing']) - 20} more")
    for d in report["duplicates"]:
        console.print(f"[yellow]not counted twice[/]: {d}")
    if ns.summary or not report["runs"]:
        console.print(NOTE)  # else each run's table says it, in its caption
    if ns.html is not None:
        print(f"decathlon report: wrote {ns.html}", file=sys.stderr)
    return 0
