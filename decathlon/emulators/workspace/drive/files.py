"""Drive's files as one signed-in user sees them: what they own they may change; a file someone else owns that is
shared with them (by address, or with anyone who has the link) they may read and copy, and change only as a writer;
anything else does not exist for them (Drive's 404 "File not found")."""
from __future__ import annotations

from typing import Collection

from decathlon.emulators.kit.errors import ApiError
from decathlon.emulators.kit.google import parameter_error, status_error
from decathlon.emulators.workspace import account, forms_model
from decathlon.emulators.workspace.sheets import grid
from decathlon.emulators.workspace.store import DOCUMENT, FOLDER, FORM, SPREADSHEET, Json, Workspace

RANK = {"reader": 1, "commenter": 2, "writer": 3, "fileOrganizer": 3, "organizer": 4, "owner": 5}
ROLES = tuple(RANK)
TYPES = ("user", "group", "domain", "anyone")
LINKS = {FOLDER: "https://drive.google.com/drive/folders/{id}",
         SPREADSHEET: "https://docs.google.com/spreadsheets/d/{id}/edit?usp=drivesdk",
         FORM: "https://docs.google.com/forms/d/{id}/edit?usp=drivesdk",
         DOCUMENT: "https://docs.google.com/document/d/{id}/edit?usp=drivesdk"}
# What a client may set on a file (files.create/update); the rest is Drive's own.
WRITABLE = ("name", "description", "starred", "trashed", "properties", "appProperties", "folderColorRgb",
            "originalFilename", "writersCanShare", "copyRequiresWriterPermission", "viewersCanCopyContent")


def not_found(file_id: str) -> ApiError:
    return parameter_error(404, "notFound", f"File not found: {file_id}.", "fileId")


def forbidden(file_id: str) -> ApiError:
    return parameter_error(403, "insufficientFilePermissions",
                           f"The user does not have sufficient permissions for file {file_id}.", "fileId")


def owned_by_me(f: Json) -> bool:
    owners = f.get("owners")
    return not owners or any(o.get("emailAddress") == account.EMAIL or o.get("me") is True for o in owners)


def role_of(f: Json) -> str | None:
    if owned_by_me(f):
        return "owner"
    if "permissions" not in f and isinstance(f.get("capabilities"), dict):
        # Google shows a file's permissions only to who may share it: a file captured by a reader (a template seed)
        # says what the user may do in its capabilities instead.
        caps = f["capabilities"]
        return "writer" if caps.get("canEdit") else "commenter" if caps.get("canComment") else "reader"
    best: str | None = None
    for p in f.get("permissions") or ():
        mine = p.get("type") == "anyone" or (p.get("type") == "user" and p.get("emailAddress") == account.EMAIL)
        role = str(p.get("role", ""))
        if mine and role in RANK and (best is None or RANK[role] > RANK[best]):
            best = role
    return best


def listed(f: Json) -> bool:
    """In the user's files.list: their own, and what was shared with them by address (link sharing alone does not
    put a file there)."""
    if owned_by_me(f):
        return True
    return any(p.get("type") == "user" and p.get("emailAddress") == account.EMAIL for p in f.get("permissions") or ())


def has_role(f: Json, email: str, roles: tuple[str, ...]) -> bool:
    if "owner" in roles and (owned_by_me(f) and email == account.EMAIL or
                             any(o.get("emailAddress") == email for o in f.get("owners") or ())):
        return True
    return any(p.get("emailAddress") == email and p.get("role") in roles for p in f.get("permissions") or ())


def content(ws: Workspace, store: dict[str, Json], resource_id: str, need: str = "reader") -> Json:
    """A spreadsheet or a form, as its Drive file's sharing lets the user at it: Sheets' and Forms' own 404 and 403."""
    f = ws.files.get(resource_id)
    found = store.get(resource_id)
    role = role_of(f) if f is not None else None
    if found is None or role is None:
        raise status_error(404, "Requested entity was not found.")
    if RANK[role] < RANK[need]:
        raise status_error(403, "The caller does not have permission")
    return found


