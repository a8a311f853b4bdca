"""The `decathlon` command."""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from decathlon.errors import InfraError


def _add_source(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source", help="a Toolathlon root (default: $TOOLATHLON_ROOT), e.g. fixtures/toolathlon-mini")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="decathlon", description="Toolathlon tasks as an RL environment.")
    sub = p.add_subparsers(dest="command", required=True)

    t = sub.add_parser("tasks", help="list the tasks of a source")
    _add_source(t)
    t.add_argument("--json", action="store_true", help="a JSON array instead of a table")

    r = sub.add_parser("run", help="run episodes and print their rewards")
    r.add_argument("tasks", nargs="*", metavar="TASK")
    r.add_argument("--all", action="store_true", help="every task of the source")
    _add_source(r)
    r.add_argument("--backend", choices=["local"], default="local")
    r.add_argument("--policy", default="oracle", help="oracle | null | openai:<model>")
    r.add_argument("--oracles", type=Path, help="folder of oracle trajectories (default: <source>/oracles)")
    r.add_argument("--mode", choices=["live"], default="live")
    r.add_argument("--launch-time", help='pin the clock, "YYYY-MM-DD HH:MM:SS" (default: now)')
    r.add_argument("--max-turns", type=int, default=100)
    r.add_argument("--concurrency", type=int, default=2, help="episodes at once (default 2)")
    r.add_argument("--json", action="store_true", help="one JSON object per episode per line")
    r.add_argument("--out", type=Path, help="write per-episode artifacts under this folder")

    s = sub.add_parser("serve-policy", help="serve oracle trajectories as an OpenAI-compatible endpoint")
    _add_source(s)
    s.add_argument("--oracles", type=Path)
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8765)

    g = sub.add_parser("gc", help="remove sandboxes a killed run left behind")
    g.add_argument("--backend", choices=["local"], default="local")
    g.add_argument("--run", help="only this run's sandboxes")
    return p


def main(argv: list[str] | None = None) -> None:
    ns = _parser().parse_args(argv)
    try:
        if ns.command == "tasks":
            from decathlon.cli_tasks import tasks_command
            code = tasks_command(ns)
        elif ns.command == "run":
            from decathlon.cli_run import run_command
            code = asyncio.run(run_command(ns))
        elif ns.command == "serve-policy":
            from decathlon.serve_policy import serve_command
            code = serve_command(ns)
        else:
            from decathlon.backends import make_backend
            removed = asyncio.run(make_backend(ns.backend).collect({"decathlon.run": ns.run} if ns.run else {}))
            print(json.dumps({"removed": removed}))
            code = 0
    except InfraError as exc:
        print(f"decathlon: error: {exc.message}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print("decathlon: interrupted", file=sys.stderr)
        code = 130
    raise SystemExit(code)
