"""`decathlon run`: episodes with a progress display and a result table (or JSON lines)."""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import uuid
from pathlib import Path

from decathlon.console import console as make_console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from decathlon.backends import make_backend
from decathlon.cassettes import FROM_CASSETTE, cassette_path, cassettes_dir
from decathlon.episode import EpisodeConfig, EpisodeResult, run_episode
from decathlon.errors import InfraError
from decathlon.policies import make_policy
from decathlon.tasks import resolve_source, select

PHASES = ("acquire", "setup", "agent", "evaluate", "release")


def _table(results: list[EpisodeResult]) -> Table:
    table = Table(title="decathlon run")
    for col in ("task", "reward", "pass", "metrics", "turns", *PHASES, "infra error", "failure"):
        table.add_column(col, justify="right" if col in ("reward", "turns", *PHASES) else "left")
    for r in results:
        metrics = ", ".join(f"{k}={v:g}" for k, v in sorted(r.metrics.items()))
        table.add_row(r.task, f"{r.reward:.2f}", str(r.passed), metrics, str(r.turns),
                      *(f"{r.timings[p]:.2f}s" if p in r.timings else "-" for p in PHASES),
                      _brief(r.infra_error), _brief(r.failure))
    return table


def _brief(err: dict | None) -> str:
    return f"{err['kind']}: {err['message'][:80]}" if err else ""


def _check_out(out: Path | None) -> None:
    """--out must be a folder this process can write, checked before any sandbox exists: found out at
    the first episode's end, it would cost the run and leave nothing behind."""
    if out is None:
        return
    if out.exists() and not out.is_dir():
        raise InfraError("usage", f"--out {out} is a file, not a folder; name a folder (it is created if missing)")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        raise InfraError("usage", f"--out {out} is not a folder this user can write ({exc.strerror or exc}); "
                         "name another one") from None


async def _cancel_episodes(jobs: list[asyncio.Task]) -> None:
    """Cancel the episodes and wait for each to release its sandbox, here, while the loop is whole. Left
    to asyncio.run's final sweep, which cancels every task at once, asyncio's own helper tasks go too: a
    subprocess being started then never finishes (CPython 3.11), and the run hangs."""
    for job in jobs:
        job.cancel()
    await asyncio.gather(*jobs, return_exceptions=True)


def _internal_error(task: str, exc: BaseException) -> EpisodeResult:
    """An episode that raised past run_episode: a bug of ours, named, and the other episodes go on."""
    return EpisodeResult(task, infra_error={"kind": "internal_error",
                                            "message": f"{type(exc).__name__}: {exc} (a bug in decathlon; please report it)"})


async def run_command(ns: argparse.Namespace) -> int:
    if not ns.tasks and not ns.all:
        raise InfraError("usage", "name at least one TASK, or pass --all")
    _check_out(ns.out)
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
    # A policy that calls no tool needs no server: what cannot run here is left out (and listed per
    # episode), so the task's preprocess and evaluator can still be checked.
    omit = ns.omit_unavailable_servers or ns.policy == "null"
    frozen = ns.frozen_clock if ns.frozen_clock is not None else ns.mode == "rerun"

    async def one(task: str) -> EpisodeResult:
        async with gate:
            cfg = EpisodeConfig(task=task, source=source, run_id=run_id, episode_id=uuid.uuid4().hex,
                                launch_time=ns.launch_time, max_turns=ns.max_turns, mode=ns.mode, out_dir=ns.out,
                                cassette=cassette_path(tapes, task) if ns.mode in FROM_CASSETTE else None,
                                omit_unavailable_servers=omit, frozen_clock=frozen)
            try:
                return await run_episode(cfg, backend, policy)
            except Exception as exc:  # noqa: BLE001 - one episode's bug must not cancel the others
                return _internal_error(task, exc)

    jobs: list[asyncio.Task[EpisodeResult]] = []
    try:
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=ns.json) as progress:
            bar = progress.add_task(f"{len(names)} episodes ({ns.policy}, {ns.backend})", total=len(names))
            jobs += [asyncio.create_task(one(n)) for n in names]
            for job in asyncio.as_completed(jobs):
                r = await job
                progress.advance(bar)
                progress.console.print(f"{r.task}: reward {r.reward:.2f}"
                                       + (f" [red]{r.infra_error['kind']}[/]" if r.infra_error else "")
                                       + (f" [yellow]failure: {r.failure['kind']}[/]" if r.failure else ""))
            results = [j.result() for j in jobs]
    except asyncio.CancelledError:  # Ctrl-C or SIGTERM
        await _cancel_episodes(jobs)
        raise
    finally:
        close = getattr(backend, "close", None)  # a warm pool's unused containers go with the run
        if close is not None:
            await asyncio.to_thread(close)
    if ns.json:
        for r in results:
            row = {"task": r.task, "reward": r.reward, "pass": r.passed, "metrics": r.metrics,
                   "infra_error": r.infra_error, "failure": r.failure, "timings": r.timings,
                   "turns": r.turns, "tool_calls": r.tool_calls, "status": r.status}
            if r.omitted_servers:
                row["omitted_servers"] = r.omitted_servers
            if r.replayed_servers is not None:  # a rerun: the real verdict beside the recorded one
                row["recorded_pass"] = r.recorded_pass
                row["replayed_servers"] = r.replayed_servers
            sys.stdout.write(json.dumps(row) + "\n")
    else:
        make_console().print(_table(results))
    return 1 if any(r.infra_error for r in results) else 0
