"""local-python-execute: run Python code in the workspace, with a timeout, in Toolathlon's format."""
from __future__ import annotations

import asyncio
import hashlib
import os
import re
import signal
import sys
import time

from decathlon.sandbox.local_tools.base import Context, LocalResult, LocalTool, obj
from decathlon.sandbox.users import agent_env

DEFAULT_TIMEOUT = 30
MAX_TIMEOUT = 120
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def _interpreter() -> str:
    """Upstream's agent runs python-execute in the checkout's own environment (pandas, openpyxl…): the
    task interpreter where one is set, unless DECATHLON_AGENT_PYTHON names another."""
    return os.environ.get("DECATHLON_AGENT_PYTHON") or os.environ.get("DECATHLON_TASK_PYTHON") or sys.executable


def _script_name(code: str, filename: str | None) -> str:
    if filename:
        name = _SAFE_NAME.sub("_", os.path.basename(filename)) or "script"
        return name if name.endswith(".py") else name + ".py"
    return "exec_" + hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()[:12] + ".py"


async def _run(args: dict, ctx: Context) -> LocalResult:
    code: str = args["code"]
    timeout = max(1, min(int(args.get("timeout") or DEFAULT_TIMEOUT), MAX_TIMEOUT))
    folder = ctx.workspace / ".python_tmp"
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / _script_name(code, args.get("filename"))
    script.write_text(code, encoding="utf-8")
    start = time.monotonic()
    try:
        proc = await asyncio.create_subprocess_exec(
            _interpreter(), str(script), cwd=str(ctx.workspace), stdin=asyncio.subprocess.DEVNULL,
            env=agent_env(extra=ctx.process_env()),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return LocalResult(f"Error executing Python code: {exc}", is_error=True)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except asyncio.TimeoutError:
        # The whole process group: the code may have started children of its own.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await proc.wait()
        elapsed = time.monotonic() - start
        return LocalResult(f"=== EXECUTION TIMEOUT ===\nExecution timed out after {timeout} seconds\n"
                           f"Execution time: {elapsed:.3f} seconds", is_error=True)
    elapsed = time.monotonic() - start
    parts = []
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")
    if stdout:
        parts.append("=== STDOUT ===\n" + stdout.rstrip("\n"))
    if stderr:
        parts.append("=== STDERR ===\n" + stderr.rstrip("\n"))
    parts.append(f"=== EXECUTION INFO ===\nReturn code: {proc.returncode}\n"
                 f"Execution time: {elapsed:.3f} seconds\nTimeout limit: {timeout} seconds")
    return LocalResult("\n".join(parts), is_error=proc.returncode != 0)


PYTHON_EXECUTE = LocalTool(
    "python-execute",
    "Run Python code in the workspace directory and return its output (stdout, stderr, return code).",
    obj({
        "code": {"type": "string", "description": "The Python source to run."},
        "filename": {"type": "string", "description": "Optional name for the script file."},
        "timeout": {"type": "integer", "description": f"Seconds before the run is stopped "
                                                      f"(default {DEFAULT_TIMEOUT}, at most {MAX_TIMEOUT})."},
    }, ["code"]),
    _run,
)
