"""`python -m decathlon.emulators.fidelity --runs DIR`: replay the recorded runs in DIR against the emulators and
print the report (exit 1 when a replayed call disagrees)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from decathlon.emulators.fidelity import bigquery, report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m decathlon.emulators.fidelity", description=__doc__)
    parser.add_argument("--runs", type=Path, required=True, help="a folder of recorded runs, <task>.json each")
    parser.add_argument("--servers", type=Path, default=None,
                        help="the installed servers' folder (default: $DECATHLON_SERVERS_DIR or .servers)")
    parser.add_argument("--verbose", action="store_true", help="list the agreed calls too")
    args = parser.parse_args(argv)
    if not args.runs.is_dir():
        parser.error(f"{args.runs} is not a folder of runs")
    cases = bigquery.replay(args.runs, servers=args.servers)
    print(report.text("bigquery", cases, verbose=args.verbose))
    return 1 if any(c.verdict == "disagreed" for c in cases) else 0


if __name__ == "__main__":
    sys.exit(main())
