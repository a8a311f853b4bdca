"""google.logging.v2.ConfigServiceV2: log buckets (created, listed, updated, deleted as the API does it: a
deleted bucket stays listed as DELETE_REQUESTED, so its id cannot be reused) and sinks (stored and listed; no
entries are routed through them)."""
from __future__ import annotations

import hashlib
from typing import Any

from decathlon.emulators.kit.clock import Clock
from decathlon.emulators.kit.paging import BadPageToken, page

from . import messages as m
from . import names
from .errors import ApiError, invalid, not_found
from .filter import FilterError
from .filter import parse as parse_filter
from .store import BUILT_IN_BUCKETS, Store

_BUILT_IN_IDS = {bucket_id for bucket_id, _, _ in BUILT_IN_BUCKETS}
_BUCKET_FIELDS = ("description", "retention_days", "locked", "analytics_enabled", "restricted_fields", "index_configs")
_SINK_FIELDS = ("destination", "filter", "description", "disabled", "exclusions", "output_version_format",
                "include_children", "bigquery_options")
_SINK_DESTINATIONS = ("storage.googleapis.com/", "bigquery.googleapis.com/projects/", "pubsub.googleapis.com/projects/",
                      "logging.googleapis.com/projects/")
MAX_RETENTION_DAYS = 3650


def new_bucket(clock: Clock, name: str, retention_days: int, locked: bool) -> Any:
    bucket = m.LogBucket(name=name, retention_days=retention_days, locked=locked, lifecycle_state=m.ACTIVE)
    now = clock()
    bucket.create_time.FromDatetime(now)
    bucket.update_time.FromDatetime(now)
    return bucket


def paged(items: list[Any], token: str, size: int, default: int = 50, cap: int = 1000) -> tuple[list[Any], str]:
    try:
        chunk, nxt = page(items, token or None, size if size > 0 else None, default, cap)
    except BadPageToken:
        raise invalid("The page token is invalid.") from None
    return chunk, nxt or ""


def project_number(parent: str) -> str:
    """A stable 12-digit number for a project id, as the API shows one in service-agent identities."""
    return str(10 ** 11 + int(hashlib.sha256(parent.encode()).hexdigest(), 16) % (9 * 10 ** 11))


