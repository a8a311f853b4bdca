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

from decathlon.sandbox.clock import behind
from decathlon.sandbox.grader_git import scrub


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


IN_IMAGE = "DECATHLON_SANDBOX_IMAGE"  # set by docker/sandbox.Dockerfile: this process runs in the project's image


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
    if os.environ.get(IN_IMAGE) == "1" and not os.environ.get("DECATHLON_TASK_PYTHON"):
        # The project's plain sandbox image (compose, prime): a checkout's scripts need the image built with it,
        # which carries the checkout's task environment; a task env on the host never reaches a container.
        return (f"the sandbox image's interpreter has no module `{name}`: this image carries no Toolathlon checkout's "
                "task environment. Build the image that does (`decathlon image build --source CHECKOUT`) and run with "
                "DECATHLON_IMAGE=<the tag it prints>")
    return (f"the task interpreter ({task_python()}) has no module `{name}`: build the checkout's task environment "
            "(`decathlon task-env --source CHECKOUT`, then DECATHLON_TASK_PYTHON=<its bin/python>), or install the "
            f"package providing `{name.split('.')[0]}` into it")


# `python -m MODULE` made non-dumpable first: no other process of its user (a program git ran for it, a
# service) can ptrace it or read its memory. The flag is reset by every execve, so it is set in the
# interpreter itself; runpy._run_module_as_main is what `-m` runs, so the module runs exactly as with -m.
_NON_DUMPABLE = ("import ctypes, os, runpy, sys\n"
                 "if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) != 0:\n"  # PR_SET_DUMPABLE
                 "    sys.exit('decathlon: cannot make the grader non-dumpable: errno %d' % ctypes.get_errno())\n"
                 "sys.argv = sys.argv[1:]\n"
                 "sys.path[0] = os.getcwd()\n"
                 "runpy._run_module_as_main(sys.argv[0])\n")


def run_module(module: str, args: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None,
               prefix: list[str] | None = None, dumpable: bool = True) -> ScriptRun:
    """`prefix`: who runs it (decathlon.sandbox.users: the grader, where users are separated). The host's GIT_*
    variables never reach a task's script (decathlon.sandbox.grader_git)."""
    start = time.monotonic()
    argv0, full_env = behind(prefix or [], {**scrub(os.environ), **(env or {}), "PYTHONUNBUFFERED": "1"})
    how = ["-m", module] if dumpable else ["-c", _NON_DUMPABLE, module]
    proc = subprocess.Popen([*argv0, task_python(), *how, *args], cwd=str(cwd), env=full_env,
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
