"""The emulators' clock: the process's own, which a frozen-clock episode shifts (libfaketime is preloaded into
the services too), injectable so tests pin it."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(timezone.utc)


def fixed_clock(at: datetime) -> Clock:
    moment = at if at.tzinfo else at.replace(tzinfo=timezone.utc)
    return lambda: moment


def rfc3339(value: datetime) -> str:
    """`2025-10-17T23:00:28.123456Z`, as Google's APIs write instants."""
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def epoch_millis(value: datetime) -> str:
    """Milliseconds since the epoch as a decimal string, as BigQuery's REST resources write times."""
    return str(int(value.timestamp() * 1000))
