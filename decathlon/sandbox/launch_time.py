"""Toolathlon's launch time: the clock a task believes in, as "YYYY-MM-DD HH:MM:SS Weekday"."""
from __future__ import annotations

from datetime import datetime

from decathlon.errors import InfraError, Kind

FORMAT = "%Y-%m-%d %H:%M:%S %A"
_ACCEPTED = (FORMAT, "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d")


def resolve(raw: str | None) -> str:
    """Pin the clock when asked (tests, replays), else take the wall clock as Toolathlon does."""
    if raw is None or raw == "":
        return datetime.now().strftime(FORMAT)
    for fmt in _ACCEPTED:
        try:
            parsed = datetime.strptime(raw.strip(), fmt)
        except ValueError:
            continue
        # A weekday that disagrees with the date would silently mislead date-relative tasks.
        if fmt == FORMAT and parsed.strftime("%A") != raw.strip().rsplit(" ", 1)[-1]:
            raise InfraError(Kind.BAD_LAUNCH_TIME, f"{raw!r}: the weekday does not match the date "
                             f"(it is a {parsed.strftime('%A')})")
        return parsed.strftime(FORMAT)
    raise InfraError(Kind.BAD_LAUNCH_TIME, f"{raw!r} is not a launch time; use \"YYYY-MM-DD HH:MM:SS\" "
                     "(the weekday is added) or \"YYYY-MM-DD HH:MM:SS Weekday\"")
