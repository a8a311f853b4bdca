"""`decathlon run`: episodes with a progress display and a result table (or JSON lines)."""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from decathlon.cli import out_folder
from decathlon.cli.console import NARROW, console as make_console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from decathlon.training import conflicts
from decathlon.backends import make_backend
from decathlon.recordings.cassettes import FROM_CASSETTE, cassette_path, cassettes_dir
from decathlon.core.episode import EpisodeConfig, EpisodeResult, run_episode
from decathlon.errors import InfraError, Kind
from decathlon.core.policies import make_policy, preflight
from decathlon.core import seeds
from decathlon.sandbox import launch_time
from decathlon.training.splits import apply_split_and_curriculum
from decathlon.checkout.real_saas import check_real_saas
from decathlon.checkout.tasks import replay_only, resolve_source, select
from decathlon.tape.store import write_atomic

PHASES = ("acquire", "setup", "agent", "evaluate", "release")


def _table(results: list[EpisodeResult], repeats: int, width: int = 200) -> Table:
    """The result table; under NARROW columns the compact one (task, verdict, time, what went wrong), whose task
    names fold rather than shrink to `pay…`."""
    table = Table(title="decathlon run")
    # A rerun's point is the real verdict beside the recorded one: both in the table, not only in --json.
    rerun = any(r.replayed_servers is not None for r in results)
    narrow = width < NARROW
    phases = () if narrow else PHASES
    columns = ("task", *(("repeat",) if repeats > 1 else ()), "reward", "pass", *(("recorded pass",) if rerun else ()),
               *(() if narrow else ("metrics", "turns")), *phases, *(("time",) if narrow else ()),
               *(("error",) if narrow else ("infra error", "failure")))
    for col in columns:
        table.add_column(col, justify="right" if col in ("reward", "turns", "time", *PHASES) else "left",
                         overflow="fold", min_width=len(col) if col != "task" else 12)
    for r in results:
        metrics = ", ".join(f"{k}={v:g}" for k, v in sorted(r.metrics.items()))
        # An infra error is no verdict: no reward is shown for it, only what went wrong.
        reward = "-" if r.infra_error else f"{r.reward:.2f}"
        cells = [r.task, *((str(r.repeat),) if repeats > 1 else ()), reward, str(r.passed),
                 *((str(r.recorded_pass),) if rerun else ())]
        if narrow:
            total = sum(v for k, v in r.timings.items() if k in PHASES)
            cells += [f"{total:.0f}s", _brief(r.infra_error) or _brief(r.failure)]
        else:
            cells += [metrics, str(r.turns), *(f"{r.timings[p]:.2f}s" if p in r.timings else "-" for p in PHASES),
                      _brief(r.infra_error), _brief(r.failure)]
        table.add_row(*cells)
    return table


def _brief(err: dict | None) -> str:
    """The kind in the table; the whole message follows it (`_errors`), where the cause and the fix fit."""
    return f"{err['kind']} ({err.get('phase') or '?'})" if err else ""


def _errors(results: list[EpisodeResult], repeats: int) -> list[Text]:
    """Every infra error and failure in full, one paragraph each: a message cut at the table's width drops
    the cause and the fix, which come last."""
    out = []
    for r in results:
        for label, err, style in (("infra error", r.infra_error, "red"), ("failure", r.failure, "yellow")):
            if err:
                head = f"{r.task}{f' #{r.repeat}' if repeats > 1 else ''} {label} {err['kind']} ({err.get('phase') or '?'}): "
                out.append(Text.assemble((head, style), str(err.get("message", ""))))
    return out


def _check_cassettes(tapes: Path, names: list[str], mode: str, named: bool) -> None:
    """A replay or rerun needs each task's cassette: said once, with the way to get them, before any sandbox."""
    lacking = [t for t in names if not cassette_path(tapes, t).is_file()]
    if not lacking:
        return
    shown = ", ".join(lacking[:5]) + (f" and {len(lacking) - 5} more" if len(lacking) > 5 else "")
    where = f"--cassettes {tapes}" if named else f"the default cassette folder {tapes} (no --cassettes given)"
    if mode == "rerun":
        how = ("a rerun re-executes recorded runs on a checkout: import them (`decathlon cassettes import-trajectories "
               "RUNS --out DIR`) and pass --cassettes DIR/cassettes")
    else:
        how = ("record them (`decathlon record TASK… --source SRC --out DIR`) and pass --cassettes DIR, or replay an "
               "import with --source IMPORT_DIR")
    raise InfraError(Kind.CASSETTE_MISSING, f"--mode {mode}: {len(lacking)} of {len(names)} task(s) have no cassette in "
                     f"{where}: {shown}. {how[0].upper()}{how[1:]}")


