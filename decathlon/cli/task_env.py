"""`decathlon task-env`: build a checkout's task environment and say how to use it."""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from decathlon.checkout import portable_python

from decathlon.checkout import task_env
from decathlon.checkout.tasks import resolve_source


def required_minor(source: Path) -> tuple[int, int] | None:
    """The oldest Python the checkout's pyproject accepts (`requires-python`: ==3.12.11, >=3.12, ~=3.12…), or None."""
    try:
        text = (source / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(r'^requires-python\s*=\s*"[^"\d]*(\d+)\.(\d+)', text, re.MULTILINE)
    return (int(m.group(1)), int(m.group(2))) if m else None


def default_python(source: Path, say: Callable[[str], None], current: tuple[int, int] = sys.version_info[:2]) -> str:
    """No --python: this interpreter where it is new enough for the checkout, else a version that is (3.12 if this
    machine has one, else the portable 3.13), said, never a silent build on one its scripts cannot parse."""
    need = required_minor(source)
    if need is None or current >= need:
        return sys.executable
    spec = f"{need[0]}.{need[1]}"
    on_path = shutil.which(f"python{spec}")
    if on_path is None or not portable_python.runs(on_path):  # a pyenv shim of a version not selected does not
        spec = portable_python.VERSION
    say(f"the checkout asks for Python >= {need[0]}.{need[1]} (its requires-python) and this interpreter is "
        f"{current[0]}.{current[1]}: building on Python {spec} (--python to choose)")
    return spec


def task_env_command(ns: argparse.Namespace) -> int:
    source = resolve_source(ns.source)

    def say(line: str) -> None:
        print(f"[task-env] {line}", file=sys.stderr, flush=True)
    python = ns.python or default_python(source, say)
    report = task_env.build(source, portable_python.resolve(python, say), ns.dir, say)
    if ns.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(f"task environment: {report.venv} (Python {report.python_version}, {len(report.installed)} packages "
              f"from uv.lock)")
        for s in report.skipped:
            print(f"  skipped {s['package']}=={s['version']}: {s['why']}")
        print(f"use it with: export DECATHLON_TASK_PYTHON={report.venv}/bin/python")
    return 0
