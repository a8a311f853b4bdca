"""A frozen clock for the episode's processes: preprocess, MCP servers, the agent's own, evaluator.

Seventeen of Toolathlon's evaluators read the wall clock, and several preprocesses derive their data
from "now". To grade a replayed run as it was graded when recorded, those processes are started with
the episode's launch time as "now" by Debian's libfaketime (LD_PRELOAD): the clock starts there and
ticks on. Monotonic clocks are shifted too but tick at the real rate, so timeouts still measure real
time (libfaketime 0.9.10's DONT_FAKE_MONOTONIC breaks Python's time.sleep with EINVAL: not used).

The agent's own processes (python-execute, started by the daemon long after setup) must read the same
clock as the servers that started at setup, or a recorded `datetime.now()` that once agreed with the
recorded SQL's CURRENT_DATE() would not: each starts at the launch time plus the time the episode has run
(`AgentClock`), not at the launch time itself.
"""
from __future__ import annotations

import glob
import os
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from decathlon.errors import InfraError, Kind

_CANDIDATES = ("/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1",
               "/usr/local/lib/faketime/libfaketime.so.1")
_STAMP = "%Y-%m-%d %H:%M:%S"


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


@dataclass(frozen=True)
class AgentClock:
    """The frozen clock as setup started it, for the processes the agent starts later (in the daemon's spec).

    `origin` is time.monotonic() when the clock started: the monotonic clock is one for the whole machine, so
    the daemon, another process, can tell how long the episode has run."""
    env: dict[str, str]
    origin: float

    @classmethod
    def start(cls, env: dict[str, str]) -> AgentClock | None:
        return cls(dict(env), time.monotonic()) if env else None

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: object) -> AgentClock | None:
        if not isinstance(raw, dict) or not isinstance(raw.get("env"), dict) or not raw["env"]:
            return None
        return cls({str(k): str(v) for k, v in raw["env"].items()}, float(raw.get("origin") or 0.0))

    def now_env(self, now: float | None = None) -> dict[str, str]:
        """The clock's variables for a process started now: the launch time plus the episode's age."""
        try:
            start = datetime.strptime(self.env["FAKETIME"].lstrip("@"), _STAMP)
        except (KeyError, ValueError):
            return dict(self.env)  # not a start-at clock of ours: passed on as it is
        # Rounded to the microsecond before the whole seconds are taken: `origin + n` less `origin` in floating
        # point can fall a hair short of n, which would set the clock a second behind.
        elapsed = max(0, int(round((time.monotonic() if now is None else now) - self.origin, 6)))
        return {**self.env, "FAKETIME": "@" + (start + timedelta(seconds=elapsed)).strftime(_STAMP)}


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
