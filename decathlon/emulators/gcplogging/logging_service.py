"""google.logging.v2.LoggingServiceV2: write entries, list them with the Logging query language, list and delete
logs.

Routing is out of scope: every entry of a project is visible through the project and through any bucket view
of it (`projects/P/locations/L/buckets/B/views/_AllLogs`), whatever sinks say. A request with one bad entry
fails whole (INVALID_ARGUMENT), partial_success or not.
"""
from __future__ import annotations

import string
from typing import Any

from google.protobuf import json_format  # type: ignore[import-untyped]

from decathlon.emulators.kit.clock import Clock
from decathlon.emulators.kit.ids import Ids

from . import messages as m
from . import names
from .config_service import paged
from .errors import invalid, not_found
from .filter import FilterError
from .filter import parse as parse_filter
from .store import Store

MAX_ENTRY_BYTES = 256 * 1024  # the API's limit on one entry
MAX_PAGE_SIZE = 1000
_VIEWS = ("_AllLogs", "_Default")
_ORDERS = {"timestamp asc": False, "timestamp desc": True}


def entry_doc(entry: Any) -> dict[str, Any]:
    """The entry as the REST API shows it, for filters. A protoPayload of a type this process has not loaded
    (audit logs, App Engine request logs) is loaded on demand; one of an unknown type shows only its @type."""
    try:
        return json_format.MessageToDict(entry)
    except (TypeError, KeyError, json_format.Error):
        pass
    _load_payload_types()
    try:
        return json_format.MessageToDict(entry)
    except (TypeError, KeyError, json_format.Error):
        bare = m.LogEntry()
        bare.CopyFrom(entry)
        bare.ClearField("proto_payload")
        doc = json_format.MessageToDict(bare)
        doc["protoPayload"] = {"@type": entry.proto_payload.type_url}
        return doc


def _load_payload_types() -> None:
    for module in ("google.cloud.audit.audit_log_pb2", "google.cloud.appengine_logging_v1.proto.request_log_pb2"):
        try:
            __import__(module)
        except ImportError:
            continue


class LoggingService:
    NAME = "google.logging.v2.LoggingServiceV2"

    def __init__(self, store: Store, clock: Clock, ids: Ids) -> None:
        self.store = store
        self.clock = clock
        self.ids = ids

    def WriteLogEntries(self, req: Any) -> Any:
        now = self.clock()
        prepared = []
        for index, source in enumerate(req.entries):
            entry = m.LogEntry()
            entry.CopyFrom(source)
            log_name = entry.log_name or req.log_name
            if not log_name:
                raise invalid(f"entries[{index}]: a log name must be set on the entry or on the request")
            parent, entry.log_name = names.log(log_name)
            if not entry.HasField("resource"):
                if not req.HasField("resource"):
                    raise invalid(f"entries[{index}]: a monitored resource must be set on the entry or on the request")
                entry.resource.CopyFrom(req.resource)
            for key, value in req.labels.items():
                if key not in entry.labels:
                    entry.labels[key] = value
            if not entry.HasField("timestamp"):
                entry.timestamp.FromDatetime(now)
            entry.receive_timestamp.FromDatetime(now)
            if not entry.insert_id:
                entry.insert_id = self.ids.alnum(14, string.ascii_lowercase + string.digits)
            size = entry.ByteSize()
            if size > MAX_ENTRY_BYTES:
                raise invalid(f"Log entry with size {size / 1024:.1f}K exceeds maximum size of 256.0K")
            prepared.append((parent, entry))
        if not req.dry_run:
            for parent, entry in prepared:
                self.store.add_entry(parent, entry.log_name, entry.timestamp.ToDatetime(tzinfo=now.tzinfo), entry,
                                     entry_doc(entry))
        return m.WriteLogEntriesResponse()

    def _parents(self, resource_names: Any) -> set[str]:
        if not resource_names:
            raise invalid("resource_names must name at least one resource, such as projects/[PROJECT_ID]")
        parents = set()
        for name in resource_names:
            as_view = names.view(name)
            if as_view is None:
                parents.add(names.parent(name, "resource name"))
                continue
            bucket, view_id = as_view
            found = self.store.parent(bucket.parent).buckets.get(str(bucket))
            if found is None:
                raise not_found(f"Bucket {bucket.bucket_id} does not exist")
            if view_id not in _VIEWS:
                raise not_found(f"View {view_id} does not exist")
            parents.add(bucket.parent)
        return parents

    def ListLogEntries(self, req: Any) -> Any:
        parents = self._parents(req.resource_names)
        try:
            compiled = parse_filter(req.filter)
        except FilterError as exc:
            raise invalid(str(exc)) from None
        order = " ".join(req.order_by.lower().split()) or "timestamp asc"
        if order not in _ORDERS:
            raise invalid(f"Invalid order_by \"{req.order_by}\": only \"timestamp asc\" and \"timestamp desc\" are supported")
        if req.page_size < 0 or req.page_size > MAX_PAGE_SIZE:
            raise invalid(f"page_size must be between 0 and {MAX_PAGE_SIZE}, got {req.page_size}")
        try:
            matched = [e for e in self.store.entries if e.parent in parents and compiled.matches(e.doc)]
        except RecursionError:
            raise invalid("Unparseable filter: the filter is nested too deeply") from None
        matched.sort(key=lambda e: (e.at, e.seq), reverse=_ORDERS[order])
        chunk, nxt = paged(matched, req.page_token, req.page_size, default=50, cap=MAX_PAGE_SIZE)
        return m.ListLogEntriesResponse(entries=[e.message for e in chunk], next_page_token=nxt)

    def ListLogs(self, req: Any) -> Any:
        parents = self._parents(list(req.resource_names) or [req.parent])
        if req.parent:
            names.parent(req.parent)
        logs = sorted({e.log_name for e in self.store.entries if e.parent in parents})
        chunk, nxt = paged(logs, req.page_token, req.page_size, default=1000, cap=MAX_PAGE_SIZE)
        return m.ListLogsResponse(log_names=chunk, next_page_token=nxt)

    def DeleteLog(self, req: Any) -> Any:
        _, log_name = names.log(req.log_name)
        if not self.store.delete_log(log_name):
            raise not_found(f"Log {req.log_name} does not exist")
        return m.Empty()

