"""On-disk layout of the HTTP cassettes, shared by the host API and the in-process shim.

Standard library only: this module is loaded both as `decathlon.sandbox.http.site.decathlon_http_store` by the
host and as top-level `decathlon_http_store` inside foreign interpreters (via PYTHONPATH).

Files in a cassette workdir:
  <label>.journal.jsonl  record mode: one interaction per line, appended as each one completes, so
                         a process killed by SIGTERM/SIGKILL loses at most its in-flight request
  <label>.json           {"version", "process", "interactions": [...]}: a snapshot written
                         atomically at clean exit (record) or by prepare_replay (what replay reads)
  misses.jsonl           one line per replay miss (or shim failure), from any process
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

# The environment that switches a process on (set by decathlon.sandbox.http.env_for, read by the shim).
ENV_MODE = "DECATHLON_HTTP_MODE"  # "record" | "replay"; unset or empty: the shim does nothing
ENV_DIR = "DECATHLON_HTTP_DIR"  # the cassette workdir (absolute)
ENV_LABEL = "DECATHLON_HTTP_LABEL"  # this process's file stem in the workdir
ENV_REDACT = "DECATHLON_HTTP_REDACT_ENV"  # comma-separated NAMES of variables whose values are secret
ENV_SHIM = "DECATHLON_HTTP_SHIM"  # the directory with vcrpy and its dependencies
ENV_LIVE = "DECATHLON_HTTP_LIVE"  # comma-separated host:port of the episode's own services: always live

FORMAT_VERSION = 1
MISSES_FILE = "misses.jsonl"
JOURNAL_SUFFIX = ".journal.jsonl"
SNAPSHOT_SUFFIX = ".json"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def sanitize_label(label: str) -> str:
    """A label usable as a file stem: no separators, no leading dots, bounded length."""
    clean = _UNSAFE.sub("_", label).strip("._")[:100]
    return clean or "process"


def journal_path(workdir: Path, label: str) -> Path:
    return workdir / f"{label}{JOURNAL_SUFFIX}"


def snapshot_path(workdir: Path, label: str) -> Path:
    return workdir / f"{label}{SNAPSHOT_SUFFIX}"


def encode_body(body: bytes | None) -> tuple[str | None, str | None]:
    """(text, base64): text when the bytes are valid UTF-8, so cassettes stay readable and diffable."""
    if body is None:
        return None, None
    try:
        return body.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, base64.b64encode(body).decode("ascii")


def decode_body(part: dict[str, Any]) -> bytes | None:
    if part.get("body_b64") is not None:
        return base64.b64decode(part["body_b64"])
    if part.get("body") is not None:
        return str(part["body"]).encode("utf-8")
    return None


def append_line(path: Path, obj: Any) -> None:
    """Append one JSON line; flock keeps lines whole when several processes share a label."""
    data = (json.dumps(obj, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, data)
    finally:
        os.close(fd)  # closing releases the lock


def read_lines(path: Path) -> list[dict[str, Any]]:
    """Every complete JSON line; a line cut short by a kill mid-write is skipped, not fatal."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    out = []
    for line in raw.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def write_json_atomic(path: Path, obj: Any) -> None:
    """Write to a temp file in the same directory, then rename: readers never see half a file."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(obj, out, ensure_ascii=False, sort_keys=True, indent=1)
            out.write("\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def snapshot(label: str, interactions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"version": FORMAT_VERSION, "process": label, "interactions": interactions}


def read_snapshot(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
        raise ValueError(f"{path}: not a version-{FORMAT_VERSION} HTTP cassette")
    return list(data.get("interactions") or [])


def read_process(workdir: Path, label: str) -> list[dict[str, Any]]:
    """A process's interactions: the journal when there is one (it is never behind the snapshot)."""
    journal = journal_path(workdir, label)
    if journal.exists():
        return read_lines(journal)
    return read_snapshot(snapshot_path(workdir, label))


def labels(workdir: Path) -> list[str]:
    found: set[str] = set()
    for path in workdir.iterdir() if workdir.is_dir() else ():
        name = path.name
        if name.startswith("."):
            continue
        if name.endswith(JOURNAL_SUFFIX):
            found.add(name[: -len(JOURNAL_SUFFIX)])
        elif name.endswith(SNAPSHOT_SUFFIX):
            found.add(name[: -len(SNAPSHOT_SUFFIX)])
    return sorted(found)
