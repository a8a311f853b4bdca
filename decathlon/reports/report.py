"""`decathlon report`: Pass@1 (mean ± std over repeats), Pass@k and Pass^k, turns, tool calls and phase
timings, per task and overall, from run folders and recorded runs.

Inputs, each a folder:
- a `decathlon run --out DIR` folder: `<task>/result.json` (one repeat) or `<task>/repeat-<i>/result.json`,
  and `run.json` (what ran: source, policy, backend, mode, repeats);
- recorded runs of a model: `<task>.json` each, `{"pass", "messages", "failure"?}` (Toolathlon's
  published trajectories);
- the output of `decathlon cassettes import-trajectories` (its `import-report.json`).

Folders of the same run (same source, policy and mode) pool their episodes as further repeats; different
runs are reported side by side. One folder holding results of different runs is an error: their rates
would be meaningless together.

Infra errors are counted apart and excluded from every rate. A run that was graded, or reached its turn
cap (pass null), is a graded episode; as in Toolathlon, pass null counts as not passed.
"""
from __future__ import annotations

import json
import math
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from decathlon.errors import InfraError, Kind
from decathlon.checkout.tasks import IMPORT_REPORT, task_name_problem
from decathlon.contract.result import RESULT_FILE, RUN_FILE
from decathlon.tape import nesting

NOTE = "Infra errors are counted apart and excluded from every rate."
PHASES = ("acquire", "setup", "agent", "evaluate", "release")
EXPECTED = ("`decathlon run --out DIR` folders (<task>/result.json), recorded runs (<task>.json with "
            "\"pass\" and \"messages\"), or `decathlon cassettes import-trajectories` output (import-report.json)")


@dataclass
class Episode:
    task: str
    repeat: int
    passed: bool | None
    reward: float = 0.0
    status: str | None = None
    infra_error: dict | None = None
    failure: dict | None = None
    turns: int = 0
    tool_calls: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    conflict_group: str | None = None
    conflict_wait: float = 0.0
    ref: str | None = None  # where its trajectory is (a run's episode folder, or a recorded run's file)

    @property
    def graded(self) -> bool:
        return self.infra_error is None

    def to_json(self) -> dict:
        return {"repeat": self.repeat, "pass": self.passed, "reward": self.reward, "status": self.status,
                "infra_error": self.infra_error, "failure": self.failure, "turns": self.turns,
                "tool_calls": self.tool_calls, "timings": self.timings, "metrics": self.metrics,
                "conflict_wait": self.conflict_wait, "ref": self.ref}


@dataclass(frozen=True)
class RunKey:
    """What makes results one run: episodes under one key pool as repeats."""
    kind: str  # "run" | "recorded"
    source: str
    policy: str | None
    mode: str | None


@dataclass
class Loaded:
    key: RunKey
    folder: Path
    backend: str | None
    repeats: int | None
    episodes: list[Episode]
    skipped: list[str] = field(default_factory=list)
    planned: int | None = None  # episodes the run set out to make (run.json's tasks × repeats), if it says
    missing: list[str] = field(default_factory=list)  # "task #repeat" of those with no result


# ---------------------------------------------------------------------------------------------- loading

