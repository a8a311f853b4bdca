"""File reading and writing with the reference server's observable behaviour.

``head``/``tail`` deliberately reproduce the reference's 1 KiB chunked reads,
including its per-chunk UTF-8 decoding: a multi-byte character that straddles
a chunk boundary comes out as U+FFFD characters, exactly as recorded runs show.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat

from .errors import node_error

_CHUNK_SIZE = 1024


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def encode(text: str) -> bytes:
    # Node writes lone surrogates (possible in JSON input) as U+FFFD.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def normalize_line_endings(text: str) -> str:
    return text.replace("\r\n", "\n")


def _open_for_reading(path: str) -> int:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise node_error(exc, "open", path) from exc
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        os.close(fd)
        # Node opens directories fine and fails on read, without a path.
        raise node_error(OSError(errno.EISDIR, "is a directory"), "read")
    return fd


def read_text(path: str) -> str:
    fd = _open_for_reading(path)
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return decode(handle.read())
    finally:
        os.close(fd)


def head(path: str, line_count: float) -> str:
    fd = _open_for_reading(path)
    try:
        lines: list[str] = []
        buffer = ""
        offset = 0
        while len(lines) < line_count:
            chunk = os.pread(fd, _CHUNK_SIZE, offset)
            if not chunk:
                break
            offset += len(chunk)
            buffer += decode(chunk)
            newline_index = buffer.rfind("\n")
            if newline_index != -1:
                complete = buffer[:newline_index].split("\n")
                buffer = buffer[newline_index + 1 :]
                for line in complete:
                    lines.append(line)
                    if len(lines) >= line_count:
                        break
        if buffer and len(lines) < line_count:
            lines.append(buffer)
        return "\n".join(lines)
    finally:
        os.close(fd)


def tail(path: str, line_count: float) -> str:
    fd = _open_for_reading(path)
    try:
        position = os.fstat(fd).st_size
        if position == 0:
            return ""
        lines: list[str] = []
        remaining = ""
        found = 0
        while position > 0 and found < line_count:
            size = min(_CHUNK_SIZE, position)
            position -= size
            chunk = os.pread(fd, size, position)
            if not chunk:
                break
            chunk_lines = normalize_line_endings(decode(chunk) + remaining).split("\n")
            if position > 0:
                remaining = chunk_lines.pop(0)
            index = len(chunk_lines) - 1
            while index >= 0 and found < line_count:
                lines.insert(0, chunk_lines[index])
                found += 1
                index -= 1
        return "\n".join(lines)
    finally:
        os.close(fd)


def _temp_path(path: str) -> str:
    return f"{path}.{secrets.token_hex(16)}.tmp"


def replace_atomically(path: str, data: bytes) -> None:
    """Write via a sibling temp file and rename, so a symlink at ``path`` is replaced, not followed."""
    temp = _temp_path(path)
    try:
        with open(temp, "xb") as handle:
            handle.write(data)
    except OSError as exc:
        raise node_error(exc, "open", temp) from exc
    try:
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise node_error(exc, "rename", temp, path) from exc


def write_text(path: str, content: str) -> None:
    data = encode(content)
    try:
        # O_EXCL never follows a pre-existing symlink.
        with open(path, "xb") as handle:
            handle.write(data)
        return
    except FileExistsError:
        pass
    except OSError as exc:
        raise node_error(exc, "open", path) from exc
    replace_atomically(path, data)
