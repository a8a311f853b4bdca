"""Running a task's own scripts (preprocess, evaluator): bounded, in their own process group."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from task_api.clock import behind


@dataclass
class ScriptRun:
    exit_code: int | None  # None: killed at the timeout
    output: str
    elapsed: float
    pgid: int = 0  # its process group, where whatever it left running in the background still is


def task_python() -> str:
    """The interpreter for a task's scripts (a user's Toolathlon checkout may need its own env)."""
    return os.environ.get("DECATHLON_TASK_PYTHON") or sys.executable


def newer_python_hint(output: str) -> str | None:
    """Toolathlon pins Python 3.12; five of its evaluators use PEP 701 f-strings and do not even parse
    on 3.11. A SyntaxError on a line with an f-string, on an older task interpreter, is that, said
    plainly (the line is in a traceback, and in what the preflight prints)."""
    if "SyntaxError" not in output or not _FSTRING.search(output):
        return None
    try:
        probe = subprocess.run([task_python(), "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True,
                               text=True, timeout=30)
        major, minor = (int(x) for x in probe.stdout.split())
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    if (major, minor) >= (3, 12):
        return None
    return (f"it does not parse on the task interpreter, Python {major}.{minor} ({task_python()}): Toolathlon's "
            "scripts need Python >= 3.12. Build a task environment on one (`decathlon task-env --source CHECKOUT "
            "--python python3.13`, then DECATHLON_TASK_PYTHON=<its bin/python>), or run the task on a backend "
            "whose image has Python >= 3.12")


_FSTRING = re.compile(r"(?<![A-Za-z0-9_])(?:[rR]?[fF]|[fF][rR])[\"']")  # an f-string on the line that failed
_MISSING = re.compile(r"No module named '([^']+)'")


def missing_module_hint(output: str) -> str | None:
    """A task script that cannot import a package: which one, and the ways to get it there."""
    m = _MISSING.search(output)
    if m is None:
        return None
    name = m.group(1)
    if name.split(".")[0] == "configs":
        return (f"`{name}` is missing: a Toolathlon root needs configs/global_configs.py and "
                "configs/token_key_session.py (git-ignored upstream); decathlon copies the checkout's *_example.py "
                "per episode, or the files DECATHLON_GLOBAL_CONFIGS / DECATHLON_TOKEN_KEY_SESSION name")
    return (f"the task interpreter ({task_python()}) has no module `{name}`: build the checkout's task environment "
            "(`decathlon task-env --source CHECKOUT`, then DECATHLON_TASK_PYTHON=<its bin/python>), or install the "
            f"package providing `{name.split('.')[0]}` into it")


def run_module(module: str, args: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None,
               prefix: list[str] | None = None) -> ScriptRun:
    """`prefix`: who runs it (task_api.users: the grader, where users are separated)."""
    start = time.monotonic()
    argv0, full_env = behind(prefix or [], {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"})
    proc = subprocess.Popen([*argv0, task_python(), "-m", module, *args], cwd=str(cwd), env=full_env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        code = None
    return ScriptRun(code, out.decode("utf-8", "replace"), time.monotonic() - start, proc.pid)
