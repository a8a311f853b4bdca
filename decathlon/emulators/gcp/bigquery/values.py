"""Reading load data: CSV with BigQuery's schema autodetection (so `2025-04-15 22:36:01.357628 UTC` is a
TIMESTAMP, as on the real service) and JSON values (NDJSON loads, insertAll rows) coerced to a schema."""
from __future__ import annotations

import csv
import io
import json
import re
from datetime import date, datetime, time, timezone
from decimal import Decimal, InvalidOperation
from typing import Any, Iterable

from decathlon.emulators.gcp.bigquery.types import bq_type

_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_BOOL = re.compile(r"^(true|false)$", re.I)
_DATE = r"\d{4}-\d{1,2}-\d{1,2}"
_TIME = r"\d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?"
_ZONE = r"(?:\s*(?:UTC|Z)|\s*[+-]\d{2}(?::?\d{2})?)"
_DATE_RE = re.compile(f"^{_DATE}$")
_TIME_RE = re.compile(f"^{_TIME}$")
_DATETIME_RE = re.compile(f"^{_DATE}[T ]{_TIME}$")
_TIMESTAMP_RE = re.compile(f"^{_DATE}[T ]{_TIME}{_ZONE}$")
# most specific first; a column takes the first type every non-empty value fits
_DETECT = [("BOOLEAN", _BOOL), ("INTEGER", _INT), ("FLOAT", _FLOAT), ("DATE", _DATE_RE), ("TIME", _TIME_RE),
           ("DATETIME", _DATETIME_RE), ("TIMESTAMP", _TIMESTAMP_RE)]
_FIELD_PREFIX = {"STRING": "string", "INTEGER": "int64", "FLOAT": "double", "BOOLEAN": "bool", "DATE": "date",
                 "TIME": "time", "DATETIME": "datetime", "TIMESTAMP": "timestamp"}


class LoadError(ValueError):
    pass


def detect_type(values: Iterable[str]) -> str:
    candidates = list(_DETECT)
    seen = False
    for v in values:
        if v == "":
            continue
        seen = True
        candidates = [(k, rx) for k, rx in candidates if rx.match(v)]
        if not candidates:
            return "STRING"
    if not seen:
        return "STRING"
    return candidates[0][0]


def read_csv(data: bytes, config: dict[str, Any]) -> list[list[str]]:
    text = data.decode(config.get("encoding", "UTF-8").replace("ISO-8859-1", "latin-1"), errors="replace")
    text = text.removeprefix("\ufeff")
    delimiter = config.get("fieldDelimiter") or ","
    if delimiter in ("\\t", "tab"):
        delimiter = "\t"
    quote = config.get("quote", '"') or '"'
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter[0], quotechar=quote[0])
    return [row for row in reader if row and not (len(row) == 1 and row[0] == "")]


def autodetect_csv(rows: list[list[str]], skip: int | None) -> tuple[list[dict[str, Any]], list[list[str]]]:
    """(schema, data rows) of a CSV read with `autodetect`."""
    width = max((len(r) for r in rows), default=0)
    header: list[str] | None = None
    if skip is None:
        # no explicit skip: the first row is a header when it is all text and some column below it is not
        body = rows[1:]
        if rows and body:
            first_types = [detect_type([c]) for c in rows[0]]
            body_types = [detect_type(r[i] if i < len(r) else "" for r in body) for i in range(width)]
            if all(t == "STRING" for t in first_types) and any(t != "STRING" for t in body_types):
                header = rows[0]
                rows = body
    elif skip > 0:
        header = rows[skip - 1] if len(rows) >= skip else None
        rows = rows[skip:]
    fields = []
    used: set[str] = set()
    for i in range(width):
        kind = detect_type(r[i] if i < len(r) else "" for r in rows)
        name = (header[i].strip() if header and i < len(header) else "") or f"{_FIELD_PREFIX.get(kind, 'string')}_field_{i}"
        base, n = name, 1
        while name.lower() in used:
            name = f"{base}_{n}"
            n += 1
        used.add(name.lower())
        fields.append({"name": name, "type": kind, "mode": "NULLABLE"})
    return fields, rows


def csv_rows(rows: list[list[str]], fields: list[dict[str, Any]], null_marker: str = "") -> list[list[Any]]:
    out = []
    width = len(fields)
    for n, row in enumerate(rows, 1):
        if len(row) > width:
            raise LoadError(f"Error while reading data, error message: CSV table references column position {width}, "
                            f"but line starting at position {n} contains only {width} columns.")
        values: list[Any] = []
        for i, f in enumerate(fields):
            raw = row[i] if i < len(row) else ""
            values.append(None if raw == null_marker else coerce(raw, f, n))
        out.append(values)
    return out


def parse_timestamp(text: str) -> datetime:
    s = text.strip()
    s = re.sub(r"\s*UTC$", "+00:00", s)
    s = re.sub(r"\s*Z$", "+00:00", s)
    s = re.sub(r"\s+([+-]\d{2}(:?\d{2})?)$", r"\1", s)
    s = re.sub(r"([+-]\d{2})$", r"\1:00", s)
    s = re.sub(r"(\.\d{6})\d+", r"\1", s)
    value = datetime.fromisoformat(_pad_date(s))
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def _pad_date(s: str) -> str:
    m = re.match(r"^(\d{4})-(\d{1,2})-(\d{1,2})(.*)$", s)
    return f"{m.group(1)}-{int(m.group(2)):02d}-{int(m.group(3)):02d}{m.group(4)}" if m else s


