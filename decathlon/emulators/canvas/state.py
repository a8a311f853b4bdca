"""The Canvas emulator's state as a folder (decathlon.emulators.kit.state): `canvas.json`, the whole store (users,
tokens, courses, enrollments, assignments, submissions, quizzes and their attempts, discussions, conversations,
modules, pages, events, files, the id sequences and the seeded generator) as plain records
(decathlon.emulators.kit.plain), a file's bytes in `blobs/` once large.

Handlers run on the event loop, which owns the store, so the work needs no lock. The store object stays the one
the app holds: its contents are replaced in place.
"""
from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Callable

from decathlon.emulators.canvas import model
from decathlon.emulators.canvas.store import Store
from decathlon.emulators.directory import Directory
from decathlon.emulators.kit.plain import Codec, PlainError
from decathlon.emulators.kit.state import FolderState, StateError, part, read_json, write_json

NAME = "canvas"
FILE = "canvas.json"
TYPES = tuple(c for _, c in inspect.getmembers(model, inspect.isclass)
              if dataclasses.is_dataclass(c) and c.__module__ == model.__name__)
_NOT_STATE = ("clock",)  # the process's, not the episode's


def fresh_store(directory: Directory, clock: Callable, seed: int = 0, id_floors: dict[str, int] | None = None,
                quiz_start_500: bool = True) -> Store:
    """The store `decathlon.emulators.canvas.start` begins with."""
    from decathlon.emulators.canvas.seed import build_store

    store = build_store(directory, clock, seed)
    for kind, floor in (id_floors or {}).items():
        store.bump_id(kind, floor)
    store.quiz_start_500 = quiz_start_500
    return store


class CanvasState(FolderState):
    name = NAME

    def __init__(self, store: Store, fresh: Callable[[], Store]) -> None:
        self.store, self.fresh = store, fresh

    def _replace(self, contents: dict) -> None:
        clock = self.store.clock
        self.store.__dict__.clear()
        self.store.__dict__.update(contents)
        self.store.clock = clock

    async def _fresh(self) -> None:
        self._replace(vars(self.fresh()))

    async def _dump(self, folder: Path) -> None:
        codec = Codec(TYPES, folder / "blobs")
        write_json(folder / FILE, codec.encode({k: v for k, v in vars(self.store).items() if k not in _NOT_STATE}))

    async def _load(self, folder: Path, seed: bool) -> None:
        path = part(folder, FILE, seed)
        if path is None:
            return
        try:
            doc = Codec(TYPES, folder / "blobs").decode(read_json(path))
        except PlainError as exc:
            raise StateError(f"{path}: {exc}", "bad_file") from None
        known = set(vars(self.store))
        if not isinstance(doc, dict) or set(doc) - known:
            unknown = sorted(set(doc) - known) if isinstance(doc, dict) else ["(not an object)"]
            raise StateError(f"{path}: not a Canvas store (unknown parts: {', '.join(unknown)})", "bad_file")
        self._replace({**vars(self.store), **doc})
