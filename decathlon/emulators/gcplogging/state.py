"""The Cloud Logging emulator's state as a folder (decathlon.emulators.kit.state):

    logging/parents.json   each project used: its log buckets and sinks, in the API's JSON (LogBucket, LogSink)
    logging/entries.json   every entry in arrival order, in the API's JSON (LogEntry); one whose payload type this
                           process cannot print is kept as its protobuf bytes ({"protobuf": base64})
    counters.json          the next arrival number and the id generator's state (insert ids that follow repeat)

A seed may hold either file; an entry there is taken as written (no defaults are filled in). Handlers run on the event
loop, which owns the store, so this work needs no lock.
"""
from __future__ import annotations

import base64
import random
from pathlib import Path
from typing import Any

from google.protobuf import json_format  # type: ignore[import-untyped,unused-ignore]
from google.protobuf.message import DecodeError  # type: ignore[import-not-found,import-untyped,unused-ignore]

from decathlon.emulators.kit.ids import Ids
from decathlon.emulators.kit.plain import Codec, PlainError
from decathlon.emulators.kit.state import FolderState, StateError, part, read_json, write_json

from . import messages as m
from .logging_service import entry_doc
from .store import Parent, Store

NAME = "gcplogging"


def _json(message: Any) -> Any:
    try:
        return json_format.MessageToDict(message)
    except (TypeError, KeyError, json_format.Error):
        return {"protobuf": base64.b64encode(message.SerializeToString(deterministic=True)).decode()}


def _message(doc: Any, cls: Any, where: str) -> Any:
    out = cls()
    try:
        if isinstance(doc, dict) and set(doc) == {"protobuf"}:
            out.ParseFromString(base64.b64decode(doc["protobuf"], validate=True))
        else:
            json_format.ParseDict(doc, out)
    except (json_format.ParseError, DecodeError, TypeError, ValueError) as exc:
        raise StateError(f"{where}: not a {cls.DESCRIPTOR.name}: {exc}", "bad_file") from None
    return out


class LoggingState(FolderState):
    name = NAME

    def __init__(self, store: Store, ids: Ids) -> None:
        self.store, self.ids = store, ids
        self._fresh_ids = ids._rng.getstate()
        self.codec = Codec(())

    async def _fresh(self) -> None:
        self.store.parents.clear()
        self.store.entries = []
        self.store.next_seq = 0
        self.ids._rng.setstate(self._fresh_ids)

    async def _dump(self, folder: Path) -> None:
        # In the order they were made: the API lists buckets and sinks so.
        parents = [{"name": p.name, "buckets": [_json(b) for b in p.buckets.values()],
                    "sinks": [_json(s) for s in p.sinks.values()]} for p in self.store.parents.values()]
        write_json(folder / "logging" / "parents.json", parents)
        write_json(folder / "logging" / "entries.json",
                   [{"seq": e.seq, "parent": e.parent, "entry": _json(e.message)} for e in self.store.entries])
        rng = random.Random()
        rng.setstate(self.ids._rng.getstate())
        write_json(folder / "counters.json", {"next_seq": self.store.next_seq, "ids": self.codec.encode(rng)})

    async def _load(self, folder: Path, seed: bool) -> None:
        path = part(folder, "logging/parents.json", seed)
        for i, doc in enumerate(self._list(path)):
            if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
                raise StateError(f"{path}, parent {i}: an object with its \"name\" (projects/P)", "bad_file")
            parent = Parent(doc["name"])
            for b in doc.get("buckets") or []:
                bucket = _message(b, m.LogBucket, f"{path}, {doc['name']}")
                parent.buckets[bucket.name] = bucket
            for s in doc.get("sinks") or []:
                sink = _message(s, m.LogSink, f"{path}, {doc['name']}")
                parent.sinks[sink.name] = sink
            self.store.parents[parent.name] = parent
        path = part(folder, "logging/entries.json", seed)
        for i, doc in enumerate(self._list(path)):
            if not isinstance(doc, dict) or not isinstance(doc.get("parent"), str):
                raise StateError(f"{path}, entry {i}: an object with \"parent\" (projects/P) and \"entry\"", "bad_file")
            raw = doc.get("entry")
            entry = _message(raw, m.LogEntry, f"{path}, entry {i}")
            given = doc.get("seq")
            seq: int = given if isinstance(given, int) else self.store.next_seq
            # The JSON kept is the entry's REST shape, which filters read: parsed once, not printed again.
            self.store.entries.append(_stored(seq, doc["parent"], entry,
                                              raw if isinstance(raw, dict) and "protobuf" not in raw else None))
            self.store.next_seq = max(self.store.next_seq, seq + 1)
        path = part(folder, "counters.json", seed)
        if path is not None:
            counters = read_json(path)
            try:
                rng = self.codec.decode(counters.get("ids")) if isinstance(counters, dict) else None
            except PlainError:
                rng = None
            if not isinstance(rng, random.Random) or not isinstance(counters.get("next_seq"), int):
                raise StateError(f"{path} must hold \"next_seq\" (a number) and \"ids\" (a $random)", "bad_file")
            self.store.next_seq = counters["next_seq"]
            self.ids._rng.setstate(rng.getstate())

    @staticmethod
    def _list(path: Path | None) -> list[Any]:
        docs = read_json(path) if path else []
        if not isinstance(docs, list):
            raise StateError(f"{path} must hold a list", "bad_file")
        return docs


def _stored(seq: int, parent: str, entry: Any, doc: dict[str, Any] | None) -> Any:
    from datetime import timezone

    from .store import StoredEntry

    at = entry.timestamp.ToDatetime(tzinfo=timezone.utc)
    return StoredEntry(seq, parent, entry.log_name, at, entry, doc if doc is not None else entry_doc(entry))
