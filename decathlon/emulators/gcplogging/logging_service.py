"""google.logging.v2.LoggingServiceV2: write entries, list them with the Logging query language, list and delete
logs.

Routing is out of scope: every entry of a project is visible through the project and through any bucket view
of it (`projects/P/locations/L/buckets/B/views/_AllLogs`), whatever sinks say. A request with one bad entry
fails whole (INVALID_ARGUMENT), partial_success or not.

ListLogEntries matches on a worker thread, against a snapshot of the entries, and stops at the caller's deadline
or MAX_LIST_SECONDS, whichever comes first (DEADLINE_EXCEEDED): one client's costly filter never holds up the
event loop, so every other client's calls go on being answered.
"""
from __future__ import annotations

import asyncio
import math
import string
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from google.protobuf import json_format  # type: ignore[import-untyped]

from decathlon.emulators.kit.clock import Clock
from decathlon.emulators.kit.ids import Ids

from . import messages as m
from . import names
from .config_service import paged
from .errors import deadline_exceeded, invalid, not_found
from .filter import Deadline, Filter, FilterError, FilterTimeout
from .filter import parse as parse_filter
from .store import Store, StoredEntry

MAX_ENTRY_BYTES = 256 * 1024  # the API's limit on one entry
MAX_PAGE_SIZE = 1000
_VIEWS = ("_AllLogs", "_Default")
_ORDERS = {"timestamp asc": False, "timestamp desc": True}
MAX_LIST_SECONDS = 10.0  # the server's own bound on one listing, whatever deadline the caller set (or none)
# Listings matched at once; more wait their turn, their deadline running (so at most MAX_LIST_SECONDS). Not
# more: matching is Python holding the GIL, and dozens of threads would starve the event loop of it too.
LIST_WORKERS = 8
# How long past its deadline a listing's answer may wait for its worker, which stops at its next comparison:
# only one comparison that is itself slow (a huge entry) could make it late.
_WORKER_GRACE_SECONDS = 0.25


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

    def __init__(self, store: Store, clock: Clock, ids: Ids, max_list_seconds: float = MAX_LIST_SECONDS) -> None:
        self.store = store
        self.clock = clock
        self.ids = ids
        self.max_list_seconds = max_list_seconds
        self._workers = ThreadPoolExecutor(max_workers=LIST_WORKERS, thread_name_prefix="gcplogging-list")

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

    async def ListLogEntries(self, req: Any, call_deadline: float | None) -> Any:
        """`call_deadline`: the caller's, a time.monotonic() instant (None: it set none)."""
        parents = self._parents(req.resource_names)
        # the loop owns the store: the worker gets the list as it is now (entries are never changed once stored)
        entries = list(self.store.entries)
        deadline = Deadline(min(time.monotonic() + self.max_list_seconds,
                                math.inf if call_deadline is None else call_deadline))
        work = asyncio.get_running_loop().run_in_executor(self._workers, _list_entries, req, parents, entries,
                                                          deadline)
        try:
            return await asyncio.wait_for(work, max(deadline.at - time.monotonic(), 0) + _WORKER_GRACE_SECONDS)
        except (FilterTimeout, TimeoutError):
            raise deadline_exceeded() from None
        finally:
            deadline.cancel()  # answered, timed out or the caller gone: a worker still matching stops

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


def _list_entries(req: Any, parents: set[str], entries: list[StoredEntry], deadline: Deadline) -> Any:
    """One page of ListLogEntries, on a worker thread: parsing, matching, ordering."""
    compiled = _filter(req.filter)
    order = " ".join(req.order_by.lower().split()) or "timestamp asc"
    if order not in _ORDERS:
        raise invalid(f"Invalid order_by \"{req.order_by}\": only \"timestamp asc\" and \"timestamp desc\" are supported")
    if req.page_size < 0 or req.page_size > MAX_PAGE_SIZE:
        raise invalid(f"page_size must be between 0 and {MAX_PAGE_SIZE}, got {req.page_size}")
    matched = _matching(entries, parents, compiled, deadline)
    matched.sort(key=lambda e: (e.at, e.seq), reverse=_ORDERS[order])
    chunk, nxt = paged(matched, req.page_token, req.page_size, default=50, cap=MAX_PAGE_SIZE)
    return m.ListLogEntriesResponse(entries=[e.message for e in chunk], next_page_token=nxt)


def _filter(text: str) -> Filter:
    try:
        return parse_filter(text)
    except FilterError as exc:
        raise invalid(str(exc)) from None


def _matching(entries: list[StoredEntry], parents: set[str], compiled: Filter, deadline: Deadline) -> list[StoredEntry]:
    """The entries of `parents` that match; raises FilterTimeout once `deadline` passes."""
    try:
        return [e for e in entries if e.parent in parents and compiled.matches(e.doc, deadline)]
    except RecursionError:
        raise invalid("Unparseable filter: the filter is nested too deeply") from None
