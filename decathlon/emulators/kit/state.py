"""State as a kit feature: every emulator can be reset, snapshotted, restored and seeded, by the grader alone (over
the control socket, decathlon.emulators.kit.control).

A snapshot is a plain folder of plain files: JSON for records, Parquet for tables, .eml for mail, raw bytes for
stored objects, and `manifest.json` naming the emulator and the format's version. The same state always gives the
same bytes (records in their stored order, JSON written one way), so a snapshot can be diffed, committed and
compared. A seed pack (a folder a user prepares, often a snapshot trimmed or edited) has the same format: a seed
may leave parts out (they stay as a fresh emulator has them), a snapshot to restore may not.

An emulator implements `State`; most do it by subclassing `FolderState`, which checks the folder and its manifest
and leaves three hooks: `_fresh()` (the state of a newly started emulator), `_dump(folder)` and `_load(folder, seed)`.
A restore or seed that fails part-way leaves the emulator fresh (reset), never half of two states, and says so.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

FORMAT = 1
MANIFEST = "manifest.json"


class StateError(Exception):
    """A request the emulator refuses, with the reason the grader reads (a bad folder, a foreign manifest)."""

    def __init__(self, message: str, code: str = "bad_request", status: int = 400) -> None:
        super().__init__(message)
        self.message, self.code, self.status = message, code, status


@runtime_checkable
class State(Protocol):
    """What every emulator's state offers the grader. Folders are already checked to lie in the state root."""

    name: str

    async def reset(self) -> None:
        """Back to the state the emulator started in (seeded from the task root, nothing else)."""

    async def snapshot(self, folder: Path) -> dict[str, Any]:
        """Write the whole state to `folder` (absent or empty, or an earlier snapshot, which is replaced)."""

    async def restore(self, folder: Path) -> dict[str, Any]:
        """Replace the whole state with the snapshot in `folder`."""

    async def load_seed(self, folder: Path) -> dict[str, Any]:
        """Reset, then take in the seed pack in `folder` (any part of a snapshot)."""


@dataclass(frozen=True)
class Manifest:
    emulator: str
    format: int = FORMAT

    def to_json(self) -> dict[str, Any]:
        return {"emulator": self.emulator, "format": self.format}


def _compact(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def write_json(path: Path, doc: Any) -> None:
    """JSON written one way: a top-level list or object one item per line (a diff of two snapshots shows the records
    that changed), each item compact (the C encoder: an indented dump is pure Python, several times slower);
    insertion order kept (callers sort what has no order of its own); UTF-8."""
    if isinstance(doc, list) and doc:
        text = "[\n" + ",\n".join(_compact(item) for item in doc) + "\n]\n"
    elif isinstance(doc, dict) and doc:
        text = "{\n" + ",\n".join(f"{_compact(k)}:{_compact(v)}" for k, v in doc.items()) + "\n}\n"
    else:
        text = _compact(doc) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def read_json(path: Path, what: str | None = None) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StateError(f"{what or path.name} is missing: {path}", "missing_file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise StateError(f"{what or path.name} is not valid JSON ({path}): {exc}", "bad_file") from None


def read_manifest(folder: Path, emulator: str) -> Manifest:
    if not folder.is_dir():
        raise StateError(f"no such folder: {folder}", "missing_folder", 404)
    doc = read_json(folder / MANIFEST, MANIFEST)
    if not isinstance(doc, dict) or not isinstance(doc.get("emulator"), str) or not isinstance(doc.get("format"), int):
        raise StateError(f"{folder / MANIFEST} must be an object with \"emulator\" (a name) and \"format\" (a number)",
                         "bad_manifest")
    if doc["emulator"] != emulator:
        raise StateError(f"{folder} holds the {doc['emulator']!r} emulator's state, not the {emulator!r} emulator's",
                         "wrong_emulator")
    if doc["format"] != FORMAT:
        raise StateError(f"{folder} is in format {doc['format']}; this emulator reads format {FORMAT}",
                         "unknown_format")
    return Manifest(doc["emulator"], doc["format"])


def within(root: Path, given: Any) -> Path:
    """`given` (relative to `root`, or absolute) as a path inside `root`, links resolved; else a StateError."""
    if not isinstance(given, str) or not given or "\x00" in given:
        raise StateError("\"folder\" must be a non-empty path (a string)", "bad_folder")
    base = Path(os.path.realpath(root))
    path = Path(os.path.realpath(base / given))
    if path != base and base not in path.parents:
        raise StateError(f"{given} is outside the state root {base}: snapshots and seeds live under it",
                         "outside_root", 403)
    if path == base:
        raise StateError(f"{given} is the state root itself; name a folder inside it", "bad_folder")
    return path


def count_files(folder: Path) -> int:
    return sum(1 for p in folder.rglob("*") if p.is_file())


class FolderState(ABC):
    """The folder handling every emulator shares; subclasses provide the three hooks (they may run work off the
    event loop, under the emulator's own locks)."""

    name: str = ""

    @abstractmethod
    async def _fresh(self) -> None:
        """Make the state a newly started emulator's."""

    @abstractmethod
    async def _dump(self, folder: Path) -> None:
        """Write the state's files into `folder` (empty; the manifest is written after)."""

    @abstractmethod
    async def _load(self, folder: Path, seed: bool) -> None:
        """Take in `folder` on a fresh state; with `seed`, a part that is absent stays fresh."""

    async def reset(self) -> None:
        await self._fresh()

    async def snapshot(self, folder: Path) -> dict[str, Any]:
        started = time.monotonic()
        if folder.exists():
            if not folder.is_dir():
                raise StateError(f"{folder} is a file, not a folder", "bad_folder")
            if any(folder.iterdir()) and not (folder / MANIFEST).is_file():
                raise StateError(f"{folder} holds files and no snapshot's manifest: it is not replaced", "not_empty",
                                 409)
        folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        try:
            await self._dump(work)
            write_json(work / MANIFEST, Manifest(self.name).to_json())
            if folder.exists():
                shutil.rmtree(folder)
            os.rename(work, folder)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return {"folder": str(folder), "files": count_files(folder), "ms": round((time.monotonic() - started) * 1000, 1)}

    async def restore(self, folder: Path) -> dict[str, Any]:
        return await self._take(folder, seed=False)

    async def load_seed(self, folder: Path) -> dict[str, Any]:
        return await self._take(folder, seed=True)

    async def _take(self, folder: Path, seed: bool) -> dict[str, Any]:
        started = time.monotonic()
        read_manifest(folder, self.name)
        await self._fresh()
        try:
            await self._load(folder, seed)
        except BaseException as exc:
            await self._fresh()
            if isinstance(exc, StateError):
                raise StateError(f"{exc.message} (the {self.name} emulator is reset to its fresh state)", exc.code,
                                 exc.status) from None
            raise
        return {"folder": str(folder), "ms": round((time.monotonic() - started) * 1000, 1)}


def part(folder: Path, name: str, seed: bool) -> Path | None:
    """`folder/name` if present; absent, None for a seed (that part stays fresh) and an error for a snapshot."""
    path = folder / name
    if path.exists():
        return path
    if seed:
        return None
    raise StateError(f"{path} is missing: a snapshot to restore holds every part of the state (a seed may leave "
                     "parts out)", "missing_file")
