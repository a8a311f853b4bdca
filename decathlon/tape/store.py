"""Reading, checking and writing cassette files (format `decathlon-cassette`, version 1)."""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

from decathlon.tape import nesting
from decathlon.tape.errors import CassetteError
from decathlon.errors import Kind

FORMAT = "decathlon-cassette"
VERSION = 1
RECORDER = "decathlon-recorder 1"


def dumps(data: dict) -> str:
    """Stable and diff-friendly: sorted keys, one value per line, real UTF-8."""
    return json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def content_hash(data: dict) -> str:
    body = {k: v for k, v in data.items() if k != "meta"}
    meta = {k: v for k, v in data.get("meta", {}).items() if k != "content_hash"}
    canon = json.dumps({"body": body, "meta": meta}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canon.encode("utf-8", "surrogatepass")).hexdigest()


def seal(data: dict) -> dict:
    data = {**data, "format": FORMAT, "version": VERSION}
    data["meta"] = {**data.get("meta", {}), "recorder": RECORDER}
    data["meta"]["content_hash"] = content_hash(data)
    return data


def write_atomic(path: Path, text: str) -> None:
    """Whole or not at all: a temp file in the same folder, fsynced, then renamed over."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would make committed fixtures unreadable to others
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save(path: Path, data: dict) -> dict:
    sealed = seal(data)
    write_atomic(path, dumps(sealed))
    return sealed


def validate(data: Any, where: str) -> dict:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CassetteError(Kind.BAD_CASSETTE, f"{where} is not a decathlon cassette (no \"format\": \"{FORMAT}\")")
    if not isinstance(data.get("meta", {}), dict):
        raise CassetteError(Kind.BAD_CASSETTE, f"{where}: `meta` must be an object")
    if data.get("version") != VERSION:
        raise CassetteError(Kind.CASSETTE_VERSION, f"{where} is cassette version {data.get('version')!r}; this "
                            f"decathlon reads version {VERSION}: re-record it with `decathlon record`")
    want = data.get("meta", {}).get("content_hash")
    have = content_hash(data)
    if want != have:
        raise CassetteError(Kind.CASSETTE_HASH, f"{where}: content hash mismatch (recorded {want}, computed {have}); "
                            "the file was edited or damaged after recording")
    servers = data.get("servers")
    if not isinstance(servers, dict):
        raise CassetteError(Kind.BAD_CASSETTE, f"{where}: `servers` must be an object")
    for name, rec in servers.items():
        if not isinstance(rec, dict) or not isinstance(rec.get("tools"), list) or not isinstance(rec.get("interactions"), list):
            raise CassetteError(Kind.BAD_CASSETTE, f"{where}: server {name!r} needs `tools` and `interactions` lists")
    return data


def load(path: Path) -> dict:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise CassetteError(Kind.CASSETTE_MISSING, f"no cassette at {path}: record one with `decathlon record`") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(Kind.CASSETTE_UNREADABLE, f"cannot read cassette {path}: {exc}") from exc
    try:
        data = nesting.loads(raw)
    except nesting.TooDeep as exc:
        # No recording nests this deep, so it is damaged or hostile (and the hash walk would recurse).
        raise CassetteError(Kind.BAD_CASSETTE, f"{path} is {exc} to be a cassette") from None
    except json.JSONDecodeError as exc:
        raise CassetteError(Kind.BAD_CASSETTE, f"{path} is not valid JSON: {exc}") from exc
    return validate(data, str(path))


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys included (for secret scans); iterative, so no depth breaks it."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, dict):
            for k, v in reversed(list(node.items())):
                stack += [v, k]  # popped as k, then v: the order a recursive walk gives
