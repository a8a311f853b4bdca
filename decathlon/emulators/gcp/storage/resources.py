"""Buckets and objects as the JSON API writes them."""
from __future__ import annotations

import base64
import hashlib
from typing import Any
from urllib.parse import quote

from aiohttp import web

from decathlon.emulators.gcp.storage.store import Blob, Bucket
from decathlon.emulators.kit.clock import rfc3339


def base_url(request: web.Request) -> str:
    """The origin the client called: behind the SaaS front the hop is plain HTTP, yet the client spoke HTTPS."""
    proto = request.headers.get("X-Forwarded-Proto")
    if not proto:
        proto = "https" if request.host.split(":")[0].endswith("googleapis.com") else request.scheme
    return f"{proto}://{request.host}"


def project_number(project: str) -> str:
    return str(int(hashlib.sha256(project.encode()).hexdigest(), 16) % 10**12).rjust(12, "1")


def etag(*parts: object) -> str:
    return base64.b64encode(hashlib.md5("/".join(map(str, parts)).encode()).digest()[:8]).decode()


def bucket_json(request: web.Request, b: Bucket) -> dict[str, Any]:
    multi = b.location in ("US", "EU", "ASIA")
    out: dict[str, Any] = {
        "kind": "storage#bucket", "selfLink": f"{base_url(request)}/storage/v1/b/{b.name}", "id": b.name,
        "name": b.name, "projectNumber": project_number(b.project), "metageneration": str(b.metageneration),
        "location": b.location, "storageClass": b.storage_class, "etag": etag(b.name, b.metageneration),
        "timeCreated": rfc3339(b.created), "updated": rfc3339(b.updated),
        "locationType": "multi-region" if multi else "region", "rpo": "DEFAULT",
        "iamConfiguration": {"bucketPolicyOnly": {"enabled": False}, "uniformBucketLevelAccess": {"enabled": False},
                             "publicAccessPrevention": "inherited"},
        "softDeletePolicy": {"retentionDurationSeconds": "604800", "effectiveTime": rfc3339(b.created)},
    }
    if b.labels:
        out["labels"] = dict(b.labels)
    return out


def object_json(request: web.Request, o: Blob) -> dict[str, Any]:
    base = base_url(request)
    qname = quote(o.name, safe="")
    out: dict[str, Any] = {
        "kind": "storage#object", "id": f"{o.bucket}/{o.name}/{o.generation}",
        "selfLink": f"{base}/storage/v1/b/{o.bucket}/o/{qname}",
        "mediaLink": f"{base}/download/storage/v1/b/{o.bucket}/o/{qname}?generation={o.generation}&alt=media",
        "name": o.name, "bucket": o.bucket, "generation": str(o.generation), "metageneration": str(o.metageneration),
        "contentType": o.content_type, "storageClass": "STANDARD", "size": str(len(o.data)), "md5Hash": o.md5,
        "etag": etag(o.bucket, o.name, o.generation, o.metageneration), "timeCreated": rfc3339(o.created),
        "updated": rfc3339(o.updated), "timeStorageClassUpdated": rfc3339(o.created),
        "timeFinalized": rfc3339(o.created),
    }
    if o.crc32c:
        out["crc32c"] = o.crc32c
    for key, value in (("cacheControl", o.cache_control), ("contentEncoding", o.content_encoding),
                       ("contentDisposition", o.content_disposition)):
        if value:
            out[key] = value
    if o.metadata:
        out["metadata"] = dict(o.metadata)
    return out
