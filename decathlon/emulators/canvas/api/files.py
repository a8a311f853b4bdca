"""Files and folders, including Canvas's three-step upload.

Step 1: POST `.../files` with `name` (and optionally `size`, `content_type`, `parent_folder_id` or
`parent_folder_path`, `on_duplicate`) answers `{"upload_url", "upload_params", "file_param"}`.
Step 2: a multipart POST of `upload_params` plus the `file` part to `upload_url` (no token needed,
the URL is the credential) stores the bytes and answers 201 with the file's JSON and a `Location`
header. Step 3 (optional for a 201): GET that location (`/api/v1/files/:id/create_success?uuid=`).
A file's `url` downloads it with its verifier, or with a token allowed to read it.
"""
from __future__ import annotations

from urllib.parse import quote

from aiohttp import BodyPartReader, web
from aiohttp.typedefs import Handler

from decathlon.emulators.canvas import access, errors
from decathlon.emulators.canvas.api.assignments import assignment_of
from decathlon.emulators.canvas.api.users import user_of
from decathlon.emulators.canvas.http import (
    BASE_KEY, STORE_KEY, Ctx, Reply, Routes, error_response, read_params, to_response, token_of,
)
from decathlon.emulators.canvas.model import File, Folder, PendingUpload, User
from decathlon.emulators.kit.params import as_bool, as_int, as_str_list
from decathlon.emulators.canvas.store import Store
from decathlon.emulators.canvas.views import View, guess_type

routes = Routes()


def can_read_file(store: Store, user: User, f: File) -> bool:
    if user.admin or f.user_id == user.id:
        return True
    folder = store.folders.get(f.folder_id)
    if folder is not None and folder.context_type == "Course":
        course = store.courses.get(folder.context_id)
        if course is not None and access.can_read_course(store, user, course):
            return not f.hidden or access.is_staff(store, user, course)
    for s in store.submissions.values():
        if f.id in s.attachment_ids:
            a = store.assignments.get(s.assignment_id)
            course = store.courses.get(a.course_id) if a else None
            if course is not None and access.is_staff(store, user, course):
                return True
    for c in store.conversations.values():
        if user.id in c.participants and any(f.id in m.attachment_ids for m in c.messages):
            return True
    for t in store.topics.values():
        course = store.courses.get(t.course_id)
        if f.id in t.attachment_ids and course is not None and access.can_read_course(store, user, course):
            return True
    return False


def file_of(ctx: Ctx, name: str = "file_id") -> File:
    f = ctx.store.files.get(ctx.id(name))
    if f is None or f.workflow_state == "deleted":
        raise errors.not_found()
    if not can_read_file(ctx.store, ctx.user, f):
        raise errors.unauthorized()
    return f


def folder_of(ctx: Ctx, name: str = "folder_id") -> Folder:
    f = ctx.store.folders.get(ctx.id(name))
    if f is None:
        raise errors.not_found()
    check_folder_access(ctx, f, write=False)
    return f


def check_folder_access(ctx: Ctx, f: Folder, write: bool) -> None:
    store = ctx.store
    if f.context_type == "User":
        if f.context_id != ctx.user.id and not ctx.user.admin:
            raise errors.unauthorized()
        return
    course = store.courses.get(f.context_id)
    if course is None or course.workflow_state == "deleted":
        raise errors.not_found()
    if write:
        access.course_for_manage(store, ctx.user, course.id)
    else:
        access.course_for_read(store, ctx.user, course.id)


# --- upload, step 1 ------------------------------------------------------------------------------

def _folder_by_path(store: Store, root: Folder, path: str) -> Folder:
    parts = [p for p in path.strip("/").split("/") if p]
    if parts and parts[0] == root.name:
        parts = parts[1:]
    folder = root
    for part in parts:
        folder = store.subfolder(folder, part)
    return folder


