"""A cell as Sheets keeps it (`userEnteredValue`, `effectiveValue`, `formattedValue`, formats) and the two ways a value
comes in: RAW (as sent) and USER_ENTERED (parsed as if typed: numbers, percentages, currency, dates, times, booleans,
formulas, a leading `'` for text). Rendering follows Sheets' automatic format: at most 10 significant digits, no
thousands separator, scientific past 10^15; a typed format (percent, currency, a date) renders by its pattern."""
from __future__ import annotations

import math
import re
from datetime import date, datetime, timedelta
from typing import Any

Cell = dict[str, Any]
EPOCH = datetime(1899, 12, 30)  # Sheets' serial day 0

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_PLAIN = re.compile(rf"^{_NUMBER}$")
_GROUPED = re.compile(r"^([+-]?)(\d{1,3}(?:,\d{3})+)(\.\d+)?$")
_PERCENT = re.compile(rf"^({_NUMBER})\s*%$")
_CURRENCY = re.compile(r"^([+-]?)\$\s*(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?$")
_DATE = re.compile(r"^(\d{4})([-/])(\d{1,2})\2(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$")
_US_DATE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$")
_TIME = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")

LEFT, RIGHT, CENTER = "LEFT", "RIGHT", "CENTER"


def default_format(align: str | None = None) -> dict[str, Any]:
    """The effectiveFormat Sheets reports for a cell nobody formatted."""
    fmt: dict[str, Any] = {
        "backgroundColor": {"red": 1, "green": 1, "blue": 1},
        "padding": {"top": 2, "right": 3, "bottom": 2, "left": 3},
        "verticalAlignment": "BOTTOM", "wrapStrategy": "OVERFLOW_CELL",
        "textFormat": {"foregroundColor": {}, "fontFamily": "Arial", "fontSize": 10, "bold": False, "italic": False,
                       "strikethrough": False, "underline": False, "foregroundColorStyle": {"rgbColor": {}}},
        "hyperlinkDisplayType": "PLAIN_TEXT",
        "backgroundColorStyle": {"rgbColor": {"red": 1, "green": 1, "blue": 1}},
    }
    if align:
        fmt = {**dict(list(fmt.items())[:2]), "horizontalAlignment": align, **dict(list(fmt.items())[2:])}
    return fmt


def number_json(x: float) -> int | float:
    """A number as Sheets writes it in JSON: 2021, not 2021.0."""
    if isinstance(x, float) and x.is_integer() and abs(x) < 2 ** 53:
        return int(x)
    return x


# ---- rendering -----------------------------------------------------------------------------------------------------

def general(x: float) -> str:
    """Sheets' automatic number format."""
    if x == 0:
        return "0"
    if not math.isfinite(x):
        return "#NUM!"
    ax = abs(x)
    if ax >= 1e15:
        return _scientific(x)
    int_digits = len(str(int(ax))) if ax >= 1 else 1
    decimals = max(0, 10 - int_digits)
    text = f"{x:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text in ("0", "-0"):
        return _scientific(x)
    return text


def _scientific(x: float) -> str:
    mantissa, _, exponent = f"{x:.5E}".partition("E")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    sign = exponent[0]
    return f"{mantissa}E{sign}{int(exponent[1:]):02d}"


def _grouped(text: str) -> str:
    head, dot, tail = text.partition(".")
    sign = "-" if head.startswith("-") else ""
    head = head.lstrip("-")
    groups: list[str] = []
    while len(head) > 3:
        groups.insert(0, head[-3:])
        head = head[:-3]
    groups.insert(0, head)
    return sign + ",".join(groups) + (dot + tail if dot else "")


def by_pattern(x: float, kind: str, pattern: str) -> str:
    """A number in one of the formats Sheets gives typed input (and the common ones scripts set)."""
    if kind in ("DATE", "DATE_TIME", "TIME"):
        return _date_pattern(x, pattern)
    prefix = "".join(re.findall(r'^"([^"]*)"', pattern))
    body = re.sub(r'"[^"]*"', "", pattern).replace("\\", "").split(";", 1)[0]
    percent = "%" in body
    value = x * 100 if percent else x
    decimals = len(re.sub(r"[^0#]", "", body.split(".", 1)[1])) if "." in body else 0
    text = f"{abs(value):.{decimals}f}"
    if "," in body:
        text = _grouped(text)
    sign = "-" if value < 0 and float(text.replace(",", "")) != 0 else ""
    return f"{sign}{prefix}{text}{'%' if percent else ''}"


