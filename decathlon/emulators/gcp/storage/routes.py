"""The Cloud Storage JSON API routes (`/storage/v1`, `/upload/storage/v1`, `/download/storage/v1`) and the
XML-style `GET /<bucket>/<object>` that v4 signed URLs point at (the signature is computed client-side and
cannot be checked offline: it is accepted as given)."""
from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote

from aiohttp import web

from decathlon.emulators.gcp.errors import google_error, invalid, json_object
from decathlon.emulators.gcp.media import ResumableSession, apply_chunk, multipart_related
from decathlon.emulators.gcp.storage.resources import base_url, bucket_json, object_json
from decathlon.emulators.gcp.storage.store import Blob, Bucket, StorageStore
from decathlon.emulators.kit.errors import ApiError, json_response
from decathlon.emulators.kit.paging import BadPageToken, page

_BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$")
_NOT_AN_API_ROOT = r"(?!(?:storage/v1|upload/storage|download/storage|bigquery/v2|upload/bigquery|oauth2/v4)(?:/|$))"


def _no_bucket() -> ApiError:
    return google_error(404, "notFound", "The specified bucket does not exist.")


def _no_object(bucket: str, name: str) -> ApiError:
    return google_error(404, "notFound", f"No such object: {bucket}/{name}")


def _object_name(request: web.Request, key: str = "object") -> str:
    # match_info is matched on the decoded path; object names may hold an encoded '/' or '%', so take the raw one.
    raw = request.raw_path.split("?", 1)[0]
    value = request.match_info[key]
    marker = "/o/"
    if key == "object" and marker in raw:
        tail = raw.split(marker, 1)[1]
        for suffix in ("/copyTo/", "/rewriteTo/"):
            tail = tail.split(suffix, 1)[0]
        return unquote(tail)
    return value


def _precondition(request: web.Request, existing: Blob | None) -> None:
    want = request.query.get("ifGenerationMatch")
    if want is None:
        return
    have = existing.generation if existing else 0
    if str(have) != want:
        raise google_error(412, "conditionNotMet", "At least one of the pre-conditions you specified did not hold.")