def _preflight(ctx: Ctx, context_type: str, context_id: int, default: str | None,
               for_submission: tuple[int, int] | None = None, folder: Folder | None = None) -> Reply:
    store = ctx.store
    name = str(ctx.param("name") or "").strip()
    if not name:
        raise errors.bad_request("No filename provided")
    if ctx.param("url"):
        raise errors.bad_request("Uploading from a URL is not supported here")
    if folder is None:
        root = store.root_folder(context_type, context_id)
        folder_id = as_int(ctx.param("parent_folder_id"))
        if folder_id is not None:
            folder = store.folders.get(folder_id)
            if folder is None or folder.context_type != context_type or folder.context_id != context_id:
                raise errors.not_found()
        elif ctx.param("parent_folder_path"):
            folder = _folder_by_path(store, root, str(ctx.param("parent_folder_path")))
        else:
            folder = store.subfolder(root, default) if default else root
    on_duplicate = str(ctx.param("on_duplicate") or "overwrite")
    if on_duplicate not in ("overwrite", "rename"):
        raise errors.bad_request("invalid on_duplicate option")
    token = store.random_string(32)
    ctype = ctx.param("content_type")
    store.uploads[token] = PendingUpload(token, ctx.user.id, folder.id, name, str(ctype) if ctype else None,
                                         as_int(ctx.param("size")), on_duplicate, store.now(), for_submission)
    base = f"{ctx.request.scheme}://{ctx.request.host}"
    return Reply({"upload_url": f"{base}/files_api/upload/{token}",
                  "upload_params": {"filename": name, "content_type": ctype or guess_type(name)},
                  "file_param": "file", "progress": None})


@routes.post("/api/v1/users/{user_id}/files")
async def user_upload(ctx: Ctx):
    user = user_of(ctx)
    if user.id != ctx.user.id and not ctx.user.admin:
        raise errors.unauthorized()
    return _preflight(ctx, "User", user.id, "unfiled")


@routes.post("/api/v1/courses/{course_id}/files")
async def course_upload(ctx: Ctx):
    course = access.course_for_manage(ctx.store, ctx.user, ctx.id("course_id"))
    return _preflight(ctx, "Course", course.id, "unfiled")


@routes.post("/api/v1/folders/{folder_id}/files")
async def folder_upload(ctx: Ctx):
    folder = ctx.store.folders.get(ctx.id("folder_id"))
    if folder is None:
        raise errors.not_found()
    check_folder_access(ctx, folder, write=True)
    return _preflight(ctx, folder.context_type, folder.context_id, None, folder=folder)


@routes.post("/api/v1/courses/{course_id}/assignments/{assignment_id}/submissions/{user_id}/files")
async def submission_upload(ctx: Ctx):
    store = ctx.store
    course = access.course_for_read(store, ctx.user, ctx.id("course_id"))
    a = assignment_of(ctx, course)
    raw = ctx.request.match_info["user_id"]
    if raw not in ("self", str(ctx.user.id)) or not access.is_student(store, ctx.user, course):
        raise errors.unauthorized()
    root = store.root_folder("User", ctx.user.id)
    folder = store.subfolder(store.subfolder(root, "Submissions"), course.name)
    return _preflight(ctx, "User", ctx.user.id, None, (a.id, ctx.user.id), folder)


# --- upload, step 2 and 3 ------------------------------------------------------------------------

def _unique_name(store: Store, folder_id: int, name: str) -> str:
    taken = {f.display_name for f in store.folder_files(folder_id)}
    if name not in taken:
        return name
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    n = 1
    while True:
        candidate = f"{stem}-{n}{dot}{ext}"
        if candidate not in taken:
            return candidate
        n += 1


async def upload_target(request: web.Request) -> web.StreamResponse:
    store: Store = request.app[STORE_KEY]
    base = request.app[BASE_KEY][0]
    try:
        pending = store.uploads.get(request.match_info["token"])
        if pending is None:
            raise errors.not_found()
        if not request.content_type.startswith("multipart/"):
            raise errors.bad_request("file upload must be multipart/form-data")
        data: bytes | None = None
        part_type = None
        reader = await request.multipart()
        while True:
            part = await reader.next()
            if part is None:
                break
            if isinstance(part, BodyPartReader) and part.name == "file":  # a nested multipart has no name
                data = bytes(await part.read(decode=False))
                part_type = part.headers.get("Content-Type")
            else:
                await part.release()
        if data is None:
            raise errors.bad_request("No file data found in the request")
        del store.uploads[pending.token]
        user = store.users[pending.user_id]
        ctype = pending.content_type or (part_type if part_type and part_type != "application/octet-stream" else None) \
            or guess_type(pending.name)
        name = pending.name
        if pending.on_duplicate == "rename":
            name = _unique_name(store, pending.folder_id, name)
        else:
            for old in store.folder_files(pending.folder_id):
                if old.display_name == name:
                    old.workflow_state = "deleted"
        now = store.now()
        f = File(store.next_id("attachment"), pending.folder_id, name,
                 f"{int(now.timestamp())}_{store.rng.randint(0, 999)}__{name}", ctype, data, now, now,
                 store.random_string(), user.id)
        store.files[f.id] = f
        body = View(store, user, base).file(f)
        location = f"{base}/api/v1/files/{f.id}/create_success?uuid={f.uuid}"
        return to_response(Reply(body, 201, {"Location": location}))
    except errors.ApiError as err:
        return error_response(err)