def load_folder(folder: Path, skip_broken: bool = False) -> list[Loaded]:
    """Every result in one folder, as one run (or, with --skip-broken, without the unreadable files)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InfraError(Kind.USAGE, f"{folder} is not a folder; give {EXPECTED}")
    if (folder / IMPORT_REPORT).is_file():
        return [_load_import(folder, skip_broken)]
    # <task>/result.json (one repeat), <task>/repeat-<i>/result.json (--repeats), <task>/<trace id>/result.json
    # (the verifiers taskset's --out)
    results = sorted(folder.glob(f"*/{RESULT_FILE}")) + sorted(folder.glob(f"*/*/{RESULT_FILE}"))
    if results:
        return [_load_run(folder, results, skip_broken)]
    recorded = sorted(p for p in folder.glob("*.json") if p.name != RUN_FILE)
    if recorded:
        return [_load_recorded(folder, recorded, skip_broken)]
    raise InfraError(Kind.NO_RESULTS, f"{folder} holds no results; give {EXPECTED}")


def _read_json(path: Path, what: str) -> dict:
    try:
        data = nesting.loads(path.read_bytes())
    except nesting.TooDeep as exc:
        raise _Broken(f"not a readable {what} ({exc})") from None
    except (OSError, ValueError) as exc:
        raise _Broken(f"not a readable {what} ({type(exc).__name__}: {exc})") from None
    if not isinstance(data, dict):
        raise _Broken(f"not a readable {what} (a JSON {type(data).__name__}, not an object)")
    return data


class _Broken(Exception):
    """What is wrong with one file; whoever reads the file names it."""


def _broken_error(folder: Path, broken: list[str]) -> InfraError:
    shown = "; ".join(broken[:5]) + (f"; and {len(broken) - 5} more" if len(broken) > 5 else "")
    return InfraError(Kind.BAD_RESULTS, f"{len(broken)} result file(s) under {folder} cannot be used: {shown}. "
                      "A run killed while writing leaves such files, and an edit by hand can: re-run those tasks, "
                      "or pass --skip-broken to report without them (the report lists what it skipped)")


# Every field the report reads from a file is checked here: a file of the wrong shape is broken, named
# with its field, never a TypeError from deep inside the numbers (or the page).

def _json_kind(value: object) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array",
            dict: "an object"}.get(type(value), "null")


def _typed(d: dict, key: str, kinds: tuple[type, ...], want: str) -> Any:
    """d[key] if it is absent, null or one of `kinds` (a boolean is never a number here); else broken."""
    value = d.get(key)
    if value is None or (isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)):
        return value
    raise _Broken(f"`{key}` is {_json_kind(value)}, not {want}")


def _count(d: dict, key: str) -> int:
    value = _typed(d, key, (int,), "a count")
    if value is not None and value < 0:
        raise _Broken(f"`{key}` is negative")
    return value or 0


def _number(d: dict, key: str, finite: bool) -> float:
    value = _typed(d, key, (int, float), "a number")
    if finite and value is not None and not math.isfinite(value):
        raise _Broken(f"`{key}` is not a finite number")
    return float(value or 0.0)


def _numbers(d: dict, key: str, finite: bool) -> dict[str, float]:
    table = _typed(d, key, (dict,), "an object of numbers") or {}
    for name, v in table.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (finite and not math.isfinite(v)):
            raise _Broken(f"`{key}.{name}` is {_json_kind(v)}, not a{' finite' if finite else ''} number")
    return {k: float(v) for k, v in table.items()}


def _error_of(d: dict, key: str) -> dict | None:
    """An infra error or failure: null, or {kind, message?, phase?} of strings (the page shows them as text)."""
    err = _typed(d, key, (dict,), "an object {kind, message}")
    if err is not None:
        if not isinstance(err.get("kind"), str):
            raise _Broken(f"`{key}.kind` is {_json_kind(err.get('kind'))}, not a string")
        for part in ("message", "phase"):
            if not isinstance(err.get(part), (str, type(None))):
                raise _Broken(f"`{key}.{part}` is {_json_kind(err[part])}, not a string")
    return err


def _run_info(d: dict) -> dict:
    """What ran (run.json, or a result's `run`): its names are strings, its repeats a count."""
    for key in ("source", "source_name", "policy", "backend", "mode"):
        _typed(d, key, (str,), "a string")
    if _typed(d, "repeats", (int,), "a count") is not None and d["repeats"] < 1:
        raise _Broken("`repeats` is below 1")
    return d


def _load_run(folder: Path, results: list[Path], skip_broken: bool) -> Loaded:
    meta: dict = {}  # run.json: what ran, for results written before each result said so itself
    broken: list[str] = []
    if (folder / RUN_FILE).is_file():
        try:
            meta = _run_info(_read_json(folder / RUN_FILE, "run description"))
        except _Broken as exc:
            broken.append(f"{folder / RUN_FILE}: {exc}")
            meta = {}
    episodes, backends = [], set()
    keys: Counter[RunKey] = Counter()
    for path in results:
        try:
            r = _read_json(path, "result file")
            ep = episode_of(r, str(path.parent))
            run = _run_info(_typed(r, "run", (dict,), "an object") or meta)
        except _Broken as exc:
            broken.append(f"{path}: {exc}")
            continue
        keys[RunKey("run", str(run.get("source_name") or run.get("source") or folder.name),
                    run.get("policy"), run.get("mode"))] += 1
        if run.get("backend"):
            backends.add(run["backend"])
        episodes.append(ep)
    if broken and not skip_broken:
        raise _broken_error(folder, broken)
    if len(keys) > 1:
        kinds = ", ".join(f"{n} of source {k.source}, policy {k.policy}, mode {k.mode}"
                          for k, n in sorted(keys.items(), key=lambda kn: repr(kn[0])))
        raise InfraError(Kind.MIXED_RESULTS, f"{folder} mixes the results of different runs ({kinds}); their "
                         "rates mean nothing together. Give each run its own --out folder and report the "
                         "folders side by side: decathlon report DIR1 DIR2")
    if not episodes:
        raise InfraError(Kind.NO_RESULTS, f"{folder} holds no readable result; give {EXPECTED}")
    _number_repeats(episodes)
    key = next(iter(keys))
    planned, missing = _planned(meta, episodes)
    return Loaded(key, folder, "+".join(sorted(backends)) or meta.get("backend"), meta.get("repeats"), episodes,
                  broken, planned, missing)


def _planned(meta: dict, episodes: list[Episode]) -> tuple[int | None, list[str]]:
    """What the run set out to do (run.json: tasks × repeats) and which of those episodes left no result: a
    run killed half-way must not read as a smaller, complete one."""
    tasks, repeats = meta.get("tasks"), meta.get("repeats") or 1
    if not isinstance(tasks, list) or not all(isinstance(t, str) for t in tasks):
        return None, []
    have = {(e.task, e.repeat) for e in episodes}
    plan = [(t, r) for t in sorted(set(tasks)) for r in range(1, repeats + 1)]
    return len(plan), [f"{t} #{r}" if repeats > 1 else t for t, r in plan if (t, r) not in have]


def _number_repeats(episodes: list[Episode]) -> None:
    """Results that carry no repeat (verifiers rollouts) are numbered per task in folder order."""
    seen: dict[str, int] = defaultdict(int)
    for e in episodes:
        if e.repeat == 0:
            seen[e.task] += 1
            e.repeat = seen[e.task]


def episode_of(r: dict, ref: str | None = None) -> Episode:
    """One episode from a result as `decathlon run` writes it (EpisodeResult.to_json), or a verifiers rollout's."""
    task = r.get("task")
    if not isinstance(task, str) or "reward" not in r:
        raise _Broken("not a decathlon result (no task or reward)")
    return Episode(task=task, repeat=_count(r, "repeat"), passed=_typed(r, "pass", (bool,), "true, false or null"),
                   reward=_number(r, "reward", finite=False), status=_typed(r, "status", (str,), "a string"),
                   infra_error=_error_of(r, "infra_error"), failure=_error_of(r, "failure"),
                   turns=_count(r, "turns"), tool_calls=_count(r, "tool_calls"),
                   # an evaluator's metrics (and a reward weighing them) may be NaN; our own timings never are
                   timings=_numbers(r, "timings", finite=True), metrics=_numbers(r, "metrics", finite=False),
                   conflict_group=_typed(r, "conflict_group", (str,), "a string"),
                   conflict_wait=_number(r, "conflict_wait", finite=True), ref=ref)


def _recorded_episode(task: str, run: dict, ref: str) -> Episode:
    """One recorded run ({"pass", "messages", "failure"?}); broken if a field has the wrong type."""
    from decathlon.recordings.importer import partial_credit
    if "pass" not in run:
        raise _Broken("not a recorded run (no \"pass\" and \"messages\")")
    passed = _typed(run, "pass", (bool,), "true, false or null")
    failure = _typed(run, "failure", (str,), "a string")
    messages = _typed(run, "messages", (list,), "a list of messages")
    if messages is None:
        raise _Broken("not a recorded run (no \"pass\" and \"messages\")")
    turns = calls = 0
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise _Broken(f"`messages[{i}]` is {_json_kind(m)}, not an object")
        turns += m.get("role") == "assistant"
        tool_calls = m.get("tool_calls")
        if not isinstance(tool_calls, (list, type(None))):
            raise _Broken(f"`messages[{i}].tool_calls` is {_json_kind(tool_calls)}, not a list")
        calls += len(tool_calls or [])
    return Episode(task=task, repeat=1, passed=passed, reward=1.0 if passed else 0.0,
                   status="recorded", turns=turns, tool_calls=calls, metrics=partial_credit(failure), ref=ref)


def _load_recorded(folder: Path, files: list[Path], skip_broken: bool) -> Loaded:
    episodes, broken = [], []
    for path in files:
        try:
            episodes.append(_recorded_episode(path.stem, _read_json(path, "recorded run"), str(path)))
        except _Broken as exc:
            broken.append(f"{path}: {exc}")
    if broken and not skip_broken:
        raise _broken_error(folder, broken)
    if not episodes:
        raise InfraError(Kind.NO_RESULTS, f"{folder} holds no readable recorded run; give {EXPECTED}")
    return Loaded(RunKey("recorded", folder.name, None, None), folder, None, 1, episodes, broken)


def _load_import(folder: Path, skip_broken: bool) -> Loaded:
    """An import's tasks, with the verdicts and conversations it carries (no run needed)."""
    from decathlon.recordings.cassettes import trajectory_path
    report = folder / IMPORT_REPORT
    try:
        rep = _read_json(report, "import report")
        tasks = _typed(rep, "tasks", (dict,), "an object of tasks") or {}
    except _Broken as exc:
        raise InfraError(Kind.BAD_RESULTS, f"{report}: {exc}; re-run `decathlon cassettes import-trajectories`") from None
    episodes, broken = [], []
    for task in sorted(tasks):
        # The name becomes a file name here: checked before it is one (an edited report may say "../x").
        problem = task_name_problem(task)
        if problem is not None:
            broken.append(f"{report}: {problem}")
            continue
        try:
            entry = _typed(tasks, task, (dict,), "an object") or {}
            run = {"pass": _typed(entry, "pass", (bool,), "true, false or null"), "messages": []}
        except _Broken as exc:
            broken.append(f"{report}: task {task}: {exc}")
            continue
        ref = trajectory_path(folder / "cassettes", task)
        try:
            if ref.exists():  # the verdict is the report's; a missing conversation only leaves no counts
                run["messages"] = _messages_of(_read_json(ref, "trajectory"))
            episodes.append(_recorded_episode(task, run, str(ref)))
        except _Broken as exc:
            broken.append(f"{ref}: {exc}")
    if broken and not skip_broken:
        raise _broken_error(folder, broken)
    if not episodes:
        raise InfraError(Kind.NO_RESULTS, f"{report} lists no task; give {EXPECTED}")
    source = Path(str(rep.get("source") or folder.name)).name
    return Loaded(RunKey("recorded", source, None, None), folder, None, 1, episodes, broken)


def _messages_of(doc: object) -> list:
    if isinstance(doc, dict):
        doc = doc.get("messages")
    return doc if isinstance(doc, list) else []


# ----------------------------------------------------------------------------------------- the numbers

def pass_at_k(n: int, c: int, k: int) -> float | None:
    """The unbiased estimator: the chance that at least one of k episodes drawn from n passes."""
    if n < k or k < 1:
        return None
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """Pass^k: the chance that all k episodes drawn from n pass."""
    if n < k or k < 1:
        return None
    return math.comb(c, k) / math.comb(n, k)


def _mean(xs: list[float]) -> float | None:
    return round(statistics.fmean(xs), 6) if xs else None


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def _timings(eps: list[Episode]) -> dict[str, dict[str, float]]:
    out = {}
    for phase in PHASES:
        xs = [e.timings[phase] for e in eps if phase in e.timings]
        if xs:
            out[phase] = {"median": round(statistics.median(xs), 4), "mean": round(statistics.fmean(xs), 4)}
    return out


def _metrics(eps: list[Episode]) -> dict[str, dict[str, Any]]:
    """Each dense metric's mean over the episodes whose evaluator reports it (never over those that lack it,
    which would read as 0), with how many that is: a metric only some tasks define is not diluted by the rest."""
    names = sorted({m for e in eps for m in e.metrics})
    out = {}
    for name in names:
        xs = [e.metrics[name] for e in eps if name in e.metrics and math.isfinite(e.metrics[name])]
        out[name] = {"mean": _mean(xs), "episodes": len(xs), "of": len(eps)}
    return out


def summarise(loaded: list[Loaded]) -> dict:
    """One run's numbers from the folders that hold it; repeats of later folders follow those of earlier."""
    episodes: list[Episode] = []
    offset = 0
    for part in loaded:
        top = max((e.repeat for e in part.episodes), default=0)
        for e in part.episodes:
            e.repeat += offset
            episodes.append(e)
        offset += max(top, part.repeats or 0)
    by_task: dict[str, list[Episode]] = defaultdict(list)
    for e in episodes:
        by_task[e.task].append(e)
    graded = [e for e in episodes if e.graded]
    # k: the repeats each task was given (infra errors included, so a short task shows as short of k)
    k = max((len(eps) for eps in by_task.values()), default=1)
    tasks: list[dict[str, Any]] = []
    for task in sorted(by_task):
        eps = sorted(by_task[task], key=lambda e: e.repeat)
        ok = [e for e in eps if e.graded]
        c = sum(1 for e in ok if e.passed is True)
        tasks.append({"task": task, "episodes": len(eps), "graded": len(ok), "passed": c,
                      "infra_errors": len(eps) - len(ok),
                      "pass@1": _round(c / len(ok)) if ok else None,
                      "pass@k": _round(pass_at_k(len(ok), c, k)), "pass^k": _round(pass_hat_k(len(ok), c, k)),
                      "avg_turns": _mean([e.turns for e in ok]), "avg_tool_calls": _mean([e.tool_calls for e in ok]),
                      "timings": {p: v["median"] for p, v in _timings(ok).items()},
                      "metrics": {m: v["mean"] for m, v in _metrics(ok).items()},
                      "runs": [e.to_json() for e in eps]})
    per_repeat = []
    for r in sorted({e.repeat for e in graded}):
        xs = [1.0 if e.passed is True else 0.0 for e in graded if e.repeat == r]
        per_repeat.append(round(statistics.fmean(xs), 6))
    at_k = [t["pass@k"] for t in tasks if t["pass@k"] is not None]
    hat_k = [t["pass^k"] for t in tasks if t["pass^k"] is not None]
    conflicts: dict[str, list[Episode]] = defaultdict(list)
    for e in episodes:
        if e.conflict_group and e.conflict_wait > 0:
            conflicts[e.conflict_group].append(e)
    first = loaded[0]
    backends = sorted({p.backend for p in loaded if p.backend})
    return {
        "label": _label(first.key, backends), "kind": first.key.kind, "source": first.key.source,
        "policy": first.key.policy, "backend": "+".join(backends) or None, "mode": first.key.mode,
        "folders": [str(p.folder) for p in loaded], "k": k,
        "episodes": len(episodes), "graded": len(graded), "infra_errors": len(episodes) - len(graded),
        "passed": sum(1 for e in graded if e.passed is True),
        "pass@1": {"mean": _mean(per_repeat),
                   "std": round(statistics.stdev(per_repeat), 6) if len(per_repeat) > 1 else None,
                   "per_repeat": per_repeat},
        "pass@k": _mean(at_k), "pass^k": _mean(hat_k),
        # tasks whose graded episodes are fewer than k (infra errors) have no Pass@k; say how many
        "tasks_short_of_k": sum(1 for t in tasks if t["graded"] and t["pass@k"] is None),
        "avg_turns": _mean([e.turns for e in graded]), "avg_tool_calls": _mean([e.tool_calls for e in graded]),
        "timings": _timings(graded),
        "metrics": _metrics(graded),
        "conflicts": [{"group": g, "waited_episodes": len(es), "wait_seconds": round(sum(e.conflict_wait for e in es), 3)}
                      for g, es in sorted(conflicts.items())],
        "skipped": [s for p in loaded for s in p.skipped],
        # planned episodes with no result (a run interrupted): said, never silently a smaller run
        "planned": sum(p.planned for p in loaded) if all(p.planned is not None for p in loaded) else None,
        "missing": [f"{p.folder}: {m}" for p in loaded for m in p.missing],
        "tasks": tasks,
    }


def _label(key: RunKey, backends: list[str]) -> str:
    if key.kind == "recorded":
        return f"recorded · {key.source}"
    parts = [key.source, key.policy or "?"] + (["+".join(backends)] if backends else [])
    if key.mode and key.mode not in ("live", key.policy):  # "replay · replay" says nothing twice
        parts.append(key.mode)
    return " · ".join(parts)


def build_report(paths: list[Path], skip_broken: bool = False) -> dict:
    if not paths:
        raise InfraError(Kind.USAGE, f"name at least one folder: {EXPECTED}")
    # The same episodes named twice are counted once, and said: `report D D`, `report D D/`, a link to D, or a
    # folder of recorded runs beside its own import (an import's episodes are those runs).
    seen: dict[Path, Path] = {}  # a folder's real path, or the real path an import was made from → as named
    duplicates: list[str] = []
    groups: dict[RunKey, list[Loaded]] = {}
    for path in paths:
        real = Path(path).resolve()
        if real in seen:
            duplicates.append(f"{path}: the same episodes as {seen[real]}, counted once")
            continue
        parts = load_folder(Path(path), skip_broken)
        origins = [o for o in map(_import_origin, parts) if o is not None]
        if any(o in seen for o in origins):
            duplicates.append(f"{path}: the same episodes as {seen[origins[0]]}, counted once")
            continue
        for key in (real, *origins):
            seen[key] = Path(path)
        for part in parts:
            groups.setdefault(part.key, []).append(part)
    return {"note": NOTE, "runs": [summarise(parts) for parts in groups.values()], "duplicates": duplicates}


def _import_origin(part: Loaded) -> Path | None:
    """The folder of recorded runs an import was made from, as a real path (None for anything else)."""
    if part.key.kind != "recorded" or not (part.folder / IMPORT_REPORT).is_file():
        return None
    try:
        source = json.loads((part.folder / IMPORT_REPORT).read_text(encoding="utf-8")).get("source")
    except (OSError, ValueError, AttributeError):
        return None
    return Path(source).resolve() if isinstance(source, str) and source else None


def summarise_results(results: list[dict]) -> dict:
    """The numbers of results held in memory (a run that has just ended), as summarise gives them."""
    return summarise([Loaded(RunKey("run", "", None, None), Path("."), None, None, [episode_of(r) for r in results])])


def pass_rates(paths: list[Path]) -> dict[str, float]:
    """Task → pass rate over graded episodes of every run in the folders (a curriculum's evidence)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for run in build_report(paths)["runs"]:
        for t in run["tasks"]:
            counts[t["task"]][0] += t["passed"]
            counts[t["task"]][1] += t["graded"]
    return {task: c / n for task, (c, n) in sorted(counts.items()) if n}


def trajectory(ref: str | None) -> dict:
    """An episode's conversation and evaluator output, read when a page shows it (never for the numbers)."""
    out: dict = {"messages": [], "evaluator_output": ""}
    if not ref:
        return out
    path = Path(ref)
    try:
        if path.is_dir():  # a run's episode folder
            if (path / "messages.json").is_file():
                out["messages"] = _messages_of(nesting.loads((path / "messages.json").read_bytes()))
            if (path / "eval_output.txt").is_file():
                out["evaluator_output"] = (path / "eval_output.txt").read_text(encoding="utf-8", errors="replace")
        elif path.is_file():  # a recorded run, or an import's trajectory
            doc = nesting.loads(path.read_bytes())
            out["messages"] = _messages_of(doc)
            if isinstance(doc, dict) and isinstance(doc.get("failure"), str):
                out["evaluator_output"] = doc["failure"]
    except (OSError, ValueError) as exc:  # ValueError: not JSON, or nested too deeply (nesting.TooDeep)
        out["evaluator_output"] = f"(the trajectory at {ref} cannot be read: {exc})"
    return out
