"""`decathlon cassettes verify|diff`."""
from __future__ import annotations

import argparse
import difflib
import sys

from decathlon.cassettes import verify
from mocks.cassette.errors import CassetteError
from mocks.cassette.store import dumps, load


def cassettes_command(ns: argparse.Namespace) -> int:
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