def _date_pattern(serial: float, pattern: str) -> str:
    moment = EPOCH + timedelta(days=serial)
    out, i, p = [], 0, pattern
    last_was_hour = False
    tokens = re.findall(r"yyyy|yy|mmmm|mmm|mm|m|dddd|ddd|dd|d|hh|h|ss|s|am/pm|AM/PM|.", p)
    for tok in tokens:
        low = tok.lower()
        if low == "yyyy":
            out.append(f"{moment.year:04d}")
        elif low == "yy":
            out.append(f"{moment.year % 100:02d}")
        elif low in ("mm", "m"):
            value = moment.minute if last_was_hour else moment.month
            out.append(f"{value:02d}" if low == "mm" else str(value))
        elif low == "mmm":
            out.append(moment.strftime("%b"))
        elif low == "mmmm":
            out.append(moment.strftime("%B"))
        elif low in ("dd", "d"):
            out.append(f"{moment.day:02d}" if low == "dd" else str(moment.day))
        elif low in ("hh", "h"):
            hour = moment.hour if "am/pm" not in p.lower() else (moment.hour % 12 or 12)
            out.append(f"{hour:02d}" if low == "hh" else str(hour))
        elif low in ("ss", "s"):
            out.append(f"{moment.second:02d}" if low == "ss" else str(moment.second))
        elif low == "am/pm":
            out.append("AM" if moment.hour < 12 else "PM")
        else:
            out.append(tok)
        if low in ("hh", "h"):
            last_was_hour = True
        elif low not in (":",) and tok.strip():
            last_was_hour = False if low not in ("mm", "m") else last_was_hour
        i += 1
    return "".join(out)


def formatted(effective: dict[str, Any], fmt: dict[str, Any] | None) -> str:
    if "stringValue" in effective:
        return str(effective["stringValue"])
    if "boolValue" in effective:
        return "TRUE" if effective["boolValue"] else "FALSE"
    if "errorValue" in effective:
        return str(effective["errorValue"].get("type") and "#ERROR!")
    x = float(effective.get("numberValue", 0))
    number_format = (fmt or {}).get("numberFormat")
    if number_format and number_format.get("pattern") and number_format.get("type") not in (None, "TEXT"):
        try:
            return by_pattern(x, number_format["type"], number_format["pattern"])
        except (ValueError, OverflowError):
            return general(x)
    return general(x)


# ---- input ---------------------------------------------------------------------------------------------------------

def _serial(moment: datetime) -> float:
    delta = moment - EPOCH
    return delta.days + delta.seconds / 86400