class Drive:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws

    # ---- reading ------------------------------------------------------------------------------------------------
    def root(self) -> Json:
        return {"kind": "drive#file", "id": self.ws.root_id, "name": "My Drive", "mimeType": FOLDER,
                "starred": False, "trashed": False, "explicitlyTrashed": False, "spaces": ["drive"],
                "owners": [account.user()], "ownedByMe": True, "createdTime": "2020-01-01T00:00:00.000Z",
                "modifiedTime": "2020-01-01T00:00:00.000Z", "capabilities": _capabilities("owner")}

    def get(self, file_id: str, need: str = "reader") -> Json:
        if file_id in ("root", self.ws.root_id):
            return self.root()
        f = self.ws.files.get(file_id)
        role = role_of(f) if f is not None else None
        if f is None or role is None:
            raise not_found(file_id)
        if RANK[role] < RANK[need]:
            raise forbidden(file_id)
        return f

    def view(self, f: Json, wanted: Collection[str] | None = None) -> Json:
        """The file as the user is shown it (the permissions only its writers see); `wanted`: the only keys the
        answer will show (None: all)."""
        if wanted is not None and not {"capabilities", "ownedByMe", "permissions", "permissionIds", "*"} & set(wanted):
            return {k: f[k] for k in wanted if k in f}
        out = {k: v for k, v in f.items() if k != "content"}
        role = role_of(f) or "reader"
        out["ownedByMe"] = owned_by_me(f)
        out["capabilities"] = _capabilities(role)
        if RANK[role] < RANK["writer"]:
            out.pop("permissions", None)
            out.pop("permissionIds", None)
        return out

    def visible(self) -> list[Json]:
        return [f for f in self.ws.files.values() if listed(f)]

    # ---- writing ------------------------------------------------------------------------------------------------
    def create(self, meta: Json, content: bytes | None = None, content_type: str | None = None) -> Json:
        mime = str(meta.get("mimeType") or content_type or "application/octet-stream")
        name = str(meta.get("name") or ("Untitled" if mime.startswith("application/vnd.google-apps") else "Untitled"))
        given = meta.get("parents") or []
        if not isinstance(given, list) or not all(isinstance(p, str) and p for p in given):
            raise parameter_error(400, "invalid", "Invalid Value", "parents")
        parents = list(given) or [self.ws.root_id]
        for parent in parents:
            self._parent(parent)
        parents = [self.ws.root_id if p == "root" else p for p in parents]
        file_id = self.ws.file_id()
        now = self.ws.now()
        f: Json = {"kind": "drive#file", "id": file_id, "name": name, "mimeType": mime, "starred": False,
                   "trashed": False, "explicitlyTrashed": False, "parents": parents, "spaces": ["drive"],
                   "version": "1", "webViewLink": LINKS.get(mime, "https://drive.google.com/file/d/{id}/view"
                                                                 "?usp=drivesdk").format(id=file_id),
                   "createdTime": now, "modifiedTime": now, "modifiedByMeTime": now, "viewedByMeTime": now,
                   "owners": [account.user()], "lastModifyingUser": account.user(), "shared": False,
                   "writersCanShare": True, "viewersCanCopyContent": True, "copyRequiresWriterPermission": False,
                   "permissions": [_owner_permission()], "permissionIds": [account.PERMISSION_ID]}
        for key in WRITABLE:
            if key in meta and key not in ("name", "trashed"):
                f[key] = meta[key]
        if content is not None:
            f["size"] = str(len(content))
            f["content"] = content
        self.ws.files[file_id] = f
        if mime == SPREADSHEET:
            self.ws.sheets[file_id] = grid.new_spreadsheet(file_id, name)
        elif mime == FORM:
            forms_model.new_form(self.ws, file_id, "", name)
        return f

    def _parent(self, parent: str) -> None:
        if parent in ("root", self.ws.root_id):
            return
        p = self.get(parent, "writer")
        if p.get("mimeType") != FOLDER:
            raise parameter_error(400, "invalid", "The specified parent is not a folder.", "parents")

    def copy(self, source_id: str, meta: Json) -> Json:
        src = self.get(source_id, "reader")
        if src.get("mimeType") == FOLDER:
            raise parameter_error(403, "fileNotCopyable", "This file cannot be copied by the user.", "fileId")
        name = str(meta.get("name") or f"Copy of {src.get('name', '')}")
        parents = meta.get("parents") or None
        new = self.create({**{k: v for k, v in meta.items() if k in WRITABLE}, "name": name,
                           "mimeType": "application/octet-stream", "parents": parents or [self.ws.root_id]})
        new["mimeType"] = src["mimeType"]
        new["webViewLink"] = LINKS.get(src["mimeType"], str(new["webViewLink"])).format(id=new["id"])
        if "description" in src and "description" not in meta:
            new["description"] = src["description"]
        if "content" in src:
            new["content"], new["size"] = src["content"], src.get("size")
        if src["mimeType"] == SPREADSHEET and source_id in self.ws.sheets:
            self.ws.sheets[new["id"]] = grid.copy_book(self.ws.sheets[source_id], new["id"], name)
        elif src["mimeType"] == FORM and source_id in self.ws.forms:
            forms_model.copy_form(self.ws, source_id, new["id"], name)
        return new

    def update(self, file_id: str, meta: Json, add: list[str], remove: list[str]) -> Json:
        f = self.get(file_id, "writer")
        for key in WRITABLE:
            if key in meta:
                f[key] = meta[key]
        if "trashed" in meta:
            f["explicitlyTrashed"] = bool(meta["trashed"])
        for parent in add:
            self._parent(parent)
        parents = [p for p in f.get("parents") or [] if p not in remove and not (p == self.ws.root_id and
                                                                                 "root" in remove)]
        for parent in add:
            pid = self.ws.root_id if parent == "root" else parent
            if pid not in parents:
                parents.append(pid)
        f["parents"] = parents
        now = self.ws.now()
        f["modifiedTime"] = f["modifiedByMeTime"] = now
        f["version"] = str(int(f.get("version", "1")) + 1)
        if "name" in meta:
            self.renamed(f)
        return f

    def renamed(self, f: Json) -> None:
        """Drive's name is the spreadsheet's title and the form's document title."""
        if f["id"] in self.ws.sheets:
            self.ws.sheets[f["id"]].setdefault("properties", {})["title"] = f["name"]
        if f["id"] in self.ws.forms:
            self.ws.forms[f["id"]].setdefault("info", {})["documentTitle"] = f["name"]

    def delete(self, file_id: str) -> None:
        f = self.get(file_id, "writer")
        if not owned_by_me(f):
            raise forbidden(file_id)
        doomed = [file_id]
        if f.get("mimeType") == FOLDER:
            doomed += self._descendants(file_id)
        for fid in doomed:
            self.ws.files.pop(fid, None)
            self.ws.sheets.pop(fid, None)
            self.ws.forms.pop(fid, None)
            self.ws.responses.pop(fid, None)
        for code in [c for c, fid in self.ws.short_links.items() if fid in doomed]:
            del self.ws.short_links[code]

    def _descendants(self, folder: str) -> list[str]:
        out, todo = [], [folder]
        while todo:
            parent = todo.pop()
            for f in self.ws.files.values():
                if parent in (f.get("parents") or []) and f["id"] not in out:
                    out.append(f["id"])
                    if f.get("mimeType") == FOLDER:
                        todo.append(f["id"])
        return out

    # ---- permissions --------------------------------------------------------------------------------------------
    def add_permission(self, file_id: str, body: Json) -> Json:
        f = self.get(file_id, "writer")
        kind, role = body.get("type"), body.get("role")
        if kind not in TYPES:
            raise parameter_error(400, "invalid", "Invalid permission type specified", "permission.type")
        if role not in ROLES:
            raise parameter_error(400, "invalid", "Invalid permission role specified", "permission.role")
        if kind in ("user", "group") and not body.get("emailAddress"):
            raise parameter_error(400, "required", "Permission email address is required for type user or group.",
                                  "permission.emailAddress")
        if kind == "domain" and not body.get("domain"):
            raise parameter_error(400, "required", "A domain is required for type domain.", "permission.domain")
        perm: Json = {"kind": "drive#permission", "type": kind, "role": role}
        if kind == "anyone":
            perm["id"] = "anyoneWithLink"
            perm["allowFileDiscovery"] = bool(body.get("allowFileDiscovery", False))
        elif kind == "domain":
            perm["id"] = self.ws.ids.digits(20)
            perm["domain"] = body["domain"]
        else:
            perm["id"] = self.ws.ids.digits(20)
            perm["emailAddress"] = str(body["emailAddress"]).lower()
        perms = [p for p in f.setdefault("permissions", []) if p.get("id") != perm["id"]]
        perms.append(perm)
        f["permissions"] = perms
        f["permissionIds"] = [p["id"] for p in perms]
        f["shared"] = True
        return perm

    def permissions(self, file_id: str) -> list[Json]:
        f = self.get(file_id, "reader")
        if RANK[role_of(f) or "reader"] < RANK["writer"]:
            raise forbidden(file_id)
        return list(f.get("permissions") or [])

    def permission(self, file_id: str, permission_id: str) -> Json:
        for p in self.permissions(file_id):
            if p.get("id") == permission_id:
                return p
        raise parameter_error(404, "notFound", f"Permission not found: {permission_id}.", "permissionId")

    def remove_permission(self, file_id: str, permission_id: str) -> None:
        p = self.permission(file_id, permission_id)
        if p.get("role") == "owner":
            raise parameter_error(403, "cannotDeletePermission", "The owner of a file cannot be removed.",
                                  "permissionId")
        f = self.get(file_id, "writer")
        f["permissions"] = [q for q in f["permissions"] if q.get("id") != permission_id]
        f["permissionIds"] = [q["id"] for q in f["permissions"]]
        f["shared"] = len(f["permissions"]) > 1


def _owner_permission() -> Json:
    return {"kind": "drive#permission", "id": account.PERMISSION_ID, "type": "user", "role": "owner",
            "emailAddress": account.EMAIL, "displayName": account.NAME}


def _capabilities(role: str) -> Json:
    write = RANK[role] >= RANK["writer"]
    return {"canEdit": write, "canCopy": True, "canComment": RANK[role] >= RANK["commenter"], "canShare": write,
            "canDelete": role == "owner", "canTrash": role == "owner", "canRename": write,
            "canAddChildren": write, "canDownload": True, "canReadRevisions": write}

