"""Time as Canvas shows it: UTC instants written `2025-10-17T23:00:28Z`, read in the account's zone.

The clock is injectable so tests pin it; the default is the process's own time, which is what a
sandbox running under libfaketime shifts.
"""
from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import Callable

Clock = Callable[[], datetime]

# Upstream's Canvas image runs its default account (and so every user without a zone of their own) in
# America/Denver: a time given without an offset is read in that zone, as Rails' Time.zone.parse does.
ACCOUNT_TIME_ZONE = "America/Denver"

_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$",
                  re.IGNORECASE)


def system_clock() -> datetime:
    return datetime.now(timezone.utc)


def _zone() -> tzinfo:
    try:
        from zoneinfo import ZoneInfo
        return ZoneInfo(ACCOUNT_TIME_ZONE)
    except Exception:  # noqa: BLE001 - no tz database in a minimal image: UTC is the only honest fallback
        return timezone.utc


_ACCOUNT_ZONE: tzinfo | None = None


def account_zone() -> tzinfo:
    global _ACCOUNT_ZONE
    if _ACCOUNT_ZONE is None:
        _ACCOUNT_ZONE = _zone()
    return _ACCOUNT_ZONE


def iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: object) -> datetime | None:
    """An API time parameter as Canvas reads it; None for empty; ValueError when it is not a time."""
    if text is None:
        return None
    if isinstance(text, datetime):
        return text if text.tzinfo else text.replace(tzinfo=account_zone())
    if isinstance(text, date):
        return datetime(text.year, text.month, text.day, tzinfo=account_zone())
    s = str(text).strip()
    if not s or s.lower() == "null":
        return None
    m = _ISO.match(s)
    if not m:
        raise ValueError(s)
    y, mo, d, hh, mm, ss, frac, off = m.groups()
    try:
        micro = int((frac or "0")[:6].ljust(6, "0"))
        naive = datetime(int(y), int(mo), int(d), int(hh or 0), int(mm or 0), int(ss or 0), micro)
    except ValueError:
        raise ValueError(s) from None
    if off is None:
        return naive.replace(tzinfo=account_zone()).astimezone(timezone.utc)
    if off.upper() == "Z":
        return naive.replace(tzinfo=timezone.utc)
    sign = 1 if off[0] == "+" else -1
    digits = off[1:].replace(":", "")
    delta = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return naive.replace(tzinfo=timezone(sign * delta)).astimezone(timezone.utc)