def typed(text: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(userEnteredValue, numberFormat or None) of `text` typed into a cell."""
    stripped = text.strip()
    if text.startswith("="):
        return {"formulaValue": text}, None
    if text.startswith("'"):
        return {"stringValue": text[1:]}, None
    if stripped.upper() in ("TRUE", "FALSE"):
        return {"boolValue": stripped.upper() == "TRUE"}, None
    if _PLAIN.match(stripped):
        try:
            value = float(stripped)
        except ValueError:
            return {"stringValue": text}, None
        if math.isfinite(value):
            return {"numberValue": number_json(value)}, None
    m = _GROUPED.match(stripped)
    if m:
        value = float((m.group(1) + m.group(2) + (m.group(3) or "")).replace(",", ""))
        return {"numberValue": number_json(value)}, {"type": "NUMBER",
                                                   "pattern": "#,##0.00" if m.group(3) else "#,##0"}
    m = _PERCENT.match(stripped)
    if m:
        value = float(m.group(1)) / 100
        return {"numberValue": number_json(round(value, 15))}, {"type": "PERCENT",
                                                              "pattern": "0.00%" if "." in m.group(1) else "0%"}
    m = _CURRENCY.match(stripped)
    if m:
        value = float(m.group(1) + m.group(2).replace(",", "") + (m.group(3) or ""))
        return {"numberValue": number_json(value)}, {"type": "CURRENCY",
                                                   "pattern": '"$"#,##0.00' if m.group(3) else '"$"#,##0'}
    parsed = _date(stripped)
    if parsed is not None:
        return parsed
    return {"stringValue": text}, None


def _date(text: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    try:
        m = _DATE.match(text)
        if m:
            y, sep, mo, d = int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4))
            moment = datetime(y, mo, d)
            day = f"yyyy{sep}mm{sep}dd" if len(m.group(3)) == 2 else f"yyyy{sep}m{sep}d"
            if m.group(5) is None:
                return {"numberValue": number_json(_serial(moment))}, {"type": "DATE", "pattern": day}
            moment = moment.replace(hour=int(m.group(5)), minute=int(m.group(6)), second=int(m.group(7) or 0))
            return ({"numberValue": number_json(_serial(moment))},
                    {"type": "DATE_TIME", "pattern": day + (" hh:mm:ss" if m.group(7) else " hh:mm")})
        m = _US_DATE.match(text)
        if m:
            moment = datetime(int(m.group(3)), int(m.group(1)), int(m.group(2)))
            return {"numberValue": number_json(_serial(moment))}, {"type": "DATE", "pattern": "m/d/yyyy"}
        m = _TIME.match(text)
        if m and int(m.group(1)) < 24 and int(m.group(2)) < 60:
            seconds = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3) or 0)
            return ({"numberValue": number_json(seconds / 86400)},
                    {"type": "TIME", "pattern": "hh:mm:ss" if m.group(3) else "hh:mm"})
    except ValueError:
        return None
    return None


def entered(value: Any, user_entered: bool) -> Cell | None:
    """The cell `value` (from a ValueRange) makes; None clears it (`""` is an empty cell too)."""
    if value is None:
        return None
    number_format = None
    if isinstance(value, bool):
        uev: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, (int, float)):
        uev = {"numberValue": number_json(value) if math.isfinite(value) else 0}
    else:
        text = value if isinstance(value, str) else str(value)
        if text == "":
            return {}
        if user_entered:
            uev, number_format = typed(text)
        else:
            uev = {"stringValue": text}
    cell: Cell = {"userEnteredValue": uev}
    if number_format:
        cell["userEnteredFormat"] = {"numberFormat": number_format}
    return cell


def settle(cell: Cell, effective: dict[str, Any] | None = None) -> Cell:
    """Fill a cell's effectiveValue (its own value, or `effective` for a formula), formattedValue and
    effectiveFormat from its userEnteredValue."""
    uev = cell.get("userEnteredValue")
    if uev is None:
        for key in ("effectiveValue", "formattedValue", "effectiveFormat"):
            cell.pop(key, None)
        return cell
    value = effective if "formulaValue" in uev else uev
    fmt = cell.get("userEnteredFormat")
    if value is None:
        cell.pop("effectiveValue", None)
        cell.pop("formattedValue", None)
    else:
        cell["effectiveValue"] = value
        cell["formattedValue"] = formatted(value, fmt)
    align = RIGHT if value and "numberValue" in value else CENTER if value and "boolValue" in value else LEFT
    eff = default_format(align)
    if fmt and fmt.get("numberFormat"):
        eff["numberFormat"] = fmt["numberFormat"]
    if fmt and isinstance(fmt.get("textFormat"), dict):
        eff["textFormat"] = {**eff["textFormat"], **fmt["textFormat"]}
    cell["effectiveFormat"] = eff
    return cell


def unformatted(effective: dict[str, Any]) -> Any:
    if "numberValue" in effective:
        return number_json(effective["numberValue"])
    if "boolValue" in effective:
        return effective["boolValue"]
    if "stringValue" in effective:
        return effective["stringValue"]
    return "#ERROR!"


def render(cell: Cell, option: str) -> Any:
    """A cell as values.get returns it; "" for an empty one."""
    uev = cell.get("userEnteredValue")
    if option == "FORMULA" and uev and "formulaValue" in uev:
        return uev["formulaValue"]
    if option == "FORMATTED_VALUE":
        return cell.get("formattedValue", "")
    eff = cell.get("effectiveValue")
    return "" if eff is None else unformatted(eff)


def serial_of(value: date) -> float:
    return _serial(datetime(value.year, value.month, value.day))
