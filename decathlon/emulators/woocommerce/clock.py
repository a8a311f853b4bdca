"""Time as WordPress keeps it: whole seconds, site timezone UTC (upstream's sites never set another).

The clock is injectable so tests pin it; the default is the process's own time, which is what a
sandbox running under libfaketime shifts. Dates are written `2025-10-17T23:34:18` (no offset), the
way `wc_rest_prepare_date_response` and the WP REST controllers write them; local and GMT columns
are equal because the site timezone is UTC.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Callable

Clock = Callable[[], datetime]

_ISO = re.compile(
    r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[Tt ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?\s*"
    r"(Z|z|[+-]\d{2}(?::?\d{2})?)?\s*$")
# What `rest_parse_date` accepts: a full RFC 3339 date-time, fraction and offset optional.
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|z|[+-]\d{2}(?::\d{2})?)?$")


def system_clock() -> datetime:
    return datetime.now(timezone.utc)


def fixed_clock(at: datetime) -> Clock:
    """A clock that always says `at` (tests)."""
    moment = at if at.tzinfo else at.replace(tzinfo=timezone.utc)
    return lambda: moment


class ManualClock:
    """A clock tests move forward by hand."""

    def __init__(self, at: datetime) -> None:
        self.moment = at if at.tzinfo else at.replace(tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)


def now_utc(clock: Clock) -> datetime:
    """The clock's time as a naive UTC datetime to the second (what WordPress stores)."""
    moment = clock()
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment.replace(microsecond=0)


def wp_date(moment: datetime | None) -> str | None:
    """`wc_rest_prepare_date_response`: ISO 8601 without offset, or null."""
    if moment is None:
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def parse_date(value: object) -> datetime | None:
    """A date string as WC's setters read it (`wc_string_to_timestamp`), to naive UTC; None if unreadable.

    Accepts date-only strings (midnight), missing seconds, fractions and offsets; an offset-less
    time is site time, which is UTC.
    """
    if not isinstance(value, str):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                return datetime.fromtimestamp(float(value), timezone.utc).replace(tzinfo=None, microsecond=0)
            except (OverflowError, OSError, ValueError):
                return None
        return None
    match = _ISO.match(value)
    if not match:
        return None
    year, month, day, hour, minute, second, offset = match.groups()
    try:
        moment = datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0))
    except ValueError:
        return None
    if offset and offset not in ("Z", "z"):
        sign = 1 if offset[0] == "+" else -1
        digits = offset[1:].replace(":", "")
        hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
        moment -= sign * timedelta(hours=hours, minutes=minutes)
    return moment


def parse_rest_date(value: object) -> datetime | None:
    """`rest_parse_date`: only a full date-time passes (a bare date does not), else None."""
    if not isinstance(value, str) or not _RFC3339.match(value.strip()):
        return None
    return parse_date(value)
