"""What a recorded run showed of the Google Workspace it met, rebuilt as the workspace emulator's seed pack
(decathlon/emulators/workspace/state.py), ids exact.

A run's Sheets server shows: the spreadsheets of the task's Drive folder (list_spreadsheets: id and title, newest
first), a spreadsheet's sheet titles in order (list_sheets), and a sheet's grid (get_sheet_data: the spreadsheet's
properties, the sheet's properties and the cells of the range asked, as spreadsheets.get?includeGridData=true gives
them), the folder's id where the run created a spreadsheet (create_spreadsheet's `folder`). A grid counts as seen only
from an answer the recorder did not cut, read before the run wrote to that spreadsheet, and only from A1: an answer of
a range starting elsewhere shows no sheet's first cells. Calendars and forms the runs met are empty (the one listing
found no event; every form is the run's own creation), so nothing of them is seeded.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from decathlon.emulators.fidelity.recorded import Exchange
from decathlon.emulators.kit.state import MANIFEST, Manifest, write_json
from decathlon.emulators.workspace import account, links
from decathlon.emulators.workspace.sheets import a1
from decathlon.emulators.workspace.store import FOLDER, SPREADSHEET

SHEETS = "google_sheet-"
CUT = re.compile(r"overlong_tool_outputs|is too long! Only the first")
# Where no run shows the task's folder, the replay's own: list_spreadsheets answers never print it.
REPLAY_FOLDER = "1fidelityReplayFolder000000000000"
WRITES = {"update_cells", "batch_update_cells", "add_rows", "add_columns", "rename_sheet", "create_sheet",
          "copy_sheet", "share_spreadsheet"}
SEEDED_AT = "2025-01-01T00:00:00.000Z"


def texts(answer: str) -> list[str]:
    """An answer's text items: several shown as the JSON list of MCP content items, one as its text."""
    try:
        doc = json.loads(answer)
    except ValueError:
        return [answer]
    if isinstance(doc, list) and doc and all(isinstance(x, dict) and x.get("type") == "text" for x in doc):
        return [str(x.get("text")) for x in doc]
    return [answer]


def cut(answer: str) -> bool:
    return bool(CUT.search(answer[-400:]))


