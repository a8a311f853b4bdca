#!/usr/bin/env python3
"""The results page of a 108-task run: its size, and how fast it is interactive in headless chromium.

The report is the one `decathlon report` makes of the recorded Toolathlon runs (claude-4.5-sonnet, one
episode per task, ~20 MB of JSON; $DECATHLON_TRAJECTORIES or ../shared/data/toolathlon/trajectories/…).
The page is loaded N times in Debian's chromium (Playwright driving it, no browser download), each in a
fresh page; reported are medians of:
- interactive: navigation start → the page's script has run (`window.__reportReadyAt`, set after its
  handlers are in place; the tables are plain HTML, painted before);
- first contentful paint, DOMContentLoaded and load, from the browser's own timing entries;
- expand: click on a task → its episode drawn and the next frame painted, for the task with the median
  and the one with the longest conversation.
Targets (issue 12): under 5 MB, interactive under 1 s.

    .venv/bin/python bench/bench_report_html.py [--runs 7] [--out page.html] [--chromium /usr/bin/chromium]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from decathlon.reports.report import build_report, trajectory  # noqa: E402
from decathlon.reports.html import render_html  # noqa: E402

TRAJECTORIES = Path(os.environ.get("DECATHLON_TRAJECTORIES")
                    or REPO.parent / "shared" / "data" / "toolathlon" / "trajectories" / "claude-4.5-sonnet")

EXPAND = """async (task) => {
  const b = document.querySelector(`tr.task[data-task="${task}"] button.tg`);
  const t0 = performance.now();
  b.click();
  await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));  // drawn, laid out and painted
  const t1 = performance.now();
  const n = b.closest("tr").nextElementSibling.querySelectorAll(".msg").length;
  return {ms: t1 - t0, messages: n};
}"""

TIMINGS = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const fcp = performance.getEntriesByName("first-contentful-paint")[0];
  return {interactive: window.__reportReadyAt, dom_content_loaded: nav.domContentLoadedEventEnd,
          load: nav.loadEventEnd, first_contentful_paint: fcp ? fcp.startTime : null};
}"""


def median(xs: list[float | None]) -> float | None:
    xs = [x for x in xs if x is not None]
    return round(statistics.median(xs), 1) if xs else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--out", type=Path, help="keep the page here (default: a temporary file)")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ns = ap.parse_args()
    if not TRAJECTORIES.is_dir():
        print(f"no recorded runs at {TRAJECTORIES} (set DECATHLON_TRAJECTORIES)", file=sys.stderr)
        return 2

    t = time.perf_counter()
    report = build_report([TRAJECTORIES])
    t_report = time.perf_counter() - t
    t = time.perf_counter()
    page = render_html(report, trajectory)
    t_render = time.perf_counter() - t
    data = page.encode("utf-8")
    source_mb = sum(p.stat().st_size for p in TRAJECTORIES.glob("*.json")) / 1e6
    tasks = report["runs"][0]["tasks"]
    print(f"{len(tasks)} tasks, {source_mb:.1f} MB of recorded runs → page of {len(data) / 1e6:.2f} MB "
          f"(report {t_report:.2f} s, render {t_render:.2f} s)", flush=True)

    tmpdir = tempfile.TemporaryDirectory(prefix="bench-report-html-")
    path = ns.out or Path(tmpdir.name) / "report.html"
    path.write_bytes(data)
    by_calls = sorted(tasks, key=lambda x: (x["avg_tool_calls"] or 0, x["task"]))
    med_task, big_task = by_calls[len(by_calls) // 2]["task"], by_calls[-1]["task"]

    from playwright.sync_api import sync_playwright
    loads: list[dict] = []
    expand_med: list[float] = []
    expand_big: list[float] = []
    errors: list[str] = []
    sizes = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=ns.chromium, args=["--no-sandbox"])
        try:
            for _ in range(ns.runs):
                pg = browser.new_page(viewport={"width": 1400, "height": 900})
                pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                pg.on("pageerror", lambda e: errors.append(str(e)))
                pg.goto(path.as_uri(), wait_until="load")
                pg.wait_for_function("window.__reportReady === true")
                loads.append(pg.evaluate(TIMINGS))
                r = pg.evaluate(EXPAND, med_task)
                expand_med.append(r["ms"])
                sizes[med_task] = r["messages"]
                r = pg.evaluate(EXPAND, big_task)
                expand_big.append(r["ms"])
                sizes[big_task] = r["messages"]
                pg.close()
        finally:
            browser.close()
    result = {
        "tasks": len(tasks), "page_mb": round(len(data) / 1e6, 3), "runs": ns.runs,
        "render_s": round(t_render, 2),
        "interactive_ms": median([x["interactive"] for x in loads]),
        "first_contentful_paint_ms": median([x["first_contentful_paint"] for x in loads]),
        "dom_content_loaded_ms": median([x["dom_content_loaded"] for x in loads]),
        "load_ms": median([x["load"] for x in loads]),
        "expand_median_task_ms": median(expand_med), "expand_median_task": med_task,
        "expand_largest_task_ms": median(expand_big), "expand_largest_task": big_task,
        "messages": sizes, "console_errors": len(errors),
        "targets": {"page_mb": 5, "interactive_ms": 1000},
    }
    rows = [("page size", f"{result['page_mb']:.2f} MB", "< 5 MB"),
            ("interactive (median)", f"{result['interactive_ms']} ms", "< 1000 ms"),
            ("first contentful paint (median)", f"{result['first_contentful_paint_ms']} ms", ""),
            ("DOMContentLoaded (median)", f"{result['dom_content_loaded_ms']} ms", ""),
            ("load (median)", f"{result['load_ms']} ms", ""),
            (f"expand {med_task} ({sizes[med_task]} msgs)", f"{result['expand_median_task_ms']} ms", ""),
            (f"expand {big_task} ({sizes[big_task]} msgs)", f"{result['expand_largest_task_ms']} ms", "")]
    w = max(len(r[0]) for r in rows)
    print(f"\n{'measure'.ljust(w)}  {'median of ' + str(ns.runs):>14}  target")
    for name, value, target in rows:
        print(f"{name.ljust(w)}  {value:>14}  {target}")
    if errors:
        print(f"console errors: {errors[:3]}", file=sys.stderr)
    print(json.dumps(result))
    ok = result["page_mb"] < 5 and (result["interactive_ms"] or 1e9) < 1000 and not errors
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
