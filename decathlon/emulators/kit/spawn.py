"""What both of an episode's supervisors (decathlon.emulators.supervisor for the local services and the front,
decathlon.emulators.front.backends for the front's emulators) do alike with an emulator process: the command that
starts it on the runtime (decathlon.emulators.kit.runtime), its ready line read back, how it ended, its log's tail."""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path

START_TIMEOUT = float(os.environ.get("DECATHLON_SERVICE_START_TIMEOUT", "20"))
LOG_TAIL = 2000


class NotReady(ValueError):
    """The first line an emulator printed is not its ready line."""


def command(python: str, name: str, root: Path, *, host: str | None = None, control: Path | None = None,
            extra: list[str] | None = None) -> list[str]:
    """`python -m decathlon.emulators.<name> --root ROOT [--host H] [--control CONTROL/<name>.sock] [extra]`: the
    control socket (the grader's reset, snapshot, restore and seed) in a folder the agent never reaches."""
    return [python, "-m", f"decathlon.emulators.{name}", *arguments(name, root, host=host, control=control, extra=extra)]


def arguments(name: str, root: Path, *, host: str | None = None, control: Path | None = None,
              extra: list[str] | None = None) -> list[str]:
    """The command line after `python -m decathlon.emulators.<name>` (what a forkserver's child is given)."""
    args = ["--root", str(root)]
    if host is not None:
        args += ["--host", host]
    if control is not None:
        args += ["--control", str(control / f"{name}.sock")]
    return args + list(extra or [])


def parse_ready(line: str, name: str) -> dict[str, int]:
    """The ports of `ready <name> {"port name": N, ...}`."""
    parts = line.strip().split(" ", 2)
    if len(parts) != 3 or parts[:2] != ["ready", name]:
        raise NotReady(f"said {line.strip()[:200]!r} instead of `ready {name} …`")
    try:
        ports = {str(k): int(v) for k, v in json.loads(parts[2]).items()}
    except (ValueError, TypeError, AttributeError):
        raise NotReady(f"said a ready line whose ports are not a JSON object of numbers: {line.strip()[:200]!r}") from None
    if not ports or not all(0 < p < 65536 for p in ports.values()):
        raise NotReady(f"reported no usable port: {line.strip()[:200]!r}")
    return ports


def how(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


def log_tail(path: Path, limit: int = LOG_TAIL) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace").strip()