def json_of(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


@dataclass
class Shown:
    """The cells of a sheet an answer printed whole: `rows` × `columns` from A1 (None: to the sheet's end)."""

    rows: int | None
    columns: int | None

    def covers(self, rows: int | None, columns: int | None) -> bool:
        def within(mine: int | None, asked: int | None) -> bool:
            return mine is None or (asked is not None and asked <= mine)
        return within(self.rows, rows) and within(self.columns, columns)


def extent(cells: str | None) -> tuple[int, int, int | None, int | None] | None:
    """A range's first row and column (0-based) and its last ones (None: open), or None where it is no A1 range."""
    if not cells:
        return 0, 0, None, None
    try:
        c = a1.parse_cells(cells)
    except a1.RangeError:
        return None
    return c.row0 or 0, c.col0 or 0, c.row1, c.col1


@dataclass
class Seen:
    folder: str = REPLAY_FOLDER
    folder_shown: bool = False
    listed: list[tuple[str, str]] = field(default_factory=list)  # (id, title), newest first
    sheet_titles: dict[str, list[str]] = field(default_factory=dict)
    books: dict[str, dict[str, Any]] = field(default_factory=dict)  # id → spreadsheets.get as shown
    shown: dict[tuple[str, str], Shown] = field(default_factory=dict)  # (spreadsheet, sheet) → cells shown whole
    created: set[str] = field(default_factory=set)  # spreadsheets the run made (their recorded ids)


def _spreadsheet_of(ex: Exchange) -> str:
    return str(ex.arguments.get("spreadsheet_id") or ex.arguments.get("spreadsheet") or "")


def rebuild(calls: list[Exchange]) -> Seen:
    seen = Seen()
    written: set[str] = set()
    for ex in calls:
        if not ex.tool.startswith(SHEETS):
            continue
        tool, book_id = ex.tool.removeprefix(SHEETS), _spreadsheet_of(ex)
        docs = [json_of(t) for t in texts(ex.answer)] if not cut(ex.answer) else []
        if tool == "create_spreadsheet" and docs and isinstance(docs[0], dict):
            seen.created.add(str(docs[0].get("spreadsheetId")))
            if docs[0].get("folder"):
                seen.folder, seen.folder_shown = str(docs[0]["folder"]), True
        elif tool == "list_spreadsheets" and not seen.listed:
            seen.listed = [(str(d["id"]), str(d["title"])) for d in docs if isinstance(d, dict) and "id" in d]
        elif tool == "list_sheets" and book_id not in seen.sheet_titles and not ex.answer.startswith("Error"):
            seen.sheet_titles[book_id] = texts(ex.answer)
        elif tool == "get_sheet_data" and book_id not in written and docs and isinstance(docs[0], dict):
            _see_grid(seen, book_id, ex.arguments, docs[0])
        if tool in WRITES:
            written.add(book_id)
    return seen


def _see_grid(seen: Seen, book_id: str, args: dict[str, Any], doc: dict[str, Any]) -> None:
    span = extent(args.get("range"))
    sheets = doc.get("sheets") or []
    if span is None or span[:2] != (0, 0) or len(sheets) != 1 or (book_id, args.get("sheet")) in seen.shown:
        return
    book = seen.books.setdefault(book_id, {k: v for k, v in doc.items() if k != "sheets"} | {"sheets": []})
    book["sheets"].append(sheets[0])
    seen.shown[(book_id, str(args.get("sheet")))] = Shown(span[2], span[3])


def _bare_sheet(title: str, index: int, taken: set[int]) -> dict[str, Any]:
    """A sheet the run only saw named: its id is never shown, so any one the spreadsheet does not use."""
    sheet_id = next(i for i in range(index + 1, 10 ** 6) if i not in taken)
    taken.add(sheet_id)
    return {"properties": {"sheetId": sheet_id, "title": title, "index": index, "sheetType": "GRID",
                           "gridProperties": {"rowCount": 1000, "columnCount": 26}}, "data": [{}]}


def books(seen: Seen) -> dict[str, dict[str, Any]]:
    """The spreadsheets the run met (not those it made), each with every sheet it named, in the order listed."""
    ids = [i for i, _ in seen.listed] + [i for i in [*seen.sheet_titles, *seen.books] if i not in seen.created]
    titles = dict(seen.listed)
    out: dict[str, dict[str, Any]] = {}
    for book_id in dict.fromkeys(ids):
        book = json.loads(json.dumps(seen.books.get(book_id) or {
            "spreadsheetId": book_id, "properties": {"title": titles.get(book_id, "")}, "sheets": [],
            "spreadsheetUrl": links.spreadsheet_url(book_id)}))
        by_title = {s["properties"]["title"]: s for s in book["sheets"]}
        taken = {int(s["properties"].get("sheetId", 0)) for s in book["sheets"]}
        names = seen.sheet_titles.get(book_id) or list(by_title) or ["Sheet1"]
        book["sheets"] = [by_title.get(t) or _bare_sheet(t, i, taken) for i, t in enumerate(names)]
        for i, sheet in enumerate(book["sheets"]):
            sheet["properties"]["index"] = i
        out[book_id] = book
    return out


def _file(file_id: str, name: str, mime: str, parents: list[str], modified: str) -> dict[str, Any]:
    return {"kind": "drive#file", "id": file_id, "name": name, "mimeType": mime, "starred": False, "trashed": False,
            "explicitlyTrashed": False, "parents": parents, "spaces": ["drive"], "version": "1",
            "createdTime": SEEDED_AT, "modifiedTime": modified, "owners": [account.user()], "permissions": [],
            "permissionIds": []}


def write(seen: Seen, folder: Path, root_id: str) -> Path:
    """The seed pack: the task's folder, each spreadsheet the run met in it (listed newest first: their modified
    times fall one second apart in that order) with its content."""
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / MANIFEST, Manifest("workspace").to_json())
    write_json(folder / "drive" / f"{seen.folder}.json", _file(seen.folder, "task", FOLDER, [root_id], SEEDED_AT))
    made = books(seen)
    titles = dict(seen.listed)
    for n, (book_id, book) in enumerate(made.items()):
        modified = f"2025-01-01T00:{59 - n // 60:02d}:{59 - n % 60:02d}.000Z"
        name = titles.get(book_id) or str(book.get("properties", {}).get("title", ""))
        write_json(folder / "drive" / f"{book_id}.json", _file(book_id, name, SPREADSHEET, [seen.folder], modified))
        write_json(folder / "sheets" / f"{book_id}.json", book)
    return folder
