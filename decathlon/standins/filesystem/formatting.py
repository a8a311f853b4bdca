"""JavaScript-compatible rendering helpers: sizes, dates, padding, name ordering."""

from __future__ import annotations

import math
import os
import time
import unicodedata
from decimal import ROUND_HALF_UP, Decimal

_SIZE_UNITS = ("B", "KB", "MB", "GB", "TB")
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# Node prints ICU's long zone name; these cover the zones containers run in.
_ZONE_NAMES = {
    "UTC": "Coordinated Universal Time",
    "UCT": "Coordinated Universal Time",
    "GMT": "Greenwich Mean Time",
    "BST": "British Summer Time",
    "CET": "Central European Standard Time",
    "CEST": "Central European Summer Time",
    "EST": "Eastern Standard Time",
    "EDT": "Eastern Daylight Time",
    "CST": "Central Standard Time",
    "CDT": "Central Daylight Time",
    "MST": "Mountain Standard Time",
    "MDT": "Mountain Daylight Time",
    "PST": "Pacific Standard Time",
    "PDT": "Pacific Daylight Time",
}

# ICU root collation order of ASCII (punctuation < symbols < digits < letters).
_ASCII_COLLATION = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
_ASCII_RANK = {char: rank for rank, char in enumerate(_ASCII_COLLATION)}


def _to_fixed_2(value: float) -> str:
    # Number.prototype.toFixed rounds exact halves up; Python's format rounds to even.
    return str(Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def format_size(size: int) -> str:
    if size == 0:
        return "0 B"
    exponent = math.floor(math.log(size) / math.log(1024))
    if exponent <= 0:
        return f"{size} B"
    unit = min(exponent, len(_SIZE_UNITS) - 1)
    return f"{_to_fixed_2(size / math.pow(1024, unit))} {_SIZE_UNITS[unit]}"


def js_date_string(epoch_ns: int) -> str:
    """``Date.prototype.toString()`` for a timestamp, in the process's local zone."""
    seconds = epoch_ns // 1_000_000_000
    local = time.localtime(seconds)
    offset_minutes = (local.tm_gmtoff or 0) // 60
    sign = "+" if offset_minutes >= 0 else "-"
    hours, minutes = divmod(abs(offset_minutes), 60)
    zone = local.tm_zone or "UTC"
    return (
        f"{_WEEKDAYS[local.tm_wday]} {_MONTHS[local.tm_mon - 1]} {local.tm_mday:02d} {local.tm_year:04d} "
        f"{local.tm_hour:02d}:{local.tm_min:02d}:{local.tm_sec:02d} GMT{sign}{hours:02d}{minutes:02d} "
        f"({_ZONE_NAMES.get(zone, zone)})"
    )


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def pad_end(text: str, width: int) -> str:
    return text + " " * max(0, width - utf16_length(text))


def pad_start(text: str, width: int) -> str:
    return " " * max(0, width - utf16_length(text)) + text


def display_name(name: str) -> str:
    """Names as Node reports them: bytes decoded as UTF-8 with replacement."""
    return os.fsencode(name).decode("utf-8", "replace")


def strcmp_key(name: str) -> bytes:
    """Order of ``fs.readdir`` (libuv sorts entries with strcmp)."""
    return os.fsencode(name)


def locale_compare_key(name: str) -> tuple[tuple[int, ...], str, tuple[int, ...]]:
    """Approximation of ``String.prototype.localeCompare`` (ICU root collation).

    Primary: base letters case-insensitively with ICU's punctuation-first
    order; secondary: accents; tertiary: lowercase before uppercase.
    """
    decomposed = unicodedata.normalize("NFD", name)
    primary: list[int] = []
    accents = ""
    case: list[int] = []
    for char in decomposed:
        if unicodedata.combining(char):
            accents += char
            continue
        lowered = char.lower()[:1] or char
        primary.append(_ASCII_RANK.get(lowered, len(_ASCII_COLLATION) + ord(lowered)))
        case.append(0 if char == lowered else 1)
    return tuple(primary), accents, tuple(case)
