"""`decathlon cassettes verify|diff`."""
from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections import Counter
from typing import Any, Iterable

from decathlon.errors import InfraError, Kind

from decathlon.recordings.cassettes import verify
from decathlon.tape.errors import CassetteError
from decathlon.tape.store import dumps, load


def cassettes_command(ns: argparse.Namespace) -> int:
    if ns.cassettes_command == "import-trajectories":
        from decathlon.recordings.importer import import_dir
        report = import_dir(ns.dir, ns.out, _launch_times(ns))
        odd = {t: e["findings"] for t, e in report["tasks"].items() if e["findings"]}
        for task, findings in sorted(odd.items()):
            for kind, items in sorted(findings.items()):
                print(f"{task}: {kind}: {', '.join(items[:5])}{' …' if len(items) > 5 else ''}", file=sys.stderr)
        launches = {t: e["launch"] for t, e in report["tasks"].items()}
        blind = sorted(t for t, launch in launches.items() if launch["from"] == "default")
        if blind:
            print(f"nothing in the outputs of {len(blind)} run(s) shows when they ran; imported at the default launch time "
                  f"{launches[blind[0]]['launch_time']} (--launch-time TASK=TIME names one): {', '.join(blind)}",
                  file=sys.stderr)
        passes = sum(1 for e in report["tasks"].values() if e["pass"] is True)
        print(json.dumps({"tasks": len(report["tasks"]), "recorded_pass": passes, "with_findings": len(odd),
                          "unknown_to_manifest": report["unknown_to_manifest"],
                          "launch_time_from": _counts(launch["from"] for launch in launches.values()),
                          "launch_days": _counts(launch["launch_time"][:10] for launch in launches.values()),
                          "out": str(ns.out)}))
        return 0
    if ns.cassettes_command == "verify":
        problems = verify(ns.paths)
        for p in problems:
            print(p, file=sys.stderr)
        print(f"{'FAIL' if problems else 'ok'}: {len(problems)} problem(s)")
        return 1 if problems else 0
    try:
        a, b = load(ns.a), load(ns.b)
    except CassetteError as exc:
        print(f"decathlon: error: {exc.message}", file=sys.stderr)
        return 2
    if not ns.timings:
        a, b = _without_timings(a), _without_timings(b)
    lines = list(difflib.unified_diff(dumps(a).splitlines(), dumps(b).splitlines(), str(ns.a), str(ns.b), lineterm=""))
    print("\n".join(lines) if lines else "identical")
    return 1 if lines else 0


def _counts(values: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))


def _launch_times(ns: argparse.Namespace) -> dict[str, str]:
    """--launch-times FILE, then each --launch-time TASK=TIME over it."""
    from decathlon.recordings.launch_evidence import parse_override
    given: dict[str, str] = {}
    if ns.launch_times is not None:
        try:
            raw = json.loads(ns.launch_times.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InfraError(Kind.USAGE, f"--launch-times {ns.launch_times}: {exc}") from None
        if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
            raise InfraError(Kind.USAGE, f"--launch-times {ns.launch_times}: a JSON object of task → \"YYYY-MM-DD HH:MM:SS\"")
        given.update(raw)
    for item in ns.launch_time:
        try:
            task, when = parse_override(item)
        except ValueError as exc:
            raise InfraError(Kind.USAGE, f"--launch-time {exc}") from None
        given[task] = when
    return given


# What differs between any two recordings of the same calls: how long each took, and so the seal over them.
TIMING_KEYS = frozenset({"elapsed_ms"})


def _without_timings(value: Any) -> Any:
    """The cassette with its timings (and the content hash that covers them) left out: `diff` then shows what
    was recorded differently, not that two recordings took different times."""
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items()
                if k not in TIMING_KEYS and k != "content_hash"}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value

