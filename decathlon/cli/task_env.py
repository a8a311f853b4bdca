"""`decathlon task-env`: build a checkout's task environment and say how to use it."""
from __future__ import annotations

import argparse
import json
import sys

from decathlon.checkout import portable_python

from decathlon.checkout import task_env
from decathlon.checkout.tasks import resolve_source


def task_env_command(ns: argparse.Namespace) -> int:
    source = resolve_source(ns.source)

    def say(line: str) -> None:
        print(f"[task-env] {line}", file=sys.stderr, flush=True)
    report = task_env.build(source, portable_python.resolve(ns.python, say), ns.dir, say)
    if ns.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(f"task environment: {report.venv} (Python {report.python_version}, {len(report.installed)} packages "
              f"from uv.lock)")
        for s in report.skipped:
            print(f"  skipped {s['package']}=={s['version']}: {s['why']}")
        print(f"use it with: export DECATHLON_TASK_PYTHON={report.venv}/bin/python")
    return 0
