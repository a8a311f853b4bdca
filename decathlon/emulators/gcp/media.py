"""Upload bodies both APIs accept: `multipart/related` (a JSON metadata part, then the media part, whatever
its Content-Type: the BigQuery client sends `*/*` for load_table_from_json) and resumable sessions
(POST opens one and answers its URL in `Location`; PUTs with `Content-Range` fill it)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from decathlon.emulators.gcp.errors import invalid

_BOUNDARY = re.compile(r'boundary="?([^";]+)"?', re.I)


def multipart_related(content_type: str, data: bytes) -> tuple[dict[str, Any], bytes, str]:
    """(metadata, media, media content type) of a multipart/related body."""
    m = _BOUNDARY.search(content_type or "")
    if not m:
        raise invalid("Missing boundary in multipart/related Content-Type.")
    delim = b"--" + m.group(1).encode()
    parts = []
    for chunk in data.split(delim)[1:]:
        if chunk.startswith(b"--"):
            break
        chunk = chunk[2:] if chunk.startswith(b"\r\n") else chunk.lstrip(b"\n")
        head, sep, payload = chunk.partition(b"\r\n\r\n")
        if not sep:
            head, sep, payload = chunk.partition(b"\n\n")
        payload = payload[:-2] if payload.endswith(b"\r\n") else payload.removesuffix(b"\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (line.partition(":") for line in head.decode("latin-1").splitlines() if ":" in line)}
        parts.append((headers, payload))
    if len(parts) < 2:
        raise invalid("Multipart upload needs a metadata part and a media part.")
    try:
        metadata = json.loads(parts[0][1] or b"{}")
    except ValueError:
        raise invalid("Invalid JSON payload in the metadata part.") from None
    return metadata, parts[1][1], parts[1][0].get("content-type", "application/octet-stream")


@dataclass
class ResumableSession:
    upload_id: str
    metadata: dict[str, Any]
    params: dict[str, str]
    data: bytearray = field(default_factory=bytearray)
    content_type: str = "application/octet-stream"


_RANGE = re.compile(r"bytes\s+(?:(\d+)-(\d+)|\*)/(\d+|\*)")


def apply_chunk(session: ResumableSession, content_range: str | None, chunk: bytes) -> bool:
    """Appends `chunk`; True once the upload is complete (the total is known and reached)."""
    if not content_range:
        session.data += chunk
        return True
    m = _RANGE.match(content_range.strip())
    if not m:
        raise invalid(f"Invalid Content-Range: {content_range}")
    start, _end, total = m.groups()
    if start is not None:
        del session.data[int(start):]
        session.data += chunk
    return total != "*" and len(session.data) >= int(total)
