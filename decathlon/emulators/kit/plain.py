"""An emulator's in-memory records as plain JSON and back, for its snapshots (decathlon.emulators.kit.state).

JSON's own values stay themselves; what JSON lacks is one small tagged object each, so a person can read and write
a seed by hand: `{"$datetime": "2025-10-17T23:00:28+00:00"}`, `{"$tuple": [...]}`, `{"$set": [...]}` (sorted),
`{"$dict": [[key, value], ...]}` (keys that are not strings), `{"$bytes": base64}` (or `{"$blob": sha256}`, the bytes
in a file of their own once they are large), `{"$decimal": "1.50"}`, `{"$random": state}` (a seeded generator), and
`{"$type": "Course", ...fields}` for a record (a dataclass). Only the record types the emulator lists are made on
the way back: a seed names types, it never names code to import.

Dicts keep their insertion order (an API lists objects in that order), so the same state always gives the same
bytes, and a restored state gives them again.
"""
from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import math
import random
import struct
from collections import defaultdict
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Iterable

BLOB_BYTES = 4096  # bytes longer than this go to a file of their own under blobs/
_FACTORIES: dict[str, Callable[[], Any]] = {"int": int, "list": list, "dict": dict, "set": set}


class PlainError(ValueError):
    """A document this codec cannot read (an unknown tag or record type, a missing blob)."""


