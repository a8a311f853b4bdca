"""Drive v3's routes: files (list, get, create, copy, update, delete, media upload and download) and permissions."""
from __future__ import annotations

import email.parser
import email.policy
import json
from typing import Any, Collection

from aiohttp import web

from decathlon.emulators.kit import paging
from decathlon.emulators.kit.google import parameter_error
from decathlon.emulators.kit.params import as_int
from decathlon.emulators.workspace import account, fields
from decathlon.emulators.workspace.drive import query
from decathlon.emulators.workspace.drive.files import Drive, has_role, role_of
from decathlon.emulators.workspace.store import FOLDER, Json, Workspace
from decathlon.emulators.workspace.web import answer, json_body, selection

BASIC = ("kind", "id", "name", "mimeType")
ORDER_KEYS = {"createdTime", "folder", "modifiedByMeTime", "modifiedTime", "name", "name_natural", "quotaBytesUsed",
              "recency", "sharedWithMeTime", "starred", "viewedByMeTime"}
PAGE_DEFAULT, PAGE_CAP = 100, 1000


def _invalid(parameter: str) -> Exception:
    return parameter_error(400, "invalid", "Invalid Value", parameter)


def _shown(doc: Json, request: web.Request) -> web.Response:
    tree = selection(request)
    if tree is None and "fields" not in request.query:
        doc = {k: doc[k] for k in BASIC if k in doc}
    return answer(fields.select(doc, tree))


def _value(f: Json, name: str) -> Any:
    if name == "folder":
        return 0 if f.get("mimeType") == FOLDER else 1
    if name in ("name", "name_natural"):
        return str(f.get("name", "")).lower()
    if name == "starred":
        return 0 if f.get("starred") else 1
    if name == "quotaBytesUsed":
        return int(f.get("size", 0) or 0)
    return str(f.get({"recency": "modifiedTime", "sharedWithMeTime": "createdTime"}.get(name, name), ""))


def ordered(files: list[Json], order: list[tuple[str, bool]]) -> None:
    """Sort in place by `order`: one stable pass per key, the last key first (ties keep the store's order)."""
    for name, desc in reversed(order):
        files.sort(key=lambda f: _value(f, name), reverse=desc)


def parse_order(text: str) -> list[tuple[str, bool]]:
    out = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, _, direction = part.partition(" ")
        if name not in ORDER_KEYS or direction.strip().lower() not in ("", "desc", "asc"):
            raise _invalid("orderBy")
        out.append((name, direction.strip().lower() == "desc"))
    return out


