"""Datasets, tables and result pages as BigQuery v2 REST writes them."""
from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from decathlon.emulators.gcp.bigquery.store import Dataset, Table, Warehouse
from decathlon.emulators.gcp.bigquery.types import encode
from decathlon.emulators.gcp.errors import invalid
from decathlon.emulators.kit.clock import epoch_millis

API = "https://bigquery.googleapis.com/bigquery/v2"
PAGE_BYTES = 10 * 1024 * 1024  # BigQuery's cap on one response's rows


def etag(*parts: object) -> str:
    return base64.b64encode(hashlib.md5("/".join(map(str, parts)).encode()).digest()[:12]).decode()


def dataset_json(d: Dataset, brief: bool = False) -> dict[str, Any]:
    ref = {"datasetId": d.dataset_id, "projectId": d.project}
    out: dict[str, Any] = {"kind": "bigquery#dataset", "id": f"{d.project}:{d.dataset_id}", "datasetReference": ref,
                           "location": d.location}
    if d.labels:
        out["labels"] = dict(d.labels)
    if d.friendly_name:
        out["friendlyName"] = d.friendly_name
    if brief:
        return out
    out.update({"etag": etag(d.project, d.dataset_id, d.modified),
                "selfLink": f"{API}/projects/{d.project}/datasets/{d.dataset_id}",
                "creationTime": epoch_millis(d.created), "lastModifiedTime": epoch_millis(d.modified), "type": "DEFAULT",
                "access": [{"role": "WRITER", "specialGroup": "projectWriters"},
                           {"role": "OWNER", "specialGroup": "projectOwners"},
                           {"role": "READER", "specialGroup": "projectReaders"}],
                "maxTimeTravelHours": "168", "isCaseInsensitive": False})
    if d.description is not None:
        out["description"] = d.description
    if d.default_table_expiration_ms:
        out["defaultTableExpirationMs"] = d.default_table_expiration_ms
    return out


def table_json(t: Table, wh: Warehouse, brief: bool = False) -> dict[str, Any]:
    ref = {"projectId": t.project, "datasetId": t.dataset_id, "tableId": t.table_id}
    out: dict[str, Any] = {"kind": "bigquery#table", "id": f"{t.project}:{t.dataset_id}.{t.table_id}",
                           "tableReference": ref, "type": t.kind, "creationTime": epoch_millis(t.created)}
    for key, value in (("timePartitioning", t.time_partitioning), ("rangePartitioning", t.range_partitioning),
                       ("clustering", t.clustering), ("friendlyName", t.friendly_name), ("expirationTime", t.expiration_time)):
        if value:
            out[key] = value
    if t.labels:
        out["labels"] = dict(t.labels)
    if brief:
        if t.kind == "VIEW":
            out["view"] = {"useLegacySql": False}
        return out
    rows = wh.num_rows(t)
    fields = wh.schema(t)
    out.update({"etag": etag(t.key, t.modified),
                "selfLink": f"{API}/projects/{t.project}/datasets/{t.dataset_id}/tables/{t.table_id}",
                "lastModifiedTime": epoch_millis(t.modified), "location": wh.datasets[(t.project, t.dataset_id)].location
                if (t.project, t.dataset_id) in wh.datasets else "US",
                "numRows": str(rows), "numBytes": str(rows * max(len(fields), 1) * 8), "numLongTermBytes": "0",
                "numTotalLogicalBytes": str(rows * max(len(fields), 1) * 8), "numActiveLogicalBytes": "0",
                "numLongTermLogicalBytes": "0"})
    if fields:
        out["schema"] = {"fields": fields}
    if t.description is not None:
        out["description"] = t.description
    if t.kind == "VIEW":
        out["view"] = {"query": t.view_query or "", "useLegacySql": False}
    return out


def page_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode().rstrip("=")


def page_offset(token: str | None, start_index: str | None) -> int:
    if token:
        try:
            return int(base64.urlsafe_b64decode(token.encode() + b"==").decode().removeprefix("o:"))
        except (ValueError, UnicodeDecodeError):
            raise invalid(f"Invalid page token: {token}") from None
    try:
        return int(start_index or 0)
    except ValueError:
        raise invalid(f"Invalid startIndex: {start_index}") from None


def rows_page(rows: list[tuple[Any, ...]], fields: list[dict[str, Any]], offset: int, max_results: int | None,
              int64_ts: bool, total: int | None = None) -> tuple[list[dict[str, Any]], str | None]:
    """One page of `{"f": [...]}` rows from `offset`, at most `max_results` rows and ~10 MB; and the next token."""
    out = []
    size = 0
    limit = len(rows) if max_results is None else min(len(rows), offset + max(max_results, 0))
    i = offset
    while i < limit and size < PAGE_BYTES:
        cells = [{"v": encode(v, f, int64_ts)} for v, f in zip(rows[i], fields)]
        # an estimate of the JSON size (nested cells counted generously), cheaper than serialising each row twice
        size += sum(len(c["v"]) + 8 if isinstance(c["v"], str) else 8 if c["v"] is None else len(json.dumps(c["v"]))
                    for c in cells) + 8
        out.append({"f": cells})
        i += 1
    end = i
    more = end < (total if total is not None else len(rows))
    return out, page_token(end) if more and (max_results is None or max_results > 0) else None