def _canonical(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class Codec:
    def __init__(self, types: Iterable[type], blobs: Path | None = None) -> None:
        """`types`: the record classes a document may hold; `blobs`: the folder large bytes go to (None: inline)."""
        self.types = {t.__name__: t for t in types}
        self.blobs = blobs

    # encoding ------------------------------------------------------------------------------------
    def encode(self, value: Any) -> Any:
        if value is None or isinstance(value, (bool, int, str)):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else {"$float": repr(value)}
        if isinstance(value, list):
            return [self.encode(v) for v in value]
        if isinstance(value, defaultdict):
            name = getattr(value.default_factory, "__name__", "")
            if name not in _FACTORIES:
                raise TypeError(f"a defaultdict of {name or 'no factory'} cannot be kept")
            return {"$defaultdict": name, "items": self._items(value)}
        if isinstance(value, dict):
            if all(isinstance(k, str) and not k.startswith("$") for k in value):
                return {k: self.encode(v) for k, v in value.items()}
            return {"$dict": self._items(value)}
        if isinstance(value, tuple):
            return {"$tuple": [self.encode(v) for v in value]}
        if isinstance(value, (set, frozenset)):
            items = sorted((self.encode(v) for v in value), key=_canonical)
            return {"$frozenset" if isinstance(value, frozenset) else "$set": items}
        if isinstance(value, datetime):
            return {"$datetime": value.isoformat()}
        if isinstance(value, date):
            return {"$date": value.isoformat()}
        if isinstance(value, time):
            return {"$time": value.isoformat()}
        if isinstance(value, timedelta):
            return {"$timedelta": [value.days, value.seconds, value.microseconds]}
        if isinstance(value, Decimal):
            return {"$decimal": str(value)}
        if isinstance(value, (bytes, bytearray, memoryview)):
            return self._bytes(bytes(value))
        if isinstance(value, random.Random):
            version, internal, gauss = value.getstate()  # Mersenne Twister: 624 words and a position
            return {"$random": [version, base64.b64encode(struct.pack(f">{len(internal)}I", *internal)).decode(), gauss]}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            name = type(value).__name__
            if self.types.get(name) is not type(value):
                raise TypeError(f"record type {name} is not one this emulator keeps")
            out: dict[str, Any] = {"$type": name}
            for f in dataclasses.fields(value):
                out[f.name] = self.encode(getattr(value, f.name))
            return out
        raise TypeError(f"a {type(value).__name__} cannot be kept in a snapshot")

    def _items(self, value: dict) -> list[list[Any]]:
        return [[self.encode(k), self.encode(v)] for k, v in value.items()]

    def _bytes(self, data: bytes) -> dict[str, str]:
        if self.blobs is None or len(data) <= BLOB_BYTES:
            return {"$bytes": base64.b64encode(data).decode()}
        digest = hashlib.sha256(data).hexdigest()
        path = self.blobs / digest
        if not path.exists():
            self.blobs.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return {"$blob": digest}

    # decoding ------------------------------------------------------------------------------------
    def decode(self, doc: Any) -> Any:
        if doc is None or isinstance(doc, (bool, int, float, str)):
            return doc
        if isinstance(doc, list):
            return [self.decode(v) for v in doc]
        if not isinstance(doc, dict):
            raise PlainError(f"not a JSON value: {type(doc).__name__}")
        tags = [k for k in doc if k.startswith("$")]
        if not tags:
            return {k: self.decode(v) for k, v in doc.items()}
        tag = tags[0]
        body = doc[tag]
        try:
            return self._tagged(tag, body, doc)
        except PlainError:
            raise
        except (TypeError, ValueError, KeyError, IndexError) as exc:
            raise PlainError(f"a bad {tag} value {str(body)[:80]!r}: {exc}") from None

    def _tagged(self, tag: str, body: Any, doc: dict[str, Any]) -> Any:
        if tag == "$type":
            cls: Any = self.types.get(body)
            if cls is None:
                raise PlainError(f"unknown record type {body!r}; this emulator keeps: {', '.join(sorted(self.types))}")
            obj = cls.__new__(cls)  # no __init__/__post_init__: the fields are the record as it was kept
            names = {f.name for f in dataclasses.fields(cls)}
            for key, value in doc.items():
                if key == "$type":
                    continue
                if key not in names:
                    raise PlainError(f"{body} has no field {key!r}")
                object.__setattr__(obj, key, self.decode(value))
            missing = [f for f in dataclasses.fields(cls) if f.name not in doc]
            for f in missing:
                if f.default is not dataclasses.MISSING:
                    object.__setattr__(obj, f.name, f.default)
                elif f.default_factory is not dataclasses.MISSING:
                    object.__setattr__(obj, f.name, f.default_factory())
                else:
                    raise PlainError(f"{body} lacks its field {f.name!r}")
            return obj
        if tag == "$dict":
            return {self._key(k): self.decode(v) for k, v in body}
        if tag == "$defaultdict":
            factory = _FACTORIES.get(body)
            if factory is None:
                raise PlainError(f"unknown defaultdict factory {body!r}")
            return defaultdict(factory, {self._key(k): self.decode(v) for k, v in doc.get("items", [])})
        if tag == "$tuple":
            return tuple(self.decode(v) for v in body)
        if tag == "$set":
            return {self._key(v) for v in body}
        if tag == "$frozenset":
            return frozenset(self._key(v) for v in body)
        if tag == "$datetime":
            return datetime.fromisoformat(body)
        if tag == "$date":
            return date.fromisoformat(body)
        if tag == "$time":
            return time.fromisoformat(body)
        if tag == "$timedelta":
            return timedelta(days=body[0], seconds=body[1], microseconds=body[2])
        if tag == "$decimal":
            return Decimal(body)
        if tag == "$float":
            return float(body)
        if tag == "$bytes":
            return base64.b64decode(body, validate=True)
        if tag == "$blob":
            return self._blob(body)
        if tag == "$random":
            raw = base64.b64decode(body[1], validate=True)
            rng = random.Random()
            rng.setstate((body[0], struct.unpack(f">{len(raw) // 4}I", raw), body[2]))
            return rng
        raise PlainError(f"unknown tag {tag!r}")

    def _key(self, doc: Any) -> Any:
        value = self.decode(doc)
        return tuple(value) if isinstance(value, list) else value  # a key must hash

    def _blob(self, digest: Any) -> bytes:
        if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise PlainError(f"a blob is named by its sha256, not {str(digest)[:80]!r}")
        if self.blobs is None:
            raise PlainError("this document names blobs but has no blobs folder")
        path = self.blobs / digest
        try:
            data = path.read_bytes()
        except OSError:
            raise PlainError(f"blob {digest} is missing from {self.blobs}") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise PlainError(f"blob {digest} does not hold the bytes it is named for")
        return data
