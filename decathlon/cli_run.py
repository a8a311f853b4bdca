"""`decathlon run`: episodes with a progress display and a result table (or JSON lines)."""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid

from decathlon.console import console as make_console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from decathlon.backends import make_backend
from decathlon.cassettes import cassette_path, cassettes_dir
from decathlon.episode import EpisodeConfig, EpisodeResult, run_episode
from decathlon.errors import InfraError
from decathlon.policies import make_policy
from decathlon.tasks import resolve_source, select

PHASES = ("acquire", "setup", "agent", "evaluate", "release")


def _table(results: list[EpisodeResult]) -> Table:
    table = Table(title="decathlon run")
    for col in ("task", "reward", "pass", "metrics", "turns", *PHASES, "infra error"):
        table.add_column(col, justify="right" if col in ("reward", "turns", *PHASES) else "left")
    for r in results:
        metrics = ", ".join(f"{k}={v:g}" for k, v in sorted(r.metrics.items()))
        err = f"{r.infra_error['kind']}: {r.infra_error['message'][:80]}" if r.infra_error else ""
        table.add_row(r.task, f"{r.reward:.2f}", str(r.passed), metrics, str(r.turns),
                      *(f"{r.timings[p]:.2f}s" if p in r.timings else "-" for p in PHASES), err)
    return table


async def run_command(ns: argparse.Namespace) -> int:
    if not ns.tasks and not ns.all:
        raise InfraError("usage", "name at least one TASK, or pass --all")
    source = resolve_source(ns.source)
    ns.mode = ns.mode or ("replay" if ns.policy == "replay" else "live")
    names = select(source, ns.tasks, ns.all)
    try:
        policy = make_policy(ns.policy, source, ns.oracles, ns.cassettes, ns.trajectory)
    except ValueError as exc:
        raise InfraError("usage", str(exc)) from exc
    tapes = cassettes_dir(source, ns.cassettes)
    backend = make_backend(ns.backend)
    run_id = uuid.uuid4().hex[:12]
    gate = asyncio.Semaphore(max(1, ns.concurrency))
    console = make_console(stderr=True)

    async def one(task: str) -> EpisodeResult:
        async with gate:
            cfg = EpisodeConfig(task=task, source=source, run_id=run_id, episode_id=uuid.uuid4().hex,
                                launch_time=ns.launch_time, max_turns=ns.max_turns, mode=ns.mode, out_dir=ns.out,
                                cassette=cassette_path(tapes, task) if ns.mode == "replay" else None)
            return await run_episode(cfg, backend, policy)

    try:
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=ns.json) as progress:
            bar = progress.add_task(f"{len(names)} episodes ({ns.policy}, {ns.backend})", total=len(names))
            jobs = [asyncio.create_task(one(n)) for n in names]
            for job in asyncio.as_completed(jobs):
                r = await job
                progress.advance(bar)
                progress.console.print(f"{r.task}: reward {r.reward:.2f}"
                                       + (f" [red]{r.infra_error['kind']}[/]" if r.infra_error else ""))
            results = [j.result() for j in jobs]
    finally:
        close = getattr(backend, "close", None)  # a warm pool's unused containers go with the run
        if close is not None:
            await asyncio.to_thread(close)
    if ns.json:
        for r in results:
            sys.stdout.write(json.dumps({"task": r.task, "reward": r.reward, "pass": r.passed, "metrics": r.metrics,
                                         "infra_error": r.infra_error, "timings": r.timings, "turns": r.turns,
                                         "tool_calls": r.tool_calls, "status": r.status}) + "\n")
    else:
        make_console().print(_table(results))
    return 1 if any(r.infra_error for r in results) else 0
