"""The emulated Cloud Logging state of one episode, in memory: per parent (a project) its log buckets and sinks,
and every log entry written, in arrival order. Nothing is shared between processes or persisted."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

# The buckets every project has from the start, in `global` (as on a real project): (id, retention, locked).
BUILT_IN_BUCKETS = (("_Default", 30, False), ("_Required", 400, True))


@dataclass
class StoredEntry:
    seq: int  # arrival order: breaks timestamp ties as the API does (stable order of equal timestamps)
    parent: str  # projects/P
    log_name: str  # canonical: the log id URL-encoded
    at: datetime  # the entry's timestamp, for ordering and windows
    message: Any  # the LogEntry protobuf, returned as written (plus the fields the API fills in)
    doc: dict[str, Any]  # the entry in its REST JSON shape, which filters are evaluated on


@dataclass
class Parent:
    name: str
    buckets: dict[str, Any] = field(default_factory=dict)  # full bucket name -> LogBucket protobuf
    sinks: dict[str, Any] = field(default_factory=dict)  # sink id -> LogSink protobuf


@dataclass
class Store:
    new_bucket: Callable[[str, int, bool], Any]  # (full name, retention days, locked) -> LogBucket, for built-ins
    parents: dict[str, Parent] = field(default_factory=dict)
    entries: list[StoredEntry] = field(default_factory=list)
    next_seq: int = 0

    def parent(self, name: str) -> Parent:
        """The parent's state, created on first use with the built-in buckets a real project has."""
        found = self.parents.get(name)
        if found is None:
            found = self.parents[name] = Parent(name)
            for bucket_id, retention, locked in BUILT_IN_BUCKETS:
                full = f"{name}/locations/global/buckets/{bucket_id}"
                found.buckets[full] = self.new_bucket(full, retention, locked)
        return found

    def add_entry(self, parent: str, log_name: str, at: datetime, message: Any, doc: dict[str, Any]) -> None:
        self.entries.append(StoredEntry(self.next_seq, parent, log_name, at, message, doc))
        self.next_seq += 1

    def delete_log(self, log_name: str) -> int:
        kept = [e for e in self.entries if e.log_name != log_name]
        removed = len(self.entries) - len(kept)
        self.entries = kept
        return removed
