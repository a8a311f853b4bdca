"""`uvx`, `npx` and `uv` for the task's own scripts, which call them as upstream's container has them.

Several preprocesses start an MCP server themselves (the checkout's MCPServerManager reads
configs/mcp_servers/*.yaml and runs `uvx emails-mcp …` or `npx -y canvas-mcp-server`), or a program
(`uv run python -m http.server 30137`, `timeout 60s uv run send_email.py …`), or `python helper.py`. Offline, none of those
runners can fetch anything. The shims put first on the scripts' PATH resolve the same launch through
the server catalogue, as the episode's own servers are, and exec what runs here: the installed
package, our stand-in, or the task interpreter for `uv run python` / `uv run script.py`. Anything
else exits 127 naming what could not run and why.
"""
from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

RUNNERS = ("uvx", "npx", "uv")


def install(folder: Path, env: dict[str, str] | None = None) -> Path:
    """Write the shims into `folder` (the grader's); return it, for the front of PATH. `python` there is
    the task interpreter too, as in upstream's activated environment: scripts start helpers with a bare
    `python some_script.py` that imports the checkout's dependencies. `env`: more variables fixed into the
    runners (the SaaS front's, once the episode's services are up: decathlon/sandbox/saas.py)."""
    from decathlon.sandbox.servers_config import default_servers_dir
    from decathlon.sandbox.subproc import task_python

    folder.mkdir(parents=True, exist_ok=True)
    for name in ("python", "python3"):
        # A script, not a symlink: a venv's interpreter finds its pyvenv.cfg beside the path it was run by.
        path = folder / name
        path.write_text(f'#!/bin/sh\nexec {shlex.quote(task_python())} "$@"\n', encoding="utf-8")
        path.chmod(0o755)
    # Fixed into the shims, not read from their environment: an MCP client starts a server with a bare
    # one (the SDK's stdio client keeps HOME, PATH and a few more), where a shim would look for the
    # servers beside decathlon.sandbox and find none in the sandbox image.
    pinned = {**(env or {}), "DECATHLON_SERVERS_DIR": str(default_servers_dir()), "DECATHLON_TASK_PYTHON": task_python()}
    for name in RUNNERS:
        path = folder / name
        path.write_text(f"#!{sys.executable}\nimport os, sys\nos.environ.update({pinned!r})\n"
                        f"from decathlon.sandbox.runner_shims import main\nsys.exit(main({name!r}, sys.argv[1:]))\n",
                        encoding="utf-8")
        path.chmod(0o755)
    return folder


def _fail(written: str, why: str) -> int:
    print(f"decathlon: `{written}` cannot run offline here: {why}", file=sys.stderr, flush=True)
    return 127


def resolve(runner: str, args: list[str]) -> list[str]:
    """The argv that runs here what `runner args…` would have; ValueError saying why not."""
    from decathlon.sandbox.catalogue import plan_server
    from decathlon.errors import InfraError
    from decathlon.sandbox.launchers import _UV_VALUED, _options
    from decathlon.sandbox.servers_config import default_servers_dir
    from decathlon.sandbox.subproc import task_python

    if runner == "uv":
        _, words = _options(list(args), _UV_VALUED)
        if words[:1] == ["run"]:
            _, rest = _options(words[1:], _UV_VALUED)
            if rest and rest[0] in ("python", "python3"):
                return [task_python(), *rest[1:]]
            if rest and rest[0].endswith(".py"):
                return [task_python(), *rest]
    try:
        plan = plan_server(f"`{runner}` in a task script", {"params": {"command": runner, "args": list(args)}})
    except InfraError as exc:
        raise ValueError(exc.message) from None
    if plan.command is None:
        raise ValueError(plan.entry.why if plan.entry and plan.entry.why else "it runs from recordings only")
    subst = {"${decathlon_servers}": str(default_servers_dir()), "${decathlon_python}": sys.executable}
    command = plan.command
    for key, value in subst.items():
        command = command.replace(key, value)
    if not os.path.exists(command):
        raise ValueError(f"{command} is not installed (python ci/install_servers.py)")
    return [command, *plan.args]


def main(runner: str, args: list[str]) -> int:
    written = " ".join([runner, *args])
    try:
        argv = resolve(runner, args)
    except ValueError as exc:
        return _fail(written, str(exc))
    try:
        os.execv(argv[0], argv)
    except OSError as exc:
        return _fail(written, f"{argv[0]}: {exc}")
    return 0  # not reached