@routes.get("/api/v1/files/{file_id}/create_success", auth=False)
async def create_success(ctx: Ctx):
    f = ctx.store.files.get(ctx.id("file_id"))
    if f is None or str(ctx.param("uuid") or "") != f.uuid:
        raise errors.not_found()
    owner = ctx.store.users.get(f.user_id or -1)
    return View(ctx.store, owner or ctx.store.users[min(ctx.store.users)], ctx.html_base).file(f)


# --- reading and managing files --------------------------------------------------------------------

def _list_files(ctx: Ctx, files: list[File]) -> Reply:
    term = ctx.param("search_term")
    if term:
        files = [f for f in files if str(term).lower() in f.display_name.lower()]
    types = as_str_list(ctx.param("content_types"))
    if types:
        files = [f for f in files if any(f.content_type == t or f.content_type.startswith(t.rstrip("/") + "/")
                                         for t in types)]
    sort = str(ctx.param("sort") or "name")
    keys = {"size": lambda f: (f.size, f.id), "created_at": lambda f: (f.created_at, f.id),
            "updated_at": lambda f: (f.updated_at, f.id), "content_type": lambda f: (f.content_type, f.id)}
    files = sorted(files, key=keys.get(sort, lambda f: (f.display_name.lower(), f.id)))
    if str(ctx.param("order") or "asc") == "desc":
        files.reverse()
    view = View(ctx.store, ctx.user, ctx.html_base)
    return ctx.paged(files, view.file)


