"""`decathlon cassettes verify|diff`."""
from __future__ import annotations

import argparse
import difflib
import json
import sys
from typing import Any

from decathlon.recordings.cassettes import verify
from decathlon.tape.errors import CassetteError
from decathlon.tape.store import dumps, load


def cassettes_command(ns: argparse.Namespace) -> int:
    if ns.cassettes_command == "import-trajectories":
        from decathlon.recordings.importer import import_dir
        report = import_dir(ns.dir, ns.out)
        odd = {t: e["findings"] for t, e in report["tasks"].items() if e["findings"]}
        for task, findings in sorted(odd.items()):
            for kind, items in sorted(findings.items()):
                print(f"{task}: {kind}: {', '.join(items[:5])}{' …' if len(items) > 5 else ''}", file=sys.stderr)
        passes = sum(1 for e in report["tasks"].values() if e["pass"] is True)
        print(json.dumps({"tasks": len(report["tasks"]), "recorded_pass": passes, "with_findings": len(odd),
                          "unknown_to_manifest": report["unknown_to_manifest"], "out": str(ns.out)}))
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

