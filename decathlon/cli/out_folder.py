"""`decathlon run --out DIR` over a folder that already holds a run: refused, resumed or overwritten, never
silently mixed.

A run writes `run.json` (what it set out to do: source, policy, mode, tasks, repeats, launch time) before its
first episode, and one `result.json` per episode as each ends. `--resume` runs only the planned episodes that
left no result, or an infra error; `--overwrite` removes the earlier results first.
"""
from __future__ import annotations

import argparse
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from decathlon.contract.result import RESULT_FILE, RUN_FILE, EpisodeRecord
from decathlon.errors import InfraError, Kind

# What must be the same for a resumed run's episodes to be one run with the earlier ones.
SAME = ("source_name", "policy", "mode")


@dataclass
class Earlier:
    """A run found in --out: its plan, and the episodes of it that are done."""
    plan: dict[str, Any]
    done: dict[tuple[str, int], EpisodeRecord] = field(default_factory=dict)


def result_files(out: Path) -> list[Path]:
    return sorted(out.glob(f"*/{RESULT_FILE}")) + sorted(out.glob(f"*/repeat-*/{RESULT_FILE}"))


def prepare(ns: argparse.Namespace) -> Earlier | None:
    """Check --out against --resume/--overwrite before anything runs; with --resume, the earlier run's plan
    fills in what the command line leaves out (tasks, repeats, launch time, source)."""
    out: Path | None = ns.out
    if out is None:
        if ns.resume or ns.overwrite:
            raise InfraError(Kind.USAGE, f"--{'resume' if ns.resume else 'overwrite'} applies to an --out folder; name one")
        return None
    held = result_files(out) if out.is_dir() else []
    has_plan = (out / RUN_FILE).is_file()
    if ns.overwrite:
        _remove_results(out, held)
        return None
    if not ns.resume:
        if held or has_plan:
            raise InfraError(Kind.BAD_OUT, f"--out {out} already holds a run ({len(held)} episode result(s)). Pass "
                             "--resume to run only its episodes that have no result or an infra error, --overwrite to "
                             "replace it, or name a new folder")
        return None
    if not has_plan:
        raise InfraError(Kind.USAGE, f"--resume: {out} holds no {RUN_FILE}, so there is no run to resume (a run writes "
                         "it before its first episode); run without --resume")
    try:
        plan = json.loads((out / RUN_FILE).read_text(encoding="utf-8"))
        tasks, repeats = plan["tasks"], int(plan.get("repeats") or 1)
        if not isinstance(tasks, list) or not all(isinstance(t, str) for t in tasks) or repeats < 1:
            raise ValueError("tasks is not a list of names, or repeats is below 1")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InfraError(Kind.BAD_RESULTS, f"--resume: {out / RUN_FILE} cannot be read ({exc}); run again without "
                         "--resume into a new folder") from None
    asked = sorted(set(ns.tasks)) if ns.tasks else None
    if asked is not None and asked != sorted(set(tasks)):
        raise InfraError(Kind.USAGE, f"--resume: the run in {out} planned {len(tasks)} task(s), not the ones named; "
                         "name none (its own are taken) or resume into another folder")
    if ns.repeats not in (1, repeats):
        raise InfraError(Kind.USAGE, f"--resume: the run in {out} planned --repeats {repeats}, not {ns.repeats}")
    if ns.launch_time and plan.get("launch_time") and ns.launch_time != plan["launch_time"]:
        raise InfraError(Kind.USAGE, f"--resume: the run in {out} ran at --launch-time {plan['launch_time']!r}, not "
                         f"{ns.launch_time!r}; its episodes and these would not be one run")
    ns.tasks, ns.all, ns.repeats = list(tasks), False, repeats
    ns.launch_time = ns.launch_time or plan.get("launch_time")
    ns.source = ns.source or plan.get("source")
    done: dict[tuple[str, int], EpisodeRecord] = {}
    for path in held:
        try:
            rec = EpisodeRecord.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue  # unreadable: run again
        if rec.infra_error is None and rec.task in tasks:
            done[(rec.task, rec.repeat)] = rec
    return Earlier(plan, done)


def check_same_run(earlier: Earlier, info: dict[str, Any]) -> None:
    """A resumed run's episodes pool with the earlier ones only if they are the same run."""
    differs = [f"{k} {earlier.plan.get(k)!r} (now {info.get(k)!r})" for k in SAME if earlier.plan.get(k) != info.get(k)]
    if differs:
        raise InfraError(Kind.USAGE, f"--resume: this is not the run in the folder: it had {', '.join(differs)}; "
                         "resume with the same --source, --policy and --mode, or use a new folder")


def _remove_results(out: Path, held: list[Path]) -> None:
    """The earlier run's results and plan, and nothing else of the folder."""
    folders = sorted({p.parent for p in held}, key=lambda p: len(p.parts), reverse=True)
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
        parent = folder.parent
        if parent != out and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
    (out / RUN_FILE).unlink(missing_ok=True)
