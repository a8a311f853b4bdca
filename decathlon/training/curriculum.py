"""A difficulty curriculum: tasks ordered easiest first by the pass rates of earlier runs.

The rates come from a results folder (run output or recorded runs, read by `decathlon.reports.report`), from
`decathlon report --json` output, from a plain `{task: rate}` JSON object, or from a CSV with columns
`task` and `pass_rate`.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

from decathlon.reports import report
from decathlon.errors import InfraError, Kind

EXPECTED = ("`decathlon report --json` output, a {task: rate} JSON object, a CSV with columns task,pass_rate, "
            "or a results folder")


def _bad(spec: Path, cause: str) -> InfraError:
    return InfraError(Kind.USAGE, f"curriculum {spec}: {cause}; expected {EXPECTED}")


def _is_rate(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def load_pass_rates(spec: Path) -> dict[str, float]:
    """Each task's pass rate in [0, 1] according to `spec` (see the module doc)."""
    spec = Path(spec)
    if spec.is_dir():
        try:
            rates = report.pass_rates([spec])
        except InfraError as exc:  # a folder that holds no results, or broken ones: the operator's to fix
            raise _bad(spec, exc.message) from exc
    elif not spec.is_file():
        raise _bad(spec, "no such file or folder")
    elif spec.suffix.lower() == ".json":
        rates = _from_json(spec)
    elif spec.suffix.lower() == ".csv":
        rates = _from_csv(spec)
    else:
        raise _bad(spec, f"unknown format {spec.suffix or '(no extension)'!r}, not .json or .csv")
    for task, rate in rates.items():
        if not (_is_rate(rate) and 0 <= rate <= 1):  # NaN fails the comparison too
            raise _bad(spec, f"the pass rate of {task!r} is {rate!r}, not a number in [0, 1]")
    if not rates:
        raise _bad(spec, "it rates no task (no graded episode)")
    return {task: float(rate) for task, rate in rates.items()}


def _from_json(spec: Path) -> dict[str, float]:
    try:
        data = json.loads(spec.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad(spec, f"not readable JSON ({exc})") from exc
    if isinstance(data, dict) and isinstance(data.get("runs"), list):
        return _from_report(spec, data["runs"])
    if isinstance(data, dict) and all(_is_rate(v) for v in data.values()):
        return dict(data)
    raise _bad(spec, "JSON of another shape")


def _from_report(spec: Path, runs: list) -> dict[str, float]:
    """A task's pass@1 averaged over the runs that graded it."""
    seen: dict[str, list[float]] = {}
    for run in runs:
        rows = run.get("tasks") if isinstance(run, dict) else None
        if not isinstance(rows, list):
            raise _bad(spec, "a run without a \"tasks\" list")
        for row in rows:
            if not (isinstance(row, dict) and isinstance(row.get("task"), str)
                    and (row.get("pass@1") is None or _is_rate(row["pass@1"]))):
                raise _bad(spec, f"a task row without \"task\" and a numeric or null \"pass@1\": {row!r}"[:300])
            if row.get("pass@1") is not None:
                seen.setdefault(row["task"], []).append(row["pass@1"])
    return {task: sum(values) / len(values) for task, values in seen.items()}


def _from_csv(spec: Path) -> dict[str, float]:
    try:
        with spec.open(newline="") as f:
            reader = csv.DictReader(f)
            if not {"task", "pass_rate"} <= set(reader.fieldnames or []):
                raise _bad(spec, f"CSV header {reader.fieldnames!r} lacks the columns task and pass_rate")
            rates: dict[str, float] = {}
            for row in reader:
                task, raw = (row.get("task") or "").strip(), (row.get("pass_rate") or "").strip()
                if not task or not raw:
                    raise _bad(spec, f"line {reader.line_num} has no task or no pass_rate")
                if task in rates:
                    raise _bad(spec, f"task {task!r} appears twice")
                try:
                    rates[task] = float(raw)
                except ValueError:
                    raise _bad(spec, f"line {reader.line_num}: pass_rate {raw!r} is not a number") from None
            return rates
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise _bad(spec, f"not a readable CSV ({exc})") from exc


def order_by_difficulty(names: list[str], rates: dict[str, float]) -> list[str]:
    """`names` easiest first (highest pass rate), ties by name. Tasks without a rate come last, by name:
    no evidence is not evidence of ease, and a task no earlier run graded is as likely to be hard."""
    rated = sorted((n for n in names if n in rates), key=lambda n: (-rates[n], n))
    return rated + sorted(n for n in names if n not in rates)
