"""`decathlon cassettes verify|diff`."""
from __future__ import annotations

import argparse
import difflib
import json
import sys

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
    # Compare bodies: the meta's hash and recorder naturally differ when contents do.
    lines = list(difflib.unified_diff(dumps(a).splitlines(), dumps(b).splitlines(), str(ns.a), str(ns.b), lineterm=""))
    print("\n".join(lines) if lines else "identical")
    return 1 if lines else 0
