"""Tool errors and Node.js-style rendering of OS errors.

The reference server is Node.js; the model sees libuv error text such as
``ENOENT: no such file or directory, open '/ws/x'``, so OSErrors are rendered
in that shape rather than Python's ``[Errno 2] ...``.
"""

from __future__ import annotations

import errno

from ..jsvalues import MessageError

# libuv's uv_strerror() wording, which Node puts into error messages.
_UV_DESCRIPTIONS: dict[int, str] = {
    errno.ENOENT: "no such file or directory",
    errno.EEXIST: "file already exists",
    errno.ENOTDIR: "not a directory",
    errno.EISDIR: "illegal operation on a directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOTEMPTY: "directory not empty",
    errno.EXDEV: "cross-device link not permitted",
    errno.ELOOP: "too many symbolic links encountered",
    errno.EINVAL: "invalid argument",
    errno.ENAMETOOLONG: "name too long",
    errno.ENOSPC: "no space left on device",
    errno.EBUSY: "resource busy or locked",
    errno.EROFS: "read-only file system",
    errno.EMFILE: "too many open files",
    errno.EIO: "i/o error",
    errno.ETXTBSY: "text file is busy",
}


class ToolError(MessageError):
    """A failure reported to the model as ``Error: <message>``."""


def node_error(exc: OSError, syscall: str, path: str | None = None, dest: str | None = None) -> ToolError:
    """Render ``exc`` the way Node formats a failed fs call."""
    code = errno.errorcode.get(exc.errno or 0, "UNKNOWN")
    description = _UV_DESCRIPTIONS.get(exc.errno or 0) or (exc.strerror or "unknown error").lower()
    message = f"{code}: {description}, {syscall}"
    if path is not None:
        message += f" '{path}'"
    if dest is not None:
        message += f" -> '{dest}'"
    return ToolError(message)
