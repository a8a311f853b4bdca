"""The episode's buckets and objects, in memory. Shared with BigQuery (extract jobs write here, loads read)."""
from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from datetime import datetime

from decathlon.emulators.kit.clock import Clock
from decathlon.emulators.kit.ids import Ids


def _crc32c(data: bytes) -> str | None:
    try:
        import google_crc32c  # type: ignore[import-not-found]
    except ImportError:  # the saas venv has it (google-resumable-media needs it); elsewhere md5 alone
        return None
    return base64.b64encode(google_crc32c.value(data).to_bytes(4, "big")).decode()


@dataclass
class Blob:
    bucket: str
    name: str
    data: bytes
    content_type: str
    generation: int
    created: datetime
    updated: datetime
    metageneration: int = 1
    metadata: dict[str, str] = field(default_factory=dict)
    cache_control: str | None = None
    content_encoding: str | None = None
    content_disposition: str | None = None
    md5: str = ""
    crc32c: str | None = None

    def __post_init__(self) -> None:
        self.md5 = base64.b64encode(hashlib.md5(self.data).digest()).decode()
        self.crc32c = _crc32c(self.data)


@dataclass
class Bucket:
    name: str
    project: str
    location: str
    storage_class: str
    created: datetime
    updated: datetime
    metageneration: int = 1
    labels: dict[str, str] = field(default_factory=dict)
    objects: dict[str, Blob] = field(default_factory=dict)


@dataclass
class StorageStore:
    clock: Clock
    ids: Ids
    buckets: dict[str, Bucket] = field(default_factory=dict)
    _generation: int = 0

    def next_generation(self) -> int:
        # Real generations are microsecond timestamps; strictly increasing even under a frozen clock.
        self._generation = max(self._generation + 1, int(self.clock().timestamp() * 1_000_000))
        return self._generation

    def put(self, bucket: Bucket, name: str, data: bytes, content_type: str | None = None,
            metadata: dict[str, str] | None = None) -> Blob:
        now = self.clock()
        blob = Blob(bucket.name, name, bytes(data), content_type or "application/octet-stream", self.next_generation(),
                    now, now, metadata=dict(metadata or {}))
        old = bucket.objects.get(name)
        if old is not None:
            blob.created = now
        bucket.objects[name] = blob
        return blob