class StorageRoutes:
    def __init__(self, store: StorageStore) -> None:
        self.store = store
        self.sessions: dict[str, ResumableSession] = {}

    def bucket(self, name: str) -> Bucket:
        b = self.store.buckets.get(name)
        if b is None:
            raise _no_bucket()
        return b

    def blob(self, bucket: str, name: str) -> Blob:
        o = self.bucket(bucket).objects.get(name)
        if o is None:
            raise _no_object(bucket, name)
        return o

    # buckets
    async def list_buckets(self, request: web.Request) -> web.Response:
        project = request.query.get("project")
        if not project:
            raise google_error(400, "required", "Required parameter: project")
        prefix = request.query.get("prefix", "")
        items = sorted((b for b in self.store.buckets.values() if b.name.startswith(prefix)), key=lambda b: b.name)
        try:
            chunk, nxt = page(items, request.query.get("pageToken"), _int(request.query.get("maxResults")), 1000, 1000)
        except BadPageToken:
            raise invalid("Invalid page token.") from None
        out: dict[str, Any] = {"kind": "storage#buckets", "items": [bucket_json(request, b) for b in chunk]}
        if nxt:
            out["nextPageToken"] = nxt
        return json_response(out)

    async def insert_bucket(self, request: web.Request) -> web.Response:
        body = await _json_body(request)
        name = str(body.get("name") or "")
        if not _BUCKET_NAME.match(name) or ".." in name:
            raise google_error(400, "invalid", f"Invalid bucket name: '{name}'")
        if name in self.store.buckets:
            raise google_error(409, "conflict",
                               "Your previous request to create the named bucket succeeded and you already own it.")
        now = self.store.clock()
        b = Bucket(name, request.query.get("project", ""), str(body.get("location") or "US").upper(),
                   str(body.get("storageClass") or "STANDARD").upper(), now, now, labels=dict(body.get("labels") or {}))
        self.store.buckets[name] = b
        return json_response(bucket_json(request, b))

    async def get_bucket(self, request: web.Request) -> web.Response:
        return json_response(bucket_json(request, self.bucket(request.match_info["bucket"])))

    async def patch_bucket(self, request: web.Request) -> web.Response:
        b = self.bucket(request.match_info["bucket"])
        body = await _json_body(request)
        if "labels" in body:
            b.labels = {k: v for k, v in (body.get("labels") or {}).items() if v is not None}
        if body.get("storageClass"):
            b.storage_class = str(body["storageClass"]).upper()
        b.metageneration += 1
        b.updated = self.store.clock()
        return json_response(bucket_json(request, b))

    async def delete_bucket(self, request: web.Request) -> web.Response:
        b = self.bucket(request.match_info["bucket"])
        if b.objects:
            raise google_error(409, "conflict", "The bucket you tried to delete is not empty.")
        del self.store.buckets[b.name]
        return web.Response(status=204)

    # objects
    async def list_objects(self, request: web.Request) -> web.Response:
        b = self.bucket(request.match_info["bucket"])
        q = request.query
        prefix, delimiter = q.get("prefix", ""), q.get("delimiter", "")
        start, end = q.get("startOffset", ""), q.get("endOffset")
        entries: list[tuple[str, Blob | None]] = []
        seen: set[str] = set()
        for name in sorted(b.objects):
            if not name.startswith(prefix) or name < start or (end is not None and name >= end):
                continue
            rest = name[len(prefix):]
            if delimiter and delimiter in rest:
                p = prefix + rest.split(delimiter, 1)[0] + delimiter
                if p not in seen:
                    seen.add(p)
                    entries.append((p, None))
                continue
            entries.append((name, b.objects[name]))
        try:
            chunk, nxt = page(entries, q.get("pageToken"), _int(q.get("maxResults")), 1000, 1000)
        except BadPageToken:
            raise invalid("Invalid page token.") from None
        out: dict[str, Any] = {"kind": "storage#objects"}
        prefixes = [p for p, o in chunk if o is None]
        if prefixes:
            out["prefixes"] = prefixes
        out["items"] = [object_json(request, o) for _, o in chunk if o is not None]
        if nxt:
            out["nextPageToken"] = nxt
        return json_response(out)

    async def get_object(self, request: web.Request) -> web.StreamResponse:
        o = self.blob(request.match_info["bucket"], _object_name(request))
        if request.query.get("alt") == "media":
            return _media(request, o)
        return json_response(object_json(request, o))

    async def download(self, request: web.Request) -> web.StreamResponse:
        return _media(request, self.blob(request.match_info["bucket"], _object_name(request)))

    async def patch_object(self, request: web.Request) -> web.Response:
        o = self.blob(request.match_info["bucket"], _object_name(request))
        body = await _json_body(request)
        if "metadata" in body:
            merged = {**o.metadata, **(body.get("metadata") or {})}
            o.metadata = {k: str(v) for k, v in merged.items() if v is not None}
        if body.get("contentType"):
            o.content_type = str(body["contentType"])
        for key, attr in (("cacheControl", "cache_control"), ("contentEncoding", "content_encoding"),
                          ("contentDisposition", "content_disposition")):
            if key in body:
                setattr(o, attr, body[key])
        o.metageneration += 1
        o.updated = self.store.clock()
        return json_response(object_json(request, o))

    async def delete_object(self, request: web.Request) -> web.Response:
        bucket, name = request.match_info["bucket"], _object_name(request)
        self.blob(bucket, name)
        del self.store.buckets[bucket].objects[name]
        return web.Response(status=204)

    async def copy_object(self, request: web.Request) -> web.Response:
        src = self.blob(request.match_info["bucket"], _object_name(request))
        dest_bucket = self.bucket(request.match_info["dbucket"])
        dest_name = unquote(request.raw_path.split("?", 1)[0].rsplit("/o/", 1)[1])
        body = await _json_body(request)
        _precondition(request, dest_bucket.objects.get(dest_name))
        new = self.store.put(dest_bucket, dest_name, src.data, body.get("contentType") or src.content_type,
                             body.get("metadata") or src.metadata)
        resource = object_json(request, new)
        if request.path.split("/o/")[1].find("/rewriteTo/") >= 0:
            size = str(len(new.data))
            return json_response({"kind": "storage#rewriteResponse", "totalBytesRewritten": size, "objectSize": size,
                                  "done": True, "resource": resource})
        return json_response(resource)

    # uploads
    async def upload(self, request: web.Request) -> web.Response:
        b = self.bucket(request.match_info["bucket"])
        kind = request.query.get("uploadType", "media")
        data = await request.read()
        if kind == "multipart":
            metadata, media, media_type = multipart_related(request.headers.get("Content-Type", ""), data)
            return self._finish(request, b, metadata, media, metadata.get("contentType") or media_type)
        if kind == "resumable":
            metadata = json.loads(data or b"{}") if data else {}
            if request.query.get("name"):
                metadata.setdefault("name", request.query["name"])
            if not metadata.get("name"):
                raise google_error(400, "required", "Required")
            upload_id = self.store.ids.alnum(40)
            self.sessions[upload_id] = ResumableSession(
                upload_id, metadata, dict(request.query),
                content_type=metadata.get("contentType") or request.headers.get("X-Upload-Content-Type")
                or "application/octet-stream")
            location = f"{base_url(request)}/upload/storage/v1/b/{b.name}/o?uploadType=resumable&upload_id={upload_id}"
            return web.Response(status=200, headers={"Location": location, "X-GUploader-UploadID": upload_id})
        name = request.query.get("name")
        if not name:
            raise google_error(400, "required", "Required")
        return self._finish(request, b, {"name": name}, data, request.headers.get("Content-Type"))

    async def upload_chunk(self, request: web.Request) -> web.Response:
        b = self.bucket(request.match_info["bucket"])
        session = self.sessions.get(request.query.get("upload_id", ""))
        if session is None:
            raise google_error(404, "notFound", "No such upload session.")
        done = apply_chunk(session, request.headers.get("Content-Range"), await request.read())
        if not done:
            headers = {"Range": f"bytes=0-{len(session.data) - 1}"} if session.data else {}
            return web.Response(status=308, headers=headers)
        del self.sessions[session.upload_id]
        return self._finish(request, b, session.metadata, bytes(session.data), session.content_type)

    def _finish(self, request: web.Request, b: Bucket, metadata: dict[str, Any], data: bytes,
                content_type: str | None) -> web.Response:
        name = str(metadata.get("name") or request.query.get("name") or "")
        if not name:
            raise google_error(400, "required", "Required")
        _precondition(request, b.objects.get(name))
        o = self.store.put(b, name, data, content_type, {k: str(v) for k, v in (metadata.get("metadata") or {}).items()})
        for key, attr in (("cacheControl", "cache_control"), ("contentEncoding", "content_encoding"),
                          ("contentDisposition", "content_disposition")):
            if metadata.get(key):
                setattr(o, attr, metadata[key])
        return json_response(object_json(request, o))

    # the XML-style media path (signed URLs, public links)
    async def xml_get(self, request: web.Request) -> web.StreamResponse:
        name = unquote(request.raw_path.split("?", 1)[0].split("/", 2)[2])
        b = self.store.buckets.get(request.match_info["bucket"])
        if b is None:
            return _xml_error(404, "NoSuchBucket", "The specified bucket does not exist.")
        o = b.objects.get(name)
        if o is None:
            return _xml_error(404, "NoSuchKey", "The specified key does not exist.")
        return _media(request, o)

    def routes(self) -> list[web.RouteDef]:
        obj = "/storage/v1/b/{bucket}/o/{object:.+}"
        return [
            web.get("/storage/v1/b", self.list_buckets),
            web.post("/storage/v1/b", self.insert_bucket),
            web.get("/storage/v1/b/{bucket}", self.get_bucket),
            web.patch("/storage/v1/b/{bucket}", self.patch_bucket),
            web.put("/storage/v1/b/{bucket}", self.patch_bucket),
            web.delete("/storage/v1/b/{bucket}", self.delete_bucket),
            web.get("/storage/v1/b/{bucket}/o", self.list_objects),
            web.post(obj.replace("{object:.+}", "{object:.+}/copyTo/b/{dbucket}/o/{dobject:.+}"), self.copy_object),
            web.post(obj.replace("{object:.+}", "{object:.+}/rewriteTo/b/{dbucket}/o/{dobject:.+}"), self.copy_object),
            web.get(obj, self.get_object),
            web.patch(obj, self.patch_object),
            web.put(obj, self.patch_object),
            web.delete(obj, self.delete_object),
            web.post("/upload/storage/v1/b/{bucket}/o", self.upload),
            web.put("/upload/storage/v1/b/{bucket}/o", self.upload_chunk),
            web.get("/download/storage/v1/b/{bucket}/o/{object:.+}", self.download),
        ]

    def media_routes(self) -> list[web.RouteDef]:
        """Registered last: `/<bucket>/<object>` would otherwise shadow every other API. The APIs' own roots are
        no bucket: an unknown path under them is a JSON 404 (or 405), not the XML API's NoSuchBucket."""
        return [web.get("/{bucket:" + _NOT_AN_API_ROOT + "[^/]+}/{object:.+}", self.xml_get)]


