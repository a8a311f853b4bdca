"""BigQuery types ↔ DuckDB types, and values in BigQuery's wire form (`{"f": [{"v": ...}]}` rows, every scalar a
string; TIMESTAMP as int64 microseconds when the client asks `formatOptions.useInt64Timestamp`, else the float
seconds in the Java notation the real API writes, e.g. `1.744756561357628E9`)."""
from __future__ import annotations

import base64
import json
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any

ALIASES = {"INT64": "INTEGER", "FLOAT64": "FLOAT", "BOOL": "BOOLEAN", "STRUCT": "RECORD", "BIGDECIMAL": "BIGNUMERIC",
           "DECIMAL": "NUMERIC"}
SCALAR_TO_DUCK = {"STRING": "VARCHAR", "BYTES": "BLOB", "INTEGER": "BIGINT", "FLOAT": "DOUBLE",
                  "NUMERIC": "DECIMAL(38,9)", "BIGNUMERIC": "DECIMAL(38,9)", "BOOLEAN": "BOOLEAN",
                  "TIMESTAMP": "TIMESTAMPTZ", "DATE": "DATE", "TIME": "TIME", "DATETIME": "TIMESTAMP",
                  "JSON": "JSON", "GEOGRAPHY": "VARCHAR", "INTERVAL": "INTERVAL"}
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def bq_type(name: str) -> str:
    upper = (name or "STRING").upper()
    return ALIASES.get(upper, upper)


def sql_type(f: dict[str, Any]) -> str:
    """A field's GoogleSQL type as INFORMATION_SCHEMA writes it: INT64, STRUCT<a INT64>, ARRAY<STRING>."""
    kind = bq_type(f.get("type", "STRING"))
    names = {"INTEGER": "INT64", "FLOAT": "FLOAT64", "BOOLEAN": "BOOL"}
    if kind == "RECORD":
        text = "STRUCT<" + ", ".join(f"{sub['name']} {sql_type(sub)}" for sub in f.get("fields") or []) + ">"
    else:
        text = names.get(kind, kind)
    return f"ARRAY<{text}>" if f.get("mode") == "REPEATED" else text


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def duck_type(field: dict[str, Any]) -> str:
    """The DuckDB column type of a BigQuery schema field."""
    kind = bq_type(field.get("type", "STRING"))
    if kind == "RECORD":
        inner = ", ".join(f"{quote_ident(f['name'])} {duck_type(f)}" for f in field.get("fields") or [])
        base = f"STRUCT({inner})"
    else:
        if kind not in SCALAR_TO_DUCK:
            raise ValueError(f"Invalid type: {field.get('type')}")
        base = SCALAR_TO_DUCK[kind]
    return base + "[]" if (field.get("mode") or "").upper() == "REPEATED" else base


def field_from_duck(name: str, t: Any) -> dict[str, Any]:
    """A BigQuery schema field of a DuckDB column (`t` a DuckDBPyType)."""
    tid = t.id
    if tid == "list":
        inner = field_from_duck(name, t.children[0][1])
        if inner.get("mode") == "REPEATED":  # arrays of arrays do not exist in BigQuery; keep the innermost
            return inner
        inner["mode"] = "REPEATED"
        return inner
    if tid == "struct":
        return {"name": name, "type": "RECORD", "mode": "NULLABLE",
                "fields": [field_from_duck(n, c) for n, c in t.children]}
    return {"name": name, "type": _scalar_from_duck(tid), "mode": "NULLABLE"}


def _scalar_from_duck(tid: str) -> str:
    if tid in ("bigint", "integer", "smallint", "tinyint", "hugeint", "ubigint", "uinteger", "usmallint", "utinyint",
               "uhugeint", '"null"', "null"):
        return "INTEGER"
    if tid in ("double", "float"):
        return "FLOAT"
    if tid == "decimal":
        return "NUMERIC"
    if tid == "boolean":
        return "BOOLEAN"
    if tid == "timestamp with time zone":
        return "TIMESTAMP"
    if tid.startswith("timestamp"):
        return "DATETIME"
    if tid == "date":
        return "DATE"
    if tid.startswith("time"):
        return "TIME"
    if tid == "blob":
        return "BYTES"
    if tid == "json":
        return "JSON"
    if tid == "interval":
        return "INTERVAL"
    return "STRING"


def api_field(f: dict[str, Any]) -> dict[str, Any]:
    """A declared field as the API answers it: under the legacy type names (INT64 → INTEGER, STRUCT → RECORD ...)."""
    out = dict(f)
    out["type"] = bq_type(f.get("type", "STRING"))
    if f.get("fields"):
        out["fields"] = [api_field(sub) for sub in f["fields"]]
    return out


def same_shape(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if bq_type(a.get("type", "")) != bq_type(b.get("type", "")):
        return False
    if (a.get("mode") == "REPEATED") != (b.get("mode") == "REPEATED"):
        return False
    fa, fb = a.get("fields") or [], b.get("fields") or []
    return len(fa) == len(fb) and all(x["name"].lower() == y["name"].lower() and same_shape(x, y) for x, y in zip(fa, fb))


def java_double(value: float) -> str:
    """`1.744756561357628E9`: Java's Double.toString for the magnitudes BigQuery writes timestamps in."""
    if value == 0:
        return "0.0"
    sign, digits, exp = Decimal(repr(float(value))).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    e = len(digits) - 1 + int(exp)
    if -3 <= e < 7:
        return repr(float(value))
    return ("-" if sign else "") + ds[0] + "." + (ds[1:] or "0") + f"E{e}"


def encode(value: Any, field: dict[str, Any], int64_ts: bool) -> Any:
    """A cell's `v`."""
    if value is None:
        return None
    if field.get("mode") == "REPEATED":
        scalar = {**field, "mode": "NULLABLE"}
        return [{"v": encode(v, scalar, int64_ts)} for v in value]
    kind = bq_type(field.get("type", "STRING"))
    if kind == "RECORD":
        subs = field.get("fields") or []
        if isinstance(value, dict):
            vals = list(value.values())
        else:
            vals = list(value)
        return {"f": [{"v": encode(v, f, int64_ts)} for v, f in zip(vals, subs)]}
    return scalar_text(value, kind, int64_ts)


def scalar_text(value: Any, kind: str, int64_ts: bool = False) -> str:
    if kind == "TIMESTAMP" and isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        micros = (aware - _EPOCH) // timedelta(microseconds=1)
        return str(micros) if int64_ts else java_double(micros / 1_000_000)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    if isinstance(value, Decimal):
        text = format(value.normalize(), "f")
        return text
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, timedelta):
        return _interval_text(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=str)
    return str(value)


def _interval_text(value: timedelta) -> str:
    seconds = value.total_seconds()
    return f"0-0 {value.days} {int(seconds % 86400 // 3600)}:{int(seconds % 3600 // 60)}:{seconds % 60:g}"


def export_text(value: Any, kind: str) -> str:
    """A value as BigQuery's CSV/JSON export writes it (`2025-04-15 22:36:01.357628 UTC` for TIMESTAMP)."""
    if value is None:
        return ""
    if kind == "TIMESTAMP" and isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        text = aware.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f").rstrip("0").rstrip(".")
        return text + " UTC"
    if kind == "DATETIME" and isinstance(value, datetime):
        return value.isoformat()
    return scalar_text(value, kind)
