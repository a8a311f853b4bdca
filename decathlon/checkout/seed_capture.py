"""`decathlon seeds capture`: a task's seed pack written from a live account, read-only.

For each resource the task's preprocess starts from (decathlon.sandbox.vendor_seeds), each of the pack's files is
the vendor's answer to one GET (a Drive file's metadata, a spreadsheet with its grid data), written as it came, with
the emulator's manifest beside them: the emulator loads it with load_seed as it would load its own snapshot. Nothing
is sent but those GETs; the token is read from a file and never written.

`endpoint` sends every request to one address instead of the vendor's hosts (the request keeps the vendor's host in
its Host header): an emulator standing in for the vendor, in tests.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from urllib.parse import urlsplit

import httpx

from decathlon.emulators.kit.state import MANIFEST, Manifest, write_json
from decathlon.errors import InfraError, Kind
from decathlon.sandbox.vendor_seeds import Need

MAX_BYTES = 256 * 1024 * 1024  # one answer: the largest template known is ~20 MB of grid JSON
TIMEOUT = httpx.Timeout(60.0, connect=15.0)


@dataclass(frozen=True)
class Written:
    need: Need
    path: Path
    size: int


def _request(url: str, endpoint: str | None) -> tuple[str, dict[str, str]]:
    if endpoint is None:
        return url, {}
    parts = urlsplit(url)
    return endpoint.rstrip("/") + parts.path + (f"?{parts.query}" if parts.query else ""), {"Host": parts.netloc}


def _fetch(client: httpx.Client, url: str, token: str, endpoint: str | None, need: Need) -> bytes:
    target, headers = _request(url, endpoint)
    try:
        with client.stream("GET", target, headers={**headers, "Authorization": f"Bearer {token}"}) as response:
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_BYTES:
                    raise InfraError(Kind.SEED_FAILED, f"{url}: the answer is over {MAX_BYTES // 2**20} MiB")
            if response.status_code != 200:
                raise InfraError(Kind.SEED_FAILED, f"{need.label()}: GET {url} answered {response.status_code}: "
                                 f"{_message(bytes(body))}")
    except httpx.HTTPError as exc:
        raise InfraError(Kind.SEED_FAILED, f"{need.label()}: GET {url} failed: {exc}") from None
    try:
        json.loads(body)
    except ValueError:
        raise InfraError(Kind.SEED_FAILED, f"{need.label()}: GET {url} did not answer JSON") from None
    return bytes(body)


def _message(body: bytes) -> str:
    try:
        doc = json.loads(body)
        return str(doc.get("error", {}).get("message") or doc)[:300]
    except (ValueError, AttributeError):
        return body[:300].decode("utf-8", "replace")


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def capture(needs: list[Need], library: Path, token: str, endpoint: str | None = None,
            progress: Callable[[str], None] = lambda line: None) -> list[Written]:
    """Every file of every need written under `library/<task>/`; a failure names the resource and stops, leaving
    what was written before it (each file whole: written aside, then moved in)."""
    written: list[Written] = []
    with httpx.Client(timeout=TIMEOUT, follow_redirects=False) as client:
        for need in needs:
            pack = library / need.task
            for (_, url_template), path in zip(need.source.files, need.paths()):
                url = url_template.format(id=need.resource)
                data = _fetch(client, url, token, endpoint, need)
                _write(pack / path, data)
                written.append(Written(need, pack / path, len(data)))
                progress(f"{need.task}: {path} ({len(data):,} bytes) from GET {url}")
            manifest = pack / need.emulator / MANIFEST
            if not manifest.is_file():
                write_json(manifest, Manifest(need.emulator).to_json())
    return written
