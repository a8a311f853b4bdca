"""The memory file: where it is, reading it into a graph, writing a graph back.

Format (the reference's): one JSON object per line, entities first, then relations, each
written as ``{"type":"entity",...}`` / ``{"type":"relation",...}`` (``type`` first, then the
object's own keys in their order), lines joined by ``\\n`` with no trailing newline. Reading
keeps every parsed line whose ``type`` is ``"entity"`` or ``"relation"`` exactly as parsed,
``type`` and any extra keys included (the recorded runs show ``"type": "entity"`` in
``read_graph`` output, in the key order of the seeded file); other lines are parsed and dropped.
There is no state besides the file: every call reads it afresh and every change rewrites it.
"""

from __future__ import annotations

import errno
import os
import posixpath
import secrets
import stat
from dataclasses import dataclass, field
from typing import Any

from .jsonparse import parse
from .jsvalues import JS_WHITESPACE, JsError, get, pair_surrogates, spread_into
from .stringify import stringify

DEFAULT_FILE_NAME = "memory.json"

# libuv's wording, which Node puts into fs error messages.
_UV_DESCRIPTIONS = {
    errno.ENOENT: "no such file or directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EISDIR: "illegal operation on a directory",
    errno.ENOTDIR: "not a directory",
    errno.ELOOP: "too many symbolic links encountered",
    errno.ENAMETOOLONG: "name too long",
    errno.ENOSPC: "no space left on device",
    errno.EROFS: "read-only file system",
    errno.EIO: "i/o error",
    errno.EMFILE: "too many open files",
    errno.EBUSY: "resource busy or locked",
    errno.ETXTBSY: "text file is busy",
}


def resolve_memory_path(env_value: str | None, cwd: str) -> str:
    """Where the graph lives, given MEMORY_FILE_PATH.

    As upstream, an absolute value is used verbatim and an unset or empty one means the default
    file name. Upstream anchors relative paths (and the default) at its own install directory
    inside the npm package; a Python module's directory is no place for data, so here they are
    anchored at the working directory instead (Toolathlon always passes an absolute path).
    """
    if not env_value:
        return posixpath.join(cwd, DEFAULT_FILE_NAME)
    if posixpath.isabs(env_value):
        return env_value
    joined = posixpath.normpath(posixpath.join(cwd, env_value))  # Node's path.join normalises
    return joined + "/" if env_value.endswith("/") and joined != "/" else joined


def _node_error(exc: OSError, syscall: str, path: str | None) -> JsError:
    code = errno.errorcode.get(exc.errno or 0, "UNKNOWN")
    description = _UV_DESCRIPTIONS.get(exc.errno or 0) or (exc.strerror or "unknown error").lower()
    suffix = f" '{path}'" if path is not None else ""
    return JsError(f"{code}: {description}, {syscall}{suffix}")


@dataclass
class Graph:
    entities: list[Any] = field(default_factory=list)
    relations: list[Any] = field(default_factory=list)

    def as_object(self) -> dict[str, Any]:
        return {"entities": self.entities, "relations": self.relations}


class MemoryFile:
    def __init__(self, path: str) -> None:
        self.path = path

    def _read_text(self) -> str | None:
        try:
            with open(self.path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            return None  # the reference's only tolerated error: no file yet means an empty graph
        except IsADirectoryError as exc:
            # Node opens a directory fine and fails on the read, so its message names no path.
            raise _node_error(exc, "read", None) from None
        except OSError as exc:
            raise _node_error(exc, "open", self.path) from None
        return data.decode("utf-8", "replace")

    def load(self) -> Graph:
        graph = Graph()
        text = self._read_text()
        if text is None:
            return graph
        for line in text.split("\n"):
            if not line.strip(JS_WHITESPACE):
                continue
            item = parse(line)  # the first bad line fails the whole call, as upstream
            kind = get(item, "type")  # a line holding `null` fails here, as in JavaScript
            if kind == "entity":
                graph.entities.append(item)
            elif kind == "relation":
                graph.relations.append(item)
        return graph

    def save(self, graph: Graph) -> None:
        lines = [_line("entity", entity) for entity in graph.entities]
        lines += [_line("relation", relation) for relation in graph.relations]
        # stringify escapes lone surrogates, so after pairing the text is valid UTF-8, as Node writes it.
        self._write_atomically(pair_surrogates("\n".join(lines)).encode("utf-8"))

    def _write_atomically(self, data: bytes) -> None:
        # Write a sibling temporary file and rename it over the target, so a crash or a concurrent
        # reader never sees half a file. Like Node's writeFile, a symlinked path is written through.
        target = os.path.realpath(self.path)
        directory, name = posixpath.split(target)
        temporary = posixpath.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            previous = os.stat(target)
        except OSError:
            previous = None
        try:
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) and previous is not None:
                self._write_in_place(data)  # an unwritable directory does not stop upstream from rewriting the file
                return
            raise _node_error(exc, "open", self.path) from None
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
            if previous is not None:
                # The file keeps its permissions (and, where allowed, its owner), as an in-place rewrite would.
                os.chmod(temporary, stat.S_IMODE(previous.st_mode))
                _chown_quietly(temporary, previous.st_uid, previous.st_gid)
            os.replace(temporary, target)
        except OSError as exc:
            _remove_quietly(temporary)
            raise _node_error(exc, "open", self.path) from None
        except BaseException:
            _remove_quietly(temporary)
            raise

    def _write_in_place(self, data: bytes) -> None:
        try:
            with open(self.path, "wb") as handle:
                handle.write(data)
        except OSError as exc:
            raise _node_error(exc, "open", self.path) from None


def _line(kind: str, item: Any) -> str:
    # Upstream writes {type: kind, ...item}: "type" leads, the item's own keys follow (and win).
    record: dict[str, Any] = {"type": kind}
    spread_into(record, item)
    return stringify(record)


def _chown_quietly(path: str, uid: int, gid: int) -> None:
    try:
        os.chown(path, uid, gid)
    except OSError:
        pass  # only root may give a file away; the new file then belongs to this process's user


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