class ConfigService:
    NAME = "google.logging.v2.ConfigServiceV2"

    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    # ------------------------------------------------------------------------------------------- buckets

    def ListBuckets(self, req: Any) -> Any:
        parent, location = names.location_parent(req.parent)
        buckets = [b for full, b in sorted(self.store.parent(parent).buckets.items())
                   if location == "-" or names.bucket(full).location == location]
        chunk, nxt = paged(buckets, req.page_token, req.page_size)
        return m.ListBucketsResponse(buckets=chunk, next_page_token=nxt)

    def _bucket(self, name: str) -> tuple[names.BucketName, Any]:
        parsed = names.bucket(name)
        found = self.store.parent(parsed.parent).buckets.get(str(parsed))
        if found is None:
            raise not_found(f"Bucket {parsed.bucket_id} does not exist")
        return parsed, found

    def GetBucket(self, req: Any) -> Any:
        return self._bucket(req.name)[1]

    def CreateBucket(self, req: Any) -> Any:
        parent, location = names.location_parent(req.parent)
        if location == "-":
            raise invalid("The location \"-\" cannot be used to create a bucket; name a location such as \"global\"")
        bucket_id = req.bucket_id
        if not bucket_id:
            raise invalid("bucket_id must be specified")
        if not names.BUCKET_ID.fullmatch(bucket_id) or bucket_id.startswith("_"):
            raise invalid(f"Invalid bucket_id \"{bucket_id}\": it may contain only letters, digits, underscores, "
                          "hyphens and periods, must not start with an underscore, and must be at most 100 characters")
        full = f"{parent}/locations/{location}/buckets/{bucket_id}"
        state = self.store.parent(parent)
        if full in state.buckets:
            raise ApiError("ALREADY_EXISTS", f"Bucket {bucket_id} already exists")
        retention = req.bucket.retention_days or 30
        if not 1 <= retention <= MAX_RETENTION_DAYS:
            raise invalid(f"retention_days must be between 1 and {MAX_RETENTION_DAYS}, got {retention}")
        bucket = new_bucket(self.clock, full, retention, req.bucket.locked)
        for name in ("description", "analytics_enabled", "restricted_fields", "index_configs"):
            _copy(req.bucket, bucket, name)
        state.buckets[full] = bucket
        return bucket

    def UpdateBucket(self, req: Any) -> Any:
        parsed, bucket = self._bucket(req.name)
        if parsed.bucket_id == "_Required":
            raise ApiError("FAILED_PRECONDITION", "The _Required bucket cannot be modified")
        if bucket.lifecycle_state != m.ACTIVE:
            raise ApiError("FAILED_PRECONDITION", f"Bucket {parsed.bucket_id} is not active and cannot be updated")
        paths = list(req.update_mask.paths)
        if not paths:
            raise invalid("update_mask must name at least one field to update")
        unknown = [p for p in paths if p not in _BUCKET_FIELDS]
        if unknown:
            raise invalid(f"Invalid update_mask path(s): {', '.join(unknown)}")
        if "retention_days" in paths:
            retention = req.bucket.retention_days or 30
            if not 1 <= retention <= MAX_RETENTION_DAYS:
                raise invalid(f"retention_days must be between 1 and {MAX_RETENTION_DAYS}, got {retention}")
            if bucket.locked and retention < bucket.retention_days:
                raise ApiError("FAILED_PRECONDITION",
                               f"Bucket {parsed.bucket_id} is locked: its retention period cannot be reduced")
        if bucket.locked and "locked" in paths and not req.bucket.locked:
            raise ApiError("FAILED_PRECONDITION", f"Bucket {parsed.bucket_id} is locked and cannot be unlocked")
        for path in paths:
            _copy(req.bucket, bucket, path)
        if "retention_days" in paths and not bucket.retention_days:
            bucket.retention_days = 30
        bucket.update_time.FromDatetime(self.clock())
        return bucket

    def DeleteBucket(self, req: Any) -> Any:
        parsed, bucket = self._bucket(req.name)
        if parsed.bucket_id in _BUILT_IN_IDS and parsed.location == "global":
            raise ApiError("FAILED_PRECONDITION", f"The {parsed.bucket_id} bucket cannot be deleted")
        if bucket.locked:
            raise ApiError("FAILED_PRECONDITION", f"Bucket {parsed.bucket_id} is locked and cannot be deleted")
        if bucket.lifecycle_state == m.DELETE_REQUESTED:
            raise ApiError("FAILED_PRECONDITION", f"Bucket {parsed.bucket_id} is already in DELETE_REQUESTED state")
        bucket.lifecycle_state = m.DELETE_REQUESTED
        bucket.update_time.FromDatetime(self.clock())
        return m.Empty()

    def UndeleteBucket(self, req: Any) -> Any:
        parsed, bucket = self._bucket(req.name)
        if bucket.lifecycle_state != m.DELETE_REQUESTED:
            raise ApiError("FAILED_PRECONDITION", f"Bucket {parsed.bucket_id} is not in DELETE_REQUESTED state")
        bucket.lifecycle_state = m.ACTIVE
        bucket.update_time.FromDatetime(self.clock())
        return m.Empty()

    # ------------------------------------------------------------------------------------------- sinks

    def ListSinks(self, req: Any) -> Any:
        # Cloud Logging lists a project's own sinks by name, then its built-in _Required and _Default, in that order
        # (the recorded runs' list_log_sinks answers show it).
        last = {"_Required": 1, "_Default": 2}
        sinks = [s for _, s in sorted(self.store.parent(names.parent(req.parent)).sinks.items(),
                                      key=lambda item: (last.get(item[0], 0), item[0]))]
        chunk, nxt = paged(sinks, req.page_token, req.page_size)
        return m.ListSinksResponse(sinks=chunk, next_page_token=nxt)

    def _sink(self, sink_name: str) -> tuple[str, str, Any]:
        parent, sink_id = names.sink(sink_name)
        found = self.store.parent(parent).sinks.get(sink_id)
        if found is None:
            raise not_found(f"Sink {sink_id} does not exist")
        return parent, sink_id, found

    def GetSink(self, req: Any) -> Any:
        return self._sink(req.sink_name)[2]

    def CreateSink(self, req: Any) -> Any:
        parent = names.parent(req.parent)
        sink_id = req.sink.name
        if not names.SINK_ID.fullmatch(sink_id or ""):
            raise invalid(f"Invalid sink name \"{sink_id}\": it may contain only letters, digits, underscores, "
                          "hyphens and periods, and must be at most 100 characters")
        _check_sink(req.sink)
        state = self.store.parent(parent)
        if sink_id in state.sinks:
            raise ApiError("ALREADY_EXISTS", f"Sink {sink_id} already exists")
        sink = m.LogSink(name=sink_id)
        for name in _SINK_FIELDS:
            _copy(req.sink, sink, name)
        sink.writer_identity = self._writer_identity(parent)
        now = self.clock()
        sink.create_time.FromDatetime(now)
        sink.update_time.FromDatetime(now)
        state.sinks[sink_id] = sink
        return sink

    def UpdateSink(self, req: Any) -> Any:
        parent, sink_id, sink = self._sink(req.sink_name)
        # without a mask the API updates the fields it always did: destination, filter, include_children
        paths = list(req.update_mask.paths) or ["destination", "filter", "include_children"]
        unknown = [p for p in paths if p not in _SINK_FIELDS]
        if unknown:
            raise invalid(f"Invalid update_mask path(s): {', '.join(unknown)}")
        candidate = m.LogSink()
        candidate.CopyFrom(sink)
        for path in paths:
            _copy(req.sink, candidate, path)
        _check_sink(candidate)
        sink.CopyFrom(candidate)
        sink.update_time.FromDatetime(self.clock())
        return sink

    def DeleteSink(self, req: Any) -> Any:
        parent, sink_id, _ = self._sink(req.sink_name)
        del self.store.parent(parent).sinks[sink_id]
        return m.Empty()

    def _writer_identity(self, parent: str) -> str:
        return f"serviceAccount:service-{project_number(parent)}@gcp-sa-logging.iam.gserviceaccount.com"


def _check_sink(sink: Any) -> None:
    if not sink.destination:
        raise invalid("Sink destination must be specified")
    if not sink.destination.startswith(_SINK_DESTINATIONS):
        raise invalid(f"Invalid sink destination \"{sink.destination}\"")
    try:
        parse_filter(sink.filter)
        for exclusion in sink.exclusions:
            parse_filter(exclusion.filter)
    except FilterError as exc:
        raise invalid(str(exc)) from None


def _copy(source: Any, target: Any, name: str) -> None:
    field = source.DESCRIPTOR.fields_by_name[name]
    if field.label == field.LABEL_REPEATED:
        target.ClearField(name)
        getattr(target, name).extend(getattr(source, name))
    elif field.message_type is not None:
        if source.HasField(name):
            getattr(target, name).CopyFrom(getattr(source, name))
        else:
            target.ClearField(name)
    else:
        setattr(target, name, getattr(source, name))
