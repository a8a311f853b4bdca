"""Where cassettes and recorded trajectories live, and the host-side checks on them.

Convention: `<task>.cassette.json` and `<task>.trajectory.json` in the folder `cassettes_dir` names.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from decathlon.errors import InfraError, Kind
from decathlon.checkout.tasks import check_task_name
from decathlon.tape import nesting
from decathlon.tape.canonical import detokenize
from decathlon.tape.errors import CassetteError
from decathlon.tape.redact import scan, secrets_from_env
from decathlon.tape.store import load, strings

CASSETTE_SUFFIX = ".cassette.json"
TRAJECTORY_SUFFIX = ".trajectory.json"
TRAJECTORY_FORMAT = "decathlon-trajectory"


def cassettes_dir(source: Path, explicit: Path | None = None) -> Path:
    """--cassettes, else $DECATHLON_CASSETTES, else <source>/cassettes (an imported set), else
    <source>/../cassettes (fixtures/toolathlon-mini → fixtures/cassettes)."""
    if explicit:
        return explicit
    env = os.environ.get("DECATHLON_CASSETTES")
    if env:
        return Path(env)
    inside = source / "cassettes"
    return inside if inside.is_dir() else source.parent / "cassettes"


def cassette_path(folder: Path, task: str) -> Path:
    return folder / f"{check_task_name(task)}{CASSETTE_SUFFIX}"


def trajectory_path(folder: Path, task: str) -> Path:
    return folder / f"{check_task_name(task)}{TRAJECTORY_SUFFIX}"


# The modes whose episodes are served from a cassette (decathlon/sandbox/modes.py has the sandbox's own list).
FROM_CASSETTE = ("replay", "rerun")


def recorded_verdict(tape: bytes | None) -> bool | None:
    """The verdict a cassette's run got when it was recorded (imported runs carry it), if any."""
    try:
        value = nesting.loads(tape or b"{}").get("meta", {}).get("recorded_pass")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, bool) else None


def read_cassette_bytes(path: Path) -> bytes:
    """The cassette for a replay, checked here so a bad file is named before a sandbox is spent on it."""
    try:
        load(path)
    except CassetteError as exc:
        raise InfraError(exc.kind, exc.message, "setup") from None
    return path.read_bytes()


def read_trajectory(path: Path, workspace: str) -> list[dict]:
    try:
        raw = nesting.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InfraError(Kind.NO_TRAJECTORY, f"no recorded trajectory at {path}", "policy") from exc
    except (OSError, ValueError) as exc:  # unreadable, not JSON, or nested too deeply to be a trajectory
        raise InfraError(Kind.BAD_TRAJECTORY, f"{path}: {exc}", "policy") from None
    messages = raw.get("messages") if isinstance(raw, dict) else None
    if not isinstance(messages, list):
        raise InfraError(Kind.BAD_TRAJECTORY, f"{path} has no `messages` list", "policy")
    return detokenize(messages, workspace)


def verify(paths: list[Path]) -> list[str]:
    """Every problem with the cassettes (and trajectories) under these paths; empty when all is well."""
    files: list[Path] = []
    problems = []
    for p in paths:
        if p.is_dir():
            found = sorted(p.rglob(f"*{CASSETTE_SUFFIX}")) + sorted(p.rglob(f"*{TRAJECTORY_SUFFIX}"))
            if not found:
                problems.append(f"{p}: no cassettes here")
            files += found
        elif p.exists():
            files.append(p)
        else:
            problems.append(f"{p}: no such file or folder")
    secrets = secrets_from_env()
    for f in files:
        try:
            data: Any = load(f) if f.name.endswith(CASSETTE_SUFFIX) or not f.name.endswith(TRAJECTORY_SUFFIX) \
                else nesting.loads(f.read_text(encoding="utf-8"))
        except CassetteError as exc:
            problems.append(f"{f}: {exc.message}")
            continue
        except nesting.TooDeep as exc:
            problems.append(f"{f}: {exc}")
            continue
        except (OSError, ValueError) as exc:
            problems.append(f"{f}: unreadable: {exc}")
            continue
        for finding in scan(strings(data), secrets):
            problems.append(f"{f}: possible secret: {finding}")
    return problems
