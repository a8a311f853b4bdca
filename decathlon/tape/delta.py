"""Workspace side effects of a tool call: recorded as a delta, re-applied on replay.

A replayed server answers from the cassette, but the evaluator reads the workspace: the files a
call created, changed or removed must appear exactly as they did when it was recorded.
"""
from __future__ import annotations

import base64
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from decathlon.tape.errors import CassetteError
from decathlon.errors import Kind


@dataclass
class Snapshot:
    files: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # rel → (size, mtime_ns, mode)
    dirs: set[str] = field(default_factory=set)


def snapshot(root: Path, skip: tuple[str, ...] = ()) -> Snapshot:
    snap = Snapshot()
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(d for d in dirnames if (d if rel_dir == "." else f"{rel_dir}/{d}") not in skip)
        for d in dirnames:
            snap.dirs.add(d if rel_dir == "." else f"{rel_dir}/{d}")
        for name in filenames:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except FileNotFoundError:
                continue
            snap.files[rel] = (st.st_size, st.st_mtime_ns, st.st_mode & 0o777)
    return snap


def _encode(data: bytes) -> dict:
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(data).decode("ascii")}


def diff(root: Path, before: Snapshot, after: Snapshot) -> dict | None:
    """What changed between two snapshots, with the new files' contents; None when nothing did."""
    written = []
    for rel in sorted(after.files):
        if before.files.get(rel) != after.files[rel]:
            try:
                data = (root / rel).read_bytes()
            except OSError:
                continue
            written.append({"path": rel, "mode": after.files[rel][2], **_encode(data)})
    removed = sorted(set(before.files) - set(after.files))
    made = sorted(after.dirs - before.dirs)
    gone = sorted(before.dirs - after.dirs)
    if not (written or removed or made or gone):
        return None
    out: dict = {}
    if written:
        out["write"] = written
    if removed:
        out["remove"] = removed
    if made:
        out["mkdir"] = made
    if gone:
        out["rmdir"] = gone
    return out


def _inside(root: Path, rel: str) -> Path:
    target = (root / rel).resolve()
    if target != root.resolve() and root.resolve() not in target.parents:
        raise CassetteError(Kind.BAD_CASSETTE, f"workspace delta path {rel!r} leaves the workspace")
    return target


def apply(root: Path, delta: dict | None) -> None:
    if not delta:
        return
    for rel in delta.get("rmdir", []):
        shutil.rmtree(_inside(root, rel), ignore_errors=True)
    for rel in delta.get("remove", []):
        _inside(root, rel).unlink(missing_ok=True)
    for rel in delta.get("mkdir", []):
        _inside(root, rel).mkdir(parents=True, exist_ok=True)
    for item in delta.get("write", []):
        target = _inside(root, item["path"])
        target.parent.mkdir(parents=True, exist_ok=True)
        data = item["text"].encode("utf-8") if "text" in item else base64.b64decode(item["b64"])
        target.write_bytes(data)
        os.chmod(target, item.get("mode", 0o644))