def _media(request: web.Request, o: Blob) -> web.StreamResponse:
    headers = {"Content-Type": o.content_type, "X-Goog-Generation": str(o.generation),
               "X-Goog-Metageneration": str(o.metageneration), "X-Goog-Stored-Content-Length": str(len(o.data)),
               "X-Goog-Storage-Class": "STANDARD", "ETag": f'"{o.md5}"', "Accept-Ranges": "bytes"}
    if o.content_encoding:
        headers["Content-Encoding"] = o.content_encoding
    rng = request.headers.get("Range", "")
    m = re.match(r"bytes=(\d*)-(\d*)$", rng.strip())
    size = len(o.data)
    if m and (m.group(1) or m.group(2)):
        if m.group(1):
            start = int(m.group(1))
            end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
        else:
            start, end = max(size - int(m.group(2)), 0), size - 1
        if start >= size and size > 0:
            raise google_error(416, "requestedRangeNotSatisfiable", "Request range not satisfiable")
        headers["Content-Range"] = f"bytes {start}-{end}/{size}"
        return web.Response(status=206, body=o.data[start:end + 1], headers=headers)
    hashes = [f"md5={o.md5}"] + ([f"crc32c={o.crc32c}"] if o.crc32c else [])
    headers["X-Goog-Hash"] = ",".join(hashes)
    return web.Response(status=200, body=o.data if request.method != "HEAD" else None, headers=headers)


def _xml_error(status: int, code: str, message: str) -> web.Response:
    text = f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{code}</Code><Message>{message}</Message></Error>"
    return web.Response(status=status, text=text, content_type="application/xml")


async def _json_body(request: web.Request) -> dict[str, Any]:
    return await json_object(request, "Parse Error")


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        raise invalid(f"Invalid value: {value}") from None