def _check_out(out: Path | None) -> None:
    """--out must be a folder this process can write, checked before any sandbox exists: found out at
    the first episode's end, it would cost the run and leave nothing behind."""
    if out is None:
        return
    if out.exists() and not out.is_dir():
        raise InfraError(Kind.USAGE, f"--out {out} is a file, not a folder; name a folder (it is created if missing)")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        raise InfraError(Kind.USAGE, f"--out {out} is not a folder this user can write ({exc.strerror or exc}); "
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
    return EpisodeResult(task=task, infra_error={"kind": "internal_error",
                                            "message": f"{type(exc).__name__}: {exc} (a bug in decathlon; please report it)"})


def _outcome(r: EpisodeResult) -> str:
    """What became of the episode (`status` of a --json row): passed, failed, max_turns_reached or infra_error. How
    the agent's own run ended (Toolathlon's `success` once it claims done, whatever the verdict) is `agent_status`."""
    if r.infra_error:
        return "infra_error"
    if r.passed:
        return "passed"
    if r.passed is None and r.status == "max_turns_reached":
        return "max_turns_reached"
    return "failed"


def _closing(r: EpisodeResult, repeats: bool) -> str:
    """An episode's line as it ends: its reward, or, for an infra error (no verdict), only what went wrong."""
    name = f"{r.task}{f' #{r.repeat}' if repeats else ''}"
    if r.infra_error:
        return f"{name}: [red]infra error {r.infra_error['kind']}[/] (no reward)"
    return f"{name}: reward {r.reward:.2f}" + (f" [yellow]failure: {r.failure['kind']}[/]" if r.failure else "")


class _Phases:
    """Each running episode's phase (`setup: preprocess`, `agent`…): a live row in a terminal, a line when piped,
    so a long setup is never a silent minute."""

    def __init__(self, progress: Progress, repeats: bool) -> None:
        self.progress, self.repeats = progress, repeats
        self.live = progress.console.is_terminal
        self.rows: dict[tuple[str, int], TaskID] = {}
        self.started: dict[tuple[str, int], float] = {}

    def reporter(self, task: str, repeat: int) -> Callable[[str], None]:
        name = f"{task}{f' #{repeat}' if self.repeats else ''}"

        def say(phase: str) -> None:
            key = (task, repeat)
            began = self.started.setdefault(key, time.monotonic())
            if self.live:
                if key not in self.rows:
                    self.rows[key] = self.progress.add_task(f"  {name}: {phase}", total=None)
                else:
                    self.progress.update(self.rows[key], description=f"  {name}: {phase}")
            else:
                self.progress.console.print(f"{name}: {phase} ({time.monotonic() - began:.1f} s)", highlight=False)
        return say

    def done(self, task: str, repeat: int) -> None:
        row = self.rows.pop((task, repeat), None)
        if row is not None:
            self.progress.remove_task(row)


def _summary_line(results: list[EpisodeResult]) -> str:
    from decathlon.cli.report import overall_line
    from decathlon.reports.report import summarise_results
    return overall_line(summarise_results([r.to_json() for r in results]))


def _backend_for(ns: argparse.Namespace) -> str:
    """The backend, said at the start where it isolates less than a container. A rerun re-executes a
    recorded (third-party) run's python and terminal calls for real: it never runs them unisolated on this
    host unless asked to."""
    from decathlon.backends import local_users
    from decathlon.backends.local import isolation_note
    backend = ns.backend or ("compose" if ns.mode == "rerun" else "local")
    if backend == "local":
        if ns.mode == "rerun" and not local_users.isolating() and not ns.trust_recorded_code:
            raise InfraError(Kind.USAGE, "--mode rerun re-executes the recorded run's python and terminal calls for real, "
                             "and the local backend, not run as root, would run them as you on this host. Use "
                             "--backend compose (the default for reruns), run decathlon as root (each episode then runs "
                             "as an unprivileged user of its own), or pass --trust-recorded-code if you trust the recording")
        print(f"decathlon: {isolation_note()}", file=sys.stderr)
    return backend


async def run_command(ns: argparse.Namespace) -> int:
    if ns.repeats < 1 or ns.concurrency < 1:
        raise InfraError(Kind.USAGE, f"--repeats and --concurrency take a whole number ≥ 1 "
                         f"(got --repeats {ns.repeats}, --concurrency {ns.concurrency})")
    earlier = out_folder.prepare(ns)  # --resume fills in the earlier run's tasks, repeats and launch time
    if not ns.tasks and not ns.all:
        raise InfraError(Kind.USAGE, "name at least one TASK, or pass --all")
    _check_out(ns.out)
    source = resolve_source(ns.source)
    ns.mode = ns.mode or ("replay" if ns.policy == "replay" else "live")
    if ns.mode == "live" and (why := replay_only(source)) is not None:
        raise InfraError(Kind.USAGE, why)
    names = select(source, ns.tasks, ns.all)
    if ns.out is not None and len(set(names)) < len(names):
        # <out>/<task>/ holds one episode's artifacts (repeat-<i>/ under it with --repeats): a task named twice
        # would have its second episode overwrite the first's
        twice = sorted({n for n in names if names.count(n) > 1})
        raise InfraError(Kind.USAGE, f"--out: {', '.join(twice)} named more than once; name each task once and pass "
                         "--repeats K for K episodes of each (each in its own sandbox, all of them kept)")
    if ns.split != "all" or ns.curriculum is not None:
        named = None if ns.all else names
        names = apply_split_and_curriculum(select(source, [], True), ns, named)
        if named is not None and len(names) < len(named):
            left = sorted(set(named) - set(names))
            if not names:
                raise InfraError(Kind.USAGE, f"none of the named tasks is in the {ns.split} split ({', '.join(left)}); "
                                 "name tasks of that split, or drop --split")
            print(f"decathlon: not in the {ns.split} split, left out: {', '.join(left)}", file=sys.stderr)
    groups = conflicts.load_groups(source)
    try:
        policy = make_policy(ns.policy, source, ns.oracles, ns.cassettes, ns.trajectory)
    except ValueError as exc:
        raise InfraError(Kind.USAGE, str(exc)) from exc
    tapes = cassettes_dir(source, ns.cassettes)
    # What is wrong for the whole run is said once, before any sandbox: not as N infra errors after N setups.
    if ns.launch_time:
        launch_time.resolve(ns.launch_time)
    await preflight(policy, names)
    if ns.saas == "real" and ns.mode not in FROM_CASSETTE:
        check_real_saas(source, names)
    if ns.mode in FROM_CASSETTE:
        _check_cassettes(tapes, names, ns.mode, ns.cassettes is not None)
    packs: dict[str, seeds.Pack] = {}
    if ns.seeds is not None:
        if ns.mode == "replay":
            raise InfraError(Kind.USAGE, "--seeds loads emulators' state, and a replay runs no emulator (every server "
                             "answers from its cassette); use it with --mode live or rerun")
        packs = seeds.library(ns.seeds, names)
        print(f"decathlon: seed packs for {len(packs)} of {len(names)} task(s) from {ns.seeds}: "
              + ", ".join(f"{p.task} ({', '.join(p.emulators)})" for p in packs.values()), file=sys.stderr)
    ns.backend = _backend_for(ns)
    if ns.backend == "local" and ns.saas == "real" and ns.mode not in FROM_CASSETTE:
        from decathlon.backends.local import real_saas_note
        if note := real_saas_note():  # the agent is this very user: nothing keeps the keys from it
            print(f"decathlon: {note}", file=sys.stderr)
    backend = make_backend(ns.backend)
    if ns.mode not in ("replay",):  # a replay runs no script of the source's: any image serves it
        try:
            await backend.preflight(source)
        except BaseException:
            await backend.close()
            raise
    run_id = str(earlier.plan.get("run_id") or uuid.uuid4().hex[:12]) if earlier else uuid.uuid4().hex[:12]
    # The id `gc --run` needs, said before the first sandbox: a run killed outright (SIGKILL, the OOM killer,
    # a container stopped past its grace) releases nothing, and its sandboxes carry this id.
    print(f"decathlon: run {run_id} on {ns.backend}; if it is killed, `decathlon gc --backend {ns.backend} --run "
          f"{run_id}` removes what it leaves", file=sys.stderr)
    gate = asyncio.Semaphore(max(1, ns.concurrency))
    console = make_console(stderr=True)
    # A policy that calls no tool needs no server: what cannot run here is left out (and listed per
    # episode), so the task's preprocess and evaluator can still be checked.
    omit = ns.omit_unavailable_servers or ns.policy == "null"
    frozen = ns.frozen_clock if ns.frozen_clock is not None else ns.mode == "rerun"
    # Real SaaS accounts are state shared across the tasks of a conflict group; cassettes and the episode's
    # own emulators are not.
    live = ns.mode not in FROM_CASSETTE and ns.saas == "real"
    info = {"run_id": run_id, "source": str(source), "source_name": source.name, "policy": ns.policy,
            "backend": ns.backend, "mode": ns.mode}
    if earlier is not None:
        out_folder.check_same_run(earlier, info)
        print(f"decathlon: resuming the run in {ns.out}: {len(earlier.done)} of {len(names) * ns.repeats} planned "
              "episodes are done, the others run now", file=sys.stderr)
    elif ns.out is not None:
        write_atomic(ns.out / out_folder.RUN_FILE, json.dumps({**info, "repeats": ns.repeats, "launch_time": ns.launch_time,
                                                      "tasks": names}, indent=2) + "\n")

    async def one(task: str, repeat: int, progress: Callable[[str], None]) -> EpisodeResult:
        # the group's lock before a concurrency slot: a task waiting for its group holds no slot idle
        async with conflicts.hold(groups, task, live) as held, gate:
            cfg = EpisodeConfig(task=task, source=source, run_id=run_id, episode_id=uuid.uuid4().hex,
                                launch_time=ns.launch_time, max_turns=ns.max_turns, mode=ns.mode, out_dir=ns.out,
                                cassette=cassette_path(tapes, task) if ns.mode in FROM_CASSETTE else None,
                                omit_unavailable_servers=omit, frozen_clock=frozen, saas=ns.saas, seeds=packs.get(task),
                                repeat=repeat, repeat_folder=ns.repeats > 1, run_info=info, conflict_group=held.group,
                                conflict_wait=held.waited, progress=progress)
            try:
                result = await run_episode(cfg, backend, policy)
            except Exception as exc:  # noqa: BLE001 - one episode's bug must not cancel the others
                result = _internal_error(task, exc)
                result.repeat = repeat
            return result

    jobs: list[asyncio.Task[EpisodeResult]] = []
    try:
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=ns.json) as progress:
            done = earlier.done if earlier is not None else {}
            episodes = [(n, i) for i in range(1, ns.repeats + 1) for n in names if (n, i) not in done]
            bar = progress.add_task(f"{len(episodes)} episodes ({ns.policy}, {ns.backend})", total=len(episodes))
            phases = _Phases(progress, ns.repeats > 1)
            jobs += [asyncio.create_task(one(n, i, phases.reporter(n, i))) for n, i in episodes]
            for job in asyncio.as_completed(jobs):
                r = await job
                progress.advance(bar)
                phases.done(r.task, r.repeat)
                progress.console.print(_closing(r, ns.repeats > 1))
            results = sorted([*done.values(), *(j.result() for j in jobs)], key=lambda r: (r.repeat, names.index(r.task)))
    except asyncio.CancelledError:  # Ctrl-C or SIGTERM
        await _cancel_episodes(jobs)
        raise
    finally:
        await backend.close()  # a warm pool's unused containers go with the run
    if ns.json:
        for r in results:
            row = {"task": r.task, "repeat": r.repeat, "reward": r.reward, "pass": r.passed, "metrics": r.metrics,
                   "infra_error": r.infra_error, "failure": r.failure, "timings": r.timings,
                   "turns": r.turns, "tool_calls": r.tool_calls, "status": _outcome(r), "agent_status": r.status}
            if r.conflict_group is not None:
                row["conflict_group"], row["conflict_wait"] = r.conflict_group, r.conflict_wait
            if r.omitted_servers:
                row["omitted_servers"] = r.omitted_servers
            if r.replayed_servers is not None:  # a rerun: the real verdict beside the recorded one
                row["recorded_pass"] = r.recorded_pass
                row["replayed_servers"] = r.replayed_servers
            sys.stdout.write(json.dumps(row) + "\n")
    else:
        out = make_console()
        out.print(_table(results, ns.repeats, out.width))
        for paragraph in _errors(results, ns.repeats):
            out.print(paragraph)
        out.print(_summary_line(results), soft_wrap=True)
    return 1 if any(r.infra_error for r in results) else 0
