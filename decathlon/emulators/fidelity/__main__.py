"""`python -m decathlon.emulators.fidelity --runs DIR [--emulator NAME …]`: replay the recorded runs in DIR against
the emulators and print the report, per emulator (exit 1 when a replayed call disagrees that known_gaps does not
list)."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from decathlon.emulators.fidelity import bigquery, canvas, gcplogging, known_gaps, report, snowflake, woocommerce, \
    workspace

REPLAYS: dict[str, Callable[..., list[Any]]] = {
    "bigquery": bigquery.replay, "canvas": canvas.replay, "gcplogging": gcplogging.replay,
    "snowflake": snowflake.replay, "woocommerce": woocommerce.replay, "workspace": workspace.replay}
# What each emulator is known to answer otherwise than its vendor did, with why: not a failure of this command.
GAPS: dict[str, dict[str, str]] = {
    "bigquery": known_gaps.BIGQUERY, "canvas": known_gaps.CANVAS, "gcplogging": known_gaps.GCPLOGGING,
    "snowflake": known_gaps.SNOWFLAKE, "woocommerce": known_gaps.WOOCOMMERCE, "workspace": known_gaps.WORKSPACE}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m decathlon.emulators.fidelity", description=__doc__)
    parser.add_argument("--runs", type=Path, required=True, help="a folder of recorded runs, <task>.json each")
    parser.add_argument("--servers", type=Path, default=None,
                        help="the installed servers' folder (default: $DECATHLON_SERVERS_DIR or .servers)")
    parser.add_argument("--emulator", action="append", choices=sorted(REPLAYS),
                        help="only this emulator (repeatable; default: every one)")
    parser.add_argument("--verbose", action="store_true", help="list the agreed calls too")
    args = parser.parse_args(argv)
    if not args.runs.is_dir():
        parser.error(f"{args.runs} is not a folder of runs")
    disagreed = False
    for name in args.emulator or sorted(REPLAYS):
        cases = REPLAYS[name](args.runs, servers=args.servers)
        print(report.text(name, cases, verbose=args.verbose) + "\n", flush=True)
        disagreed |= any(c.verdict == "disagreed" and c.exchange.name not in GAPS[name] for c in cases)
    return 1 if disagreed else 0


if __name__ == "__main__":
    sys.exit(main())
