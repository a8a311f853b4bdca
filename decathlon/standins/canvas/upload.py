"""Uploading a local file the way the reference does: Canvas's three-step file upload.

1. ``stat`` the path (relative paths are relative to the server's working directory, the agent
   workspace), then ask Canvas for an upload slot: POST ``/users/self/files`` (``/folders/<id>/files``
   when a folder is given; a course id is ignored, students may only fill their own files) with
   ``{name: basename, size, on_duplicate: "rename"}``.
2. POST the file as multipart form data to the returned ``upload_url``: the ``upload_params``
   first, then ``file``, with a content type guessed from the file name. This request goes
   through axios without the Canvas interceptors: no token, bare AxiosError messages
   (``Request failed with status code 400``).
3. If that answer names a ``location``, GET it (with the token) and return it; otherwise return
   the answer itself.

Local failures read like Node's: ``ENOENT: no such file or directory, stat 'notes.pdf'``.
Deliberate difference: a file larger than DECATHLON_CANVAS_MAX_BYTES is refused with
follow-redirects' ``Request body larger than maxBodyLength limit`` (the reference has no limit).
"""

from __future__ import annotations

import errno
import mimetypes
import os
from typing import Any

import anyio
import anyio.to_thread

from .api import CanvasApi, PlainError
from .jsargs import UNDEFINED, JsError, to_string, truthy
from .transport import MAX_BYTES, TIMEOUT_SECONDS, timeout_message

# Node's libuv descriptions for the errno values a path can produce.
_UV_MESSAGES = {
    errno.ENOENT: ("ENOENT", "no such file or directory"),
    errno.EACCES: ("EACCES", "permission denied"),
    errno.EPERM: ("EPERM", "operation not permitted"),
    errno.ENOTDIR: ("ENOTDIR", "not a directory"),
    errno.EISDIR: ("EISDIR", "illegal operation on a directory"),
    errno.ELOOP: ("ELOOP", "too many symbolic links encountered"),
    errno.ENAMETOOLONG: ("ENAMETOOLONG", "name too long"),
    errno.EMFILE: ("EMFILE", "too many open files"),
    errno.EIO: ("EIO", "i/o error"),
}
# mime-db's types for names the built-in table lacks or that Node would type differently.
_EXTRA_TYPES = {".md": "text/markdown", ".markdown": "text/markdown", ".ipynb": "application/x-ipynb+json"}
_MIME = mimetypes.MimeTypes(filenames=())


def node_fs_message(error: OSError, syscall: str, path: str | None) -> str:
    code, text = _UV_MESSAGES.get(
        error.errno or 0, (errno.errorcode.get(error.errno or 0, "UNKNOWN"), error.strerror or "unknown error")
    )
    return f"{code}: {text}, {syscall}" + (f" '{path}'" if path is not None else "")


def node_basename(path: str) -> str:
    """``path.basename`` (POSIX): trailing slashes do not count."""
    trimmed = path.rstrip("/")
    return trimmed.rsplit("/", 1)[-1] if trimmed else ""


def content_type_for(name: str) -> str:
    extension = os.path.splitext(name)[1].lower()
    return _EXTRA_TYPES.get(extension) or _MIME.guess_type(name, strict=False)[0] or "application/octet-stream"


def _check_path(value: Any) -> str:
    if isinstance(value, str):
        if "\x00" in value:
            shown = value.replace("\\", "\\\\").replace("'", "\\'").replace("\x00", "\\x00")
            raise PlainError(
                f"The argument 'path' must be a string, Uint8Array, or URL without null bytes. Received '{shown}'"
            )
        return value
    if isinstance(value, (dict, list)):
        received = f"an instance of {'Array' if isinstance(value, list) else 'Object'}"
    else:
        received = f"type {'boolean' if isinstance(value, bool) else 'number'} ({to_string(value)})"
    raise PlainError(f'The "path" argument must be of type string or an instance of Buffer or URL. Received {received}')


def _entries(params: Any) -> list[tuple[str, str]]:
    """``Object.entries(upload_params)``, each value as form-data appends it."""
    if params is None or params is UNDEFINED:
        raise JsError("Cannot convert undefined or null to object")
    if isinstance(params, dict):
        items = list(params.items())
    elif isinstance(params, list):
        items = [(str(i), value) for i, value in enumerate(params)]
    elif isinstance(params, str):
        items = [(str(i), char) for i, char in enumerate(params)]
    else:
        items = []
    return [(key, to_string(value)) for key, value in items]


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            content = handle.read(MAX_BYTES + 1)
    except IsADirectoryError:
        raise PlainError("EISDIR: illegal operation on a directory, read") from None
    except OSError as error:
        raise PlainError(node_fs_message(error, "open", path)) from None
    if len(content) > MAX_BYTES:
        raise PlainError("Request body larger than maxBodyLength limit")
    return content


async def upload_file_from_path(api: CanvasApi, file_path: Any, course_id: Any, folder_id: Any) -> Any:
    path = _check_path(file_path)
    try:
        size = (await anyio.Path(path).stat()).st_size
    except OSError as error:
        raise PlainError(node_fs_message(error, "stat", path)) from None
    name = node_basename(path)
    endpoint = f"/folders/{to_string(folder_id)}/files" if truthy(folder_id) else "/users/self/files"
    slot = await api.request("POST", endpoint, data={"name": name, "size": size, "on_duplicate": "rename"})
    if slot is None:
        raise JsError("Cannot destructure property 'upload_url' of 'uploadUrlResponse.data' as it is null.")
    upload_url = slot.get("upload_url", UNDEFINED) if isinstance(slot, dict) else UNDEFINED
    fields = _entries(slot.get("upload_params", UNDEFINED) if isinstance(slot, dict) else UNDEFINED)
    try:
        with anyio.fail_after(TIMEOUT_SECONDS * 4):
            # A FIFO or a stalled network file system must not hold the server: abandon the read.
            content = await anyio.to_thread.run_sync(_read, path, abandon_on_cancel=True)
    except TimeoutError:
        raise PlainError(timeout_message()) from None
    uploaded = await api.plain(
        "POST",
        to_string(upload_url),
        authorized=False,
        data_fields=fields,
        file=(name, content, content_type_for(name)),
    )
    answer = uploaded.data
    if answer is None:
        raise JsError("Cannot read properties of null (reading 'location')")
    location = answer.get("location", UNDEFINED) if isinstance(answer, dict) else UNDEFINED
    if truthy(location):
        return await api.get(to_string(location))
    return answer