@routes.get("/api/v1/courses/{course_id}/files")
async def course_files(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    staff = access.is_staff(ctx.store, ctx.user, course)
    return _list_files(ctx, [f for f in ctx.store.context_files("Course", course.id) if staff or not f.hidden])


@routes.get("/api/v1/users/{user_id}/files")
async def user_files(ctx: Ctx):
    user = user_of(ctx)
    if user.id != ctx.user.id and not ctx.user.admin:
        raise errors.unauthorized()
    return _list_files(ctx, ctx.store.context_files("User", user.id))


@routes.get("/api/v1/folders/{folder_id}/files")
async def folder_files(ctx: Ctx):
    folder = folder_of(ctx)
    return _list_files(ctx, ctx.store.folder_files(folder.id))


@routes.get("/api/v1/files/{file_id}")
async def get_file(ctx: Ctx):
    return View(ctx.store, ctx.user, ctx.html_base).file(file_of(ctx))


@routes.get("/api/v1/courses/{course_id}/files/{file_id}")
async def get_course_file(ctx: Ctx):
    access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    return View(ctx.store, ctx.user, ctx.html_base).file(file_of(ctx))


@routes.put("/api/v1/files/{file_id}")
async def update_file(ctx: Ctx):
    f = file_of(ctx)
    folder = ctx.store.folders[f.folder_id]
    check_folder_access(ctx, folder, write=True)
    if ctx.param("name"):
        f.display_name = str(ctx.param("name"))
    target = as_int(ctx.param("parent_folder_id"))
    if target is not None:
        dest = ctx.store.folders.get(target)
        if dest is None or (dest.context_type, dest.context_id) != (folder.context_type, folder.context_id):
            raise errors.not_found()
        f.folder_id = dest.id
    for key in ("locked", "hidden"):
        if key in ctx.params:
            setattr(f, key, bool(as_bool(ctx.param(key), False)))
    f.updated_at = ctx.store.now()
    return View(ctx.store, ctx.user, ctx.html_base).file(f)


@routes.delete("/api/v1/files/{file_id}")
async def delete_file(ctx: Ctx):
    f = file_of(ctx)
    check_folder_access(ctx, ctx.store.folders[f.folder_id], write=True)
    out = View(ctx.store, ctx.user, ctx.html_base).file(f)
    f.workflow_state = "deleted"
    return out


async def download(request: web.Request) -> web.StreamResponse:
    """`/files/:id/download`: the bytes, for the holder of the verifier or of a token allowed to read."""
    store: Store = request.app[STORE_KEY]
    try:
        fid = as_int(request.match_info.get("file_id"))
        f = store.files.get(fid) if fid is not None else None
        if f is None or f.workflow_state == "deleted":
            raise errors.not_found()
        params = await read_params(request)
        if str(params.get("verifier") or "") != f.uuid:
            token = token_of(request, params)
            user = store.user_for_token(token) if token else None
            if user is None:
                raise errors.unauthenticated() if token is None else errors.invalid_token()
            if not can_read_file(store, user, f):
                raise errors.unauthorized()
        disposition = f"attachment; filename=\"{f.display_name}\"; filename*=UTF-8''{quote(f.display_name)}"
        return web.Response(body=f.data, headers={"Content-Type": f.content_type, "Content-Disposition": disposition})
    except errors.ApiError as err:
        return error_response(err)


# --- folders -------------------------------------------------------------------------------------

def _context_folders(ctx: Ctx, context_type: str, context_id: int) -> Reply:
    store = ctx.store
    store.root_folder(context_type, context_id)
    found = sorted((f for f in store.folders.values() if f.context_type == context_type and f.context_id == context_id),
                   key=lambda f: (f.full_name.lower(), f.id))
    return ctx.paged(found, View(store, ctx.user, ctx.html_base).folder)


@routes.get("/api/v1/courses/{course_id}/folders")
async def course_folders(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    return _context_folders(ctx, "Course", course.id)


@routes.get("/api/v1/users/{user_id}/folders")
async def user_folders(ctx: Ctx):
    user = user_of(ctx)
    if user.id != ctx.user.id and not ctx.user.admin:
        raise errors.unauthorized()
    return _context_folders(ctx, "User", user.id)


@routes.get("/api/v1/courses/{course_id}/folders/root")
async def course_root(ctx: Ctx):
    course = access.course_for_read(ctx.store, ctx.user, ctx.id("course_id"))
    return View(ctx.store, ctx.user, ctx.html_base).folder(ctx.store.root_folder("Course", course.id))


@routes.get("/api/v1/users/{user_id}/folders/root")
async def user_root(ctx: Ctx):
    user = user_of(ctx)
    if user.id != ctx.user.id and not ctx.user.admin:
        raise errors.unauthorized()
    return View(ctx.store, ctx.user, ctx.html_base).folder(ctx.store.root_folder("User", user.id))


@routes.get("/api/v1/folders/{folder_id}")
async def get_folder(ctx: Ctx):
    return View(ctx.store, ctx.user, ctx.html_base).folder(folder_of(ctx))


@routes.get("/api/v1/folders/{folder_id}/folders")
async def subfolders(ctx: Ctx):
    folder = folder_of(ctx)
    found = sorted((f for f in ctx.store.folders.values() if f.parent_folder_id == folder.id),
                   key=lambda f: (f.name.lower(), f.id))
    return ctx.paged(found, View(ctx.store, ctx.user, ctx.html_base).folder)


def _create_folder(ctx: Ctx, context_type: str, context_id: int, parent: Folder | None) -> dict:
    store = ctx.store
    name = str(ctx.param("name") or "").strip()
    if not name:
        raise errors.invalid("name", "can't be blank", "blank")
    if parent is None:
        root = store.root_folder(context_type, context_id)
        pid = as_int(ctx.param("parent_folder_id"))
        if pid is not None:
            parent = store.folders.get(pid)
            if parent is None or (parent.context_type, parent.context_id) != (context_type, context_id):
                raise errors.not_found()
        elif ctx.param("parent_folder_path"):
            parent = _folder_by_path(store, root, str(ctx.param("parent_folder_path")))
        else:
            parent = root
    return View(store, ctx.user, ctx.html_base).folder(store.subfolder(parent, name))


@routes.post("/api/v1/courses/{course_id}/folders")
async def create_course_folder(ctx: Ctx):
    course = access.course_for_manage(ctx.store, ctx.user, ctx.id("course_id"))
    return _create_folder(ctx, "Course", course.id, None)


@routes.post("/api/v1/users/{user_id}/folders")
async def create_user_folder(ctx: Ctx):
    user = user_of(ctx)
    if user.id != ctx.user.id and not ctx.user.admin:
        raise errors.unauthorized()
    return _create_folder(ctx, "User", user.id, None)


@routes.post("/api/v1/folders/{folder_id}/folders")
async def create_subfolder(ctx: Ctx):
    folder = ctx.store.folders.get(ctx.id("folder_id"))
    if folder is None:
        raise errors.not_found()
    check_folder_access(ctx, folder, write=True)
    return _create_folder(ctx, folder.context_type, folder.context_id, folder)


def raw_routes() -> list[tuple[str, str, Handler]]:
    """Routes outside /api/v1 that take no token: the upload target and the download links."""
    return [("POST", "/files_api/upload/{token}", upload_target),
            ("GET", "/files/{file_id}/download", download),
            ("GET", "/courses/{course_id}/files/{file_id}/download", download),
            ("GET", "/users/{user_id}/files/{file_id}/download", download)]