def _multipart(raw: bytes, content_type: str) -> tuple[Json, bytes, str | None]:
    """A multipart/related upload: its metadata (JSON) and its content."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
    parts = list(message.iter_parts()) if message.is_multipart() else []
    if len(parts) != 2:
        raise parameter_error(400, "badContent", "Bad multipart body: a metadata part and a media part are needed.",
                              "uploadType")
    head, media = parts[0].get_payload(decode=True), parts[1].get_payload(decode=True)
    try:
        meta = json.loads(head if isinstance(head, bytes) and head else b"{}")
    except ValueError:
        raise parameter_error(400, "parseError", "Parse Error", "body") from None
    content = media if isinstance(media, bytes) else b""
    return (meta if isinstance(meta, dict) else {}), content, parts[1].get_content_type()


class DriveRoutes:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.drive = Drive(ws)

    def context(self) -> query.Context:
        return query.Context(self.ws.root_id, account.EMAIL, has_role, lambda f, name: f.get(name))

    async def list_files(self, request: web.Request) -> web.Response:
        q = request.query.get("q", "")
        try:
            predicate = query.parse(q, self.context())
        except query.QueryError:
            raise _invalid("q") from None
        size = as_int(request.query.get("pageSize", PAGE_DEFAULT), 0)
        if size < 1 or size > PAGE_CAP:
            raise _invalid("pageSize")
        order = parse_order(request.query.get("orderBy", ""))
        found = [f for f in self.drive.visible() if predicate(f)]
        ordered(found, order or [("modifiedTime", True)])
        try:
            chunk, token = paging.page(found, request.query.get("pageToken"), size, PAGE_DEFAULT, PAGE_CAP)
        except paging.BadPageToken:
            raise _invalid("pageToken") from None
        doc: Json = {"kind": "drive#fileList", "incompleteSearch": False}
        if token:
            doc["nextPageToken"] = token
        tree = selection(request)
        if tree is None and "fields" not in request.query:
            wanted: Collection[str] | None = BASIC
        else:
            shown = tree.get("files") if tree is not None else None
            wanted = list(shown) if isinstance(shown, dict) else None  # `files(id,name)`: only those are built
        doc["files"] = [self.drive.view(f, wanted) for f in chunk]
        return answer(fields.select(doc, tree))

    async def get_file(self, request: web.Request) -> web.StreamResponse:
        f = self.drive.get(request.match_info["fileId"])
        if request.query.get("alt") == "media":
            if "content" not in f:
                raise parameter_error(403, "fileNotDownloadable",
                                      "Only files with binary content can be downloaded. Use Export with Docs Editors "
                                      "files.", "alt")
            return web.Response(body=f["content"], content_type=str(f.get("mimeType", "application/octet-stream")))
        return _shown(self.drive.view(f), request)

    async def create_file(self, request: web.Request) -> web.Response:
        return _shown(self.drive.view(self.drive.create(await json_body(request))), request)

    async def upload_file(self, request: web.Request) -> web.Response:
        meta, content, ctype = await self._upload(request)
        return _shown(self.drive.view(self.drive.create(meta, content, ctype)), request)

    async def _upload(self, request: web.Request) -> tuple[Json, bytes, str | None]:
        kind = request.query.get("uploadType", "media")
        raw = await request.read()
        if kind == "multipart":
            return _multipart(raw, request.headers.get("Content-Type", ""))
        if kind == "media":
            return {}, raw, request.content_type
        raise parameter_error(400, "invalid", f"Invalid upload type: {kind} (the emulator takes media and multipart)",
                              "uploadType")

    async def copy_file(self, request: web.Request) -> web.Response:
        new = self.drive.copy(request.match_info["fileId"], await json_body(request))
        return _shown(self.drive.view(new), request)

    async def update_file(self, request: web.Request) -> web.Response:
        body = await json_body(request)
        f = self._update(request, body)
        return _shown(self.drive.view(f), request)

    def _update(self, request: web.Request, body: Json) -> Json:
        add = [p for p in request.query.get("addParents", "").split(",") if p]
        remove = [p for p in request.query.get("removeParents", "").split(",") if p]
        return self.drive.update(request.match_info["fileId"], body, add, remove)

    async def upload_update(self, request: web.Request) -> web.Response:
        meta, content, _ = await self._upload(request)
        f = self._update(request, meta)
        f["content"], f["size"] = content, str(len(content))
        return _shown(self.drive.view(f), request)

    async def delete_file(self, request: web.Request) -> web.Response:
        self.drive.delete(request.match_info["fileId"])
        return web.Response(status=204)

    async def create_permission(self, request: web.Request) -> web.Response:
        perm = self.drive.add_permission(request.match_info["fileId"], await json_body(request))
        return self._permission(perm, request)

    def _permission(self, perm: Json, request: web.Request) -> web.Response:
        tree = selection(request)
        if tree is None and "fields" not in request.query:
            perm = {k: perm[k] for k in ("kind", "id", "type", "role") if k in perm}
        return answer(fields.select(perm, tree))

    async def list_permissions(self, request: web.Request) -> web.Response:
        perms = self.drive.permissions(request.match_info["fileId"])
        tree = selection(request)
        if tree is None and "fields" not in request.query:
            perms = [{k: p[k] for k in ("kind", "id", "type", "role") if k in p} for p in perms]
        return answer(fields.select({"kind": "drive#permissionList", "permissions": perms}, tree))

    async def get_permission(self, request: web.Request) -> web.Response:
        perm = self.drive.permission(request.match_info["fileId"], request.match_info["permissionId"])
        return self._permission(perm, request)

    async def delete_permission(self, request: web.Request) -> web.Response:
        self.drive.remove_permission(request.match_info["fileId"], request.match_info["permissionId"])
        return web.Response(status=204)

    async def empty_trash(self, request: web.Request) -> web.Response:
        for f in [f for f in self.drive.visible() if f.get("trashed") and f.get("id") in self.ws.files]:
            if role_of(f) == "owner":
                self.drive.delete(f["id"])
        return web.Response(status=204)

    async def generate_ids(self, request: web.Request) -> web.Response:
        count = as_int(request.query.get("count"), 10)
        if count < 1 or count > 1000:
            raise _invalid("count")
        return answer({"kind": "drive#generatedIds", "space": request.query.get("space", "drive"),
                       "ids": [self.ws.file_id() for _ in range(count)]}, request)

    async def about(self, request: web.Request) -> web.Response:
        if "fields" not in request.query:
            raise parameter_error(400, "required", "The 'fields' parameter is required for this method.", "fields")
        return answer({"kind": "drive#about", "user": account.user(), "storageQuota": {
            "limit": "16106127360", "usage": str(sum(len(f.get("content", b"")) for f in self.ws.files.values())),
            "usageInDrive": "0", "usageInDriveTrash": "0"}, "canCreateDrives": False}, request)

    def routes(self) -> list[web.RouteDef]:
        base, up = "/drive/v3/files", "/upload/drive/v3/files"
        # The fixed names first: `files/trash` and `files/generateIds` are methods of their own, not file ids.
        return [web.delete(base + "/trash", self.empty_trash), web.get(base + "/generateIds", self.generate_ids),
                web.get("/drive/v3/about", self.about), web.get(base, self.list_files), web.post(base, self.create_file),
                web.post(up, self.upload_file),
                web.get(base + "/{fileId}", self.get_file), web.patch(base + "/{fileId}", self.update_file),
                web.patch(up + "/{fileId}", self.upload_update), web.delete(base + "/{fileId}", self.delete_file),
                web.post(base + "/{fileId}/copy", self.copy_file),
                web.get(base + "/{fileId}/permissions", self.list_permissions),
                web.post(base + "/{fileId}/permissions", self.create_permission),
                web.get(base + "/{fileId}/permissions/{permissionId}", self.get_permission),
                web.delete(base + "/{fileId}/permissions/{permissionId}", self.delete_permission)]
