"""`decathlon demo`: what `docker compose up` runs, offline.

Every mini task with its oracle, and, where the recorded Toolathlon runs are present, every imported
recorded task replayed from its cassette; the result tables go to the log, the artifacts and a
summary (summary.json) and the results page (index.html, as `decathlon report --html` writes it) to
--out, which is then served over HTTP until stopped.
"""
from __future__ import annotations

import argparse
import asyncio
import functools
import http.server
import json
import os
import sys
from pathlib import Path

from decathlon.checkout.tasks import MINI

LAUNCH = "2026-03-02 09:00:00"  # the mini pack's pinned clock (as in its tests): rewards comparable anywhere
DEFAULT_TRAJECTORIES = Path(__file__).resolve().parents[3] / "shared/data/toolathlon/trajectories/claude-4.5-sonnet"


def trajectories_dir() -> Path | None:
    raw = os.environ.get("DECATHLON_TRAJECTORIES")
    path = Path(raw) if raw else DEFAULT_TRAJECTORIES
    return path if path.is_dir() and any(path.glob("*.json")) else None


def _run_ns(source: Path, policy: str, backend: str, out: Path, launch: str | None) -> argparse.Namespace:
    # parsed by the real `run` parser, so every option the run command reads has its default here too
    from decathlon.cli.parser import build_parser
    # --overwrite: a demo started again replaces its own earlier results (kept in the artifacts volume)
    argv = ["run", "--all", "--source", str(source), "--backend", backend, "--policy", policy, "--out", str(out),
            "--overwrite", "--concurrency", os.environ.get("DECATHLON_DEMO_CONCURRENCY", "2")]
    if launch:
        argv += ["--launch-time", launch]
    return build_parser().parse_args(argv)


def _suite_results(out: Path) -> list[dict]:
    rows = []
    for f in sorted(out.glob("*/result.json")):
        r = json.loads(f.read_text(encoding="utf-8"))
        rows.append({k: r.get(k) for k in ("task", "reward", "pass", "metrics", "infra_error", "turns")})
    return rows


def run_suites(backend: str, out: Path) -> dict:
    from decathlon.cli.run import run_command
    suites: list[tuple[str, Path, str, str | None]] = [("mini", MINI, "oracle", LAUNCH)]
    recorded = trajectories_dir()
    if recorded is not None:
        from decathlon.recordings.importer import import_dir
        imported = out / "imported-source"
        print(f"[demo] importing the recorded runs in {recorded} …", file=sys.stderr, flush=True)
        import_dir(recorded, imported)
        suites.append(("recorded", imported, "replay", None))
    else:
        print("[demo] no recorded runs mounted (DECATHLON_TRAJECTORIES): mini pack only", file=sys.stderr, flush=True)
    summary: dict = {"backend": backend, "suites": {}}
    for name, source, policy, launch in suites:
        print(f"[demo] {name}: every task of {source} with the {policy} policy on the {backend} backend",
              file=sys.stderr, flush=True)
        folder = out / name
        code = asyncio.run(run_command(_run_ns(source, policy, backend, folder, launch)))
        rows = _suite_results(folder)
        summary["suites"][name] = {"policy": policy, "exit_code": code, "tasks": len(rows),
                                   "mean_reward": round(sum(r["reward"] for r in rows) / len(rows), 4) if rows else 0.0,
                                   "infra_errors": sum(1 for r in rows if r["infra_error"]), "results": rows}
    (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    write_page(out, [out / name for name in summary["suites"]])
    return summary


def write_page(out: Path, folders: list[Path]) -> None:
    """index.html: `decathlon report --html` over the demo's runs, the numbers and every trajectory."""
    from decathlon.reports.report import build_report, trajectory
    from decathlon.reports.html import render_html
    folders = [f for f in folders if f.is_dir() and next(f.rglob("result.json"), None) is not None]
    if not folders:
        return
    report = build_report(folders, skip_broken=True)
    (out / "index.html").write_text(render_html(report, trajectory), encoding="utf-8")
    # a browser asks every server for /favicon.ico; an empty one keeps a 404 out of the page's console
    (out / "favicon.ico").write_bytes(b"")


def serve(out: Path, port: int) -> None:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(out))
    # 0.0.0.0 inside the runner's container; compose publishes it on the host's 127.0.0.1 only.
    with http.server.ThreadingHTTPServer(("0.0.0.0", port), handler) as srv:
        print(f"[demo] serving the run summary on port {port} (http://127.0.0.1:{port}/); stop with Ctrl-C",
              file=sys.stderr, flush=True)
        srv.serve_forever()


def demo_command(ns: argparse.Namespace) -> int:
    out: Path = ns.out
    out.mkdir(parents=True, exist_ok=True)
    summary = run_suites(ns.backend, out)
    for name, suite in summary["suites"].items():
        print(f"[demo] {name}: {suite['tasks']} tasks, mean reward {suite['mean_reward']}, "
              f"infra errors {suite['infra_errors']}", file=sys.stderr, flush=True)
    failed = any(s["infra_errors"] for s in summary["suites"].values())
    if ns.no_serve:
        return 1 if failed else 0
    serve(out, ns.port)
    return 0
