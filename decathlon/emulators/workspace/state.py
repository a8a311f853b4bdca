"""The workspace emulator's state as a folder (decathlon.emulators.kit.state), one plain file per resource under its
real id, each as Google's API returns it, so that a seed captured from Google loads as it is:

    drive/<fileId>.json                  the file's Drive metadata (files.get?fields=*) with its `permissions`
    drive/<fileId>.content               an uploaded file's bytes
    sheets/<spreadsheetId>.json          spreadsheets.get?includeGridData=true
    forms/<formId>.json                  forms.get
    forms/<formId>.responses.json        forms.responses.list's `responses`
    calendar/<calendarId>/<eventId>.json events.get
    workspace.json                       the My Drive root's id, forms.gle's links, the id generator's state

A seed may hold any of these. A spreadsheet or form with no Drive file gets one (the user's own); a Drive file of a
spreadsheet with no content gets an empty spreadsheet."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from decathlon.emulators.kit.state import FolderState, StateError, read_json, write_json
from decathlon.emulators.workspace import account
from decathlon.emulators.workspace.sheets import grid
from decathlon.emulators.workspace.store import FORM, SPREADSHEET, Json, Workspace

NAME = "workspace"


def _safe(name: str) -> str:
    if not name or "/" in name or name.startswith(".") or "\x00" in name:
        raise StateError(f"{name!r} cannot be a resource id", "bad_file")
    return name


class WorkspaceState(FolderState):
    name = NAME

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._seed_rng = ws.ids._rng.getstate()
        self._root = ws.root_id

    async def _fresh(self) -> None:
        self.ws.clear()
        self.ws.ids._rng.setstate(self._seed_rng)
        self.ws.root_id = self._root

    async def _dump(self, folder: Path) -> None:
        for fid, f in sorted(self.ws.files.items()):
            meta = {k: v for k, v in f.items() if k != "content"}
            write_json(folder / "drive" / f"{fid}.json", meta)
            if "content" in f:
                (folder / "drive" / f"{fid}.content").write_bytes(f["content"])
        for sid, book in sorted(self.ws.sheets.items()):
            write_json(folder / "sheets" / f"{sid}.json", book)
        for form_id, form in sorted(self.ws.forms.items()):
            write_json(folder / "forms" / f"{form_id}.json", form)
            write_json(folder / "forms" / f"{form_id}.responses.json", self.ws.responses.get(form_id, []))
        for cid, events in sorted(self.ws.events.items()):
            for eid, event in sorted(events.items()):
                write_json(folder / "calendar" / cid / f"{eid}.json", event)
        version, internal, gauss = self.ws.ids._rng.getstate()
        write_json(folder / "workspace.json", {"root": self.ws.root_id, "shortLinks": dict(sorted(
            self.ws.short_links.items())), "ids": [version, list(internal), gauss]})

    async def _load(self, folder: Path, seed: bool) -> None:
        meta = folder / "workspace.json"
        if meta.exists() or not seed:
            doc = read_json(meta)
            if not isinstance(doc, dict) or not isinstance(doc.get("root"), str):
                raise StateError(f"{meta} must hold \"root\", \"shortLinks\" and \"ids\"", "bad_file")
            self.ws.root_id = doc["root"]
            self.ws.short_links.update({str(k): str(v) for k, v in (doc.get("shortLinks") or {}).items()})
            ids = doc.get("ids")
            if ids is not None:
                try:
                    self.ws.ids._rng.setstate((ids[0], tuple(ids[1]), ids[2]))
                except (TypeError, ValueError, IndexError):
                    raise StateError(f"{meta}: \"ids\" is not a generator's state", "bad_file") from None
        for path in sorted((folder / "drive").glob("*.json")):
            f = self._object(path)
            fid = _safe(str(f.get("id") or path.stem))
            f["id"] = fid
            content = path.with_suffix(".content")
            if content.exists():
                f["content"] = content.read_bytes()
            self.ws.files[fid] = f
        for path in sorted((folder / "sheets").glob("*.json")):
            book = self._object(path)
            sid = _safe(str(book.get("spreadsheetId") or path.stem))
            book["spreadsheetId"] = sid
            if not isinstance(book.get("sheets"), list):
                raise StateError(f"{path}: a spreadsheet has a list of \"sheets\"", "bad_file")
            self.ws.sheets[sid] = book
            self._file_for(sid, str(book.get("properties", {}).get("title", "Untitled spreadsheet")), SPREADSHEET)
        for path in sorted((folder / "forms").glob("*.json")):
            if path.name.endswith(".responses.json"):
                continue
            form = self._object(path)
            form_id = _safe(str(form.get("formId") or path.stem))
            form["formId"] = form_id
            self.ws.forms[form_id] = form
            answers = path.with_name(f"{path.stem}.responses.json")
            responses = read_json(answers) if answers.exists() else []
            if not isinstance(responses, list):
                raise StateError(f"{answers} must hold a list of responses", "bad_file")
            self.ws.responses[form_id] = responses
            info = form.get("info") or {}
            self._file_for(form_id, str(info.get("documentTitle") or info.get("title") or "Untitled form"), FORM)
        for cal in sorted(p for p in (folder / "calendar").glob("*") if p.is_dir()):
            cid = account.EMAIL if cal.name == "primary" else _safe(cal.name)
            for path in sorted(cal.glob("*.json")):
                event = self._object(path)
                eid = _safe(str(event.get("id") or path.stem))
                event["id"] = eid
                self.ws.events.setdefault(cid, {})[eid] = event
        for fid, f in self.ws.files.items():
            if f.get("mimeType") == SPREADSHEET and fid not in self.ws.sheets:
                self.ws.sheets[fid] = grid.new_spreadsheet(fid, str(f.get("name", "")))

    def _object(self, path: Path) -> Json:
        doc: Any = read_json(path)
        if not isinstance(doc, dict):
            raise StateError(f"{path} must hold a JSON object", "bad_file")
        return doc

    def _file_for(self, resource_id: str, name: str, mime: str) -> None:
        if resource_id in self.ws.files:
            return
        now = self.ws.now()
        self.ws.files[resource_id] = {
            "kind": "drive#file", "id": resource_id, "name": name, "mimeType": mime, "starred": False,
            "trashed": False, "explicitlyTrashed": False, "parents": [self.ws.root_id], "spaces": ["drive"],
            "version": "1", "createdTime": now, "modifiedTime": now, "owners": [account.user()],
            "permissions": [], "permissionIds": []}

