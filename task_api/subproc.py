"""Running a task's own scripts (preprocess, evaluator): bounded, in their own process group."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class ScriptRun:
    exit_code: int | None  # None: killed at the timeout
    output: str
    elapsed: float


def task_python() -> str:
    """The interpreter for a task's scripts (a user's Toolathlon checkout may need its own env)."""
    return os.environ.get("DECATHLON_TASK_PYTHON") or sys.executable


def run_module(module: str, args: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None,
               prefix: list[str] | None = None) -> ScriptRun:
    """`prefix`: who runs it (task_api.users: the grader, where users are separated)."""
    start = time.monotonic()
    full_env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([*(prefix or []), task_python(), "-m", module, *args], cwd=str(cwd), env=full_env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        code = None
    return ScriptRun(code, out.decode("utf-8", "replace"), time.monotonic() - start)
