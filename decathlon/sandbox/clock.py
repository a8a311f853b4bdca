"""A frozen clock for the task's own processes: preprocess, MCP servers, evaluator.

Seventeen of Toolathlon's evaluators read the wall clock, and several preprocesses derive their data
from "now". To grade a replayed run as it was graded when recorded, those processes are started with
the episode's launch time as "now" by Debian's libfaketime (LD_PRELOAD): the clock starts there and
ticks on. Monotonic clocks are shifted too but tick at the real rate, so timeouts still measure real
time (libfaketime 0.9.10's DONT_FAKE_MONOTONIC breaks Python's time.sleep with EINVAL: not used).
"""
from __future__ import annotations

import glob
import os

from decathlon.errors import InfraError, Kind

_CANDIDATES = ("/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1",
               "/usr/local/lib/faketime/libfaketime.so.1")


def libfaketime() -> str:
    named = os.environ.get("DECATHLON_LIBFAKETIME")
    if named:
        if not os.path.isfile(named):
            raise InfraError(Kind.FAKETIME_MISSING, f"DECATHLON_LIBFAKETIME={named}: no such file")
        return named
    for pattern in _CANDIDATES:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    raise InfraError(Kind.FAKETIME_MISSING, "a frozen clock needs libfaketime, which is not installed: "
                     "`apt-get install libfaketime` (or name the library in DECATHLON_LIBFAKETIME), or run "
                     "without the frozen clock")


def frozen_env(launch_time: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """What to add to a process's environment so that it starts at `launch_time` ("YYYY-MM-DD HH:MM:SS",
    a trailing weekday allowed)."""
    stamp = launch_time.strip()[:19]
    if len(stamp) != 19 or stamp[4] != "-" or stamp[10] != " ":
        raise InfraError(Kind.USAGE, f"launch time {launch_time!r} is not \"YYYY-MM-DD HH:MM:SS\"")
    preload = (base or os.environ).get("LD_PRELOAD", "")
    return {"LD_PRELOAD": f"{libfaketime()} {preload}".strip(), "FAKETIME": f"@{stamp}",
            "FAKETIME_DONT_RESET": "1"}


_CLOCK_KEYS = ("LD_PRELOAD", "FAKETIME", "FAKETIME_DONT_RESET")


def behind(prefix: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """Move the clock's variables behind a user switch (`prefix`, as decathlon.sandbox.users builds it).

    libfaketime starts in the first program that loads it, which creates a root-only semaphore and
    hands its name to every child (FAKETIME_SHARED): if that program is the privileged `setpriv`, the
    grader it becomes cannot open the semaphore and dies. So the switch runs with the real clock and
    `env` sets the frozen one up as the new user."""
    if not prefix or not any(k in env for k in _CLOCK_KEYS):
        return prefix, env
    moved = [f"{k}={env[k]}" for k in _CLOCK_KEYS if k in env]
    rest = {k: v for k, v in env.items() if k not in _CLOCK_KEYS}
    return [*prefix, "env", *moved], rest