def coerce(value: Any, field: dict[str, Any], row: int = 0) -> Any:
    """A JSON/CSV value as the Python value DuckDB stores for `field`."""
    if value is None:
        return None
    if field.get("mode") == "REPEATED":
        if not isinstance(value, list):
            raise LoadError(f"Value for repeated field {field['name']} is not an array.")
        scalar = {**field, "mode": "NULLABLE"}
        return [coerce(v, scalar, row) for v in value if v is not None]
    kind = bq_type(field.get("type", "STRING"))
    try:
        if kind == "RECORD":
            if isinstance(value, str):
                value = json.loads(value)
            if not isinstance(value, dict):
                raise LoadError(f"Invalid value for RECORD field {field['name']}.")
            subs = field.get("fields") or []
            known = {f["name"].lower() for f in subs}
            for key in value:
                if key.lower() not in known:
                    raise LoadError(f"no such field: {key}.")
            lowered = {k.lower(): v for k, v in value.items()}
            return {f["name"]: coerce(lowered.get(f["name"].lower()), f, row) for f in subs}
        if kind == "STRING":
            return value if isinstance(value, str) else json.dumps(value) if isinstance(value, (dict, list)) else str(value)
        if kind == "INTEGER":
            if isinstance(value, bool):
                return int(value)
            if isinstance(value, float) and value.is_integer():
                return int(value)
            return int(str(value).strip())
        if kind == "FLOAT":
            return float(value)
        if kind in ("NUMERIC", "BIGNUMERIC"):
            return Decimal(str(value).strip())
        if kind == "BOOLEAN":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("true", "t", "1", "yes", "y"):
                return True
            if text in ("false", "f", "0", "no", "n"):
                return False
            raise ValueError(value)
        if kind == "TIMESTAMP":
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return datetime.fromtimestamp(float(value), tz=timezone.utc)
            return parse_timestamp(str(value))
        if kind == "DATETIME":
            text = re.sub(r"(\.\d{6})\d+", r"\1", str(value).strip())
            return datetime.fromisoformat(_pad_date(text)).replace(tzinfo=None)
        if kind == "DATE":
            return date.fromisoformat(_pad_date(str(value).strip()))
        if kind == "TIME":
            return time.fromisoformat(str(value).strip())
        if kind == "JSON":
            return value if isinstance(value, str) else json.dumps(value)
        if kind == "BYTES":
            import base64
            return base64.b64decode(str(value))
        return str(value)
    except LoadError:
        raise
    except (ValueError, TypeError, InvalidOperation, OverflowError):
        raise LoadError(f"Could not convert value '{value}' to {kind if kind != 'FLOAT' else 'FLOAT64'} "
                        f"for field {field.get('name')}" + (f" (row {row})." if row else ".")) from None


def json_rows(records: list[Any], fields: list[dict[str, Any]], ignore_unknown: bool) -> list[list[Any]]:
    by_name = {f["name"].lower(): f for f in fields}
    out = []
    for n, record in enumerate(records, 1):
        if not isinstance(record, dict):
            raise LoadError(f"Error while reading data, error message: JSON parsing error in row starting at position {n}: "
                            "Value is not an object.")
        lowered = {}
        for key, value in record.items():
            if key.lower() not in by_name:
                if ignore_unknown:
                    continue
                raise LoadError(f"Error while reading data, error message: JSON parsing error in row starting at position "
                                f"{n}: No such field: {key}.")
            lowered[key.lower()] = value
        row = []
        for f in fields:
            value = lowered.get(f["name"].lower())
            if value is None and f.get("mode") == "REQUIRED":
                raise LoadError(f"Error while reading data, error message: JSON parsing error in row starting at position "
                                f"{n}: Missing required field: {f['name']}.")
            if f.get("mode") == "REPEATED" and value is None:
                value = []
            row.append(coerce(value, f, n))
        out.append(row)
    return out


def detect_json_schema(records: list[Any]) -> list[dict[str, Any]]:
    fields: dict[str, dict[str, Any]] = {}
    for record in records:
        if not isinstance(record, dict):
            continue
        for key, value in record.items():
            if value is None or key in fields:
                if key in fields and fields[key]["type"] == "INTEGER" and isinstance(value, float):
                    fields[key]["type"] = "FLOAT"
                continue
            fields[key] = _json_field(key, value)
    return list(fields.values())


def _json_field(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, list):
        inner = _json_field(name, next((v for v in value if v is not None), ""))
        inner["mode"] = "REPEATED"
        return inner
    if isinstance(value, dict):
        return {"name": name, "type": "RECORD", "mode": "NULLABLE", "fields": detect_json_schema([value])}
    if isinstance(value, bool):
        kind = "BOOLEAN"
    elif isinstance(value, int):
        kind = "INTEGER"
    elif isinstance(value, float):
        kind = "FLOAT"
    else:
        kind = detect_type([str(value)])
        kind = kind if kind in ("TIMESTAMP", "DATE", "DATETIME", "TIME") else "STRING"
    return {"name": name, "type": kind, "mode": "NULLABLE"}


def ndjson(data: bytes) -> list[Any]:
    out = []
    for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError:
            raise LoadError(f"Error while reading data, error message: JSON table encountered too many errors, giving up. "
                            f"Rows: {n}; errors: 1. Please look into the errors[] collection for more details.") from None
    return out
