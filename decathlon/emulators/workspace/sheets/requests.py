"""spreadsheets.batchUpdate's requests the emulator carries out: addSheet, deleteSheet, duplicateSheet,
updateSheetProperties, updateSpreadsheetProperties, insertDimension, appendDimension, deleteDimension, updateCells and
repeatCell. A request it does not know is refused as Sheets refuses an unknown field; the batch is all or nothing."""
from __future__ import annotations

import copy
from typing import Any, Callable

from decathlon.emulators.kit.errors import ApiError
from decathlon.emulators.kit.google import status_error
from decathlon.emulators.workspace.fields import apply_mask
from decathlon.emulators.workspace.sheets import cells, grid
from decathlon.emulators.workspace.store import Json, Workspace


class BatchUpdate:
    def __init__(self, ws: Workspace, book: Json) -> None:
        self.ws, self.book = ws, book
        self.index = 0
        self.kind = ""

    def fail(self, message: str) -> ApiError:
        return status_error(400, f"Invalid requests[{self.index}].{self.kind}: {message}")

    def run(self, requests: list[Any]) -> list[Json]:
        handlers: dict[str, Callable[[Json], Json]] = {
            "addSheet": self.add_sheet, "deleteSheet": self.delete_sheet, "duplicateSheet": self.duplicate_sheet,
            "updateSheetProperties": self.update_sheet, "updateSpreadsheetProperties": self.update_spreadsheet,
            "insertDimension": self.insert_dimension, "appendDimension": self.append_dimension,
            "deleteDimension": self.delete_dimension, "updateCells": self.update_cells, "repeatCell": self.repeat_cell}
        replies = []
        for self.index, request in enumerate(requests):
            if not isinstance(request, dict) or len(request) != 1:
                raise status_error(400, f"Invalid requests[{self.index}]: exactly one kind of request is needed")
            (self.kind, body), = request.items()
            handler = handlers.get(self.kind)
            if handler is None:
                raise status_error(400, f"Invalid JSON payload received. Unknown name \"{self.kind}\" at "
                                        f"'requests[{self.index}]': Cannot find field.")
            if not isinstance(body, dict):
                raise self.fail("the request must be an object")
            try:
                replies.append(handler(body))
            except (ValueError, TypeError, AttributeError, KeyError) as exc:  # a field of the wrong type
                raise self.fail(f"a field has a value of the wrong type ({type(exc).__name__}: {exc})") from None
        grid.recalc(self.book)
        return replies

    def _grow(self, cells_more: int) -> None:
        try:
            grid.check_growth(self.book, cells_more)
        except grid.GridError as exc:
            raise self.fail(str(exc)) from None

    def sheet(self, sheet_id: Any) -> Json:
        sheet = grid.by_id(self.book, sheet_id if sheet_id is not None else 0)
        if sheet is None:
            raise self.fail(f"No grid with id: {sheet_id}")
        return sheet

    def _reindex(self) -> None:
        self.book["sheets"].sort(key=lambda s: s["properties"].get("index", 0))
        for i, s in enumerate(self.book["sheets"]):
            s["properties"]["index"] = i

    def _new_title(self, title: str) -> None:
        if grid.by_title(self.book, title) is not None:
            raise self.fail(f"A sheet with the name \"{title}\" already exists. Please enter another name.")

    def add_sheet(self, body: Json) -> Json:
        props = body.get("properties") or {}
        n = len(self.book["sheets"]) + 1
        title = str(props.get("title") or "")
        if not title:
            base = grid.first_sheet_title(self.book["properties"].get("locale", "en_US"))[:-1]
            while grid.by_title(self.book, f"{base}{n}") is not None:
                n += 1
            title = f"{base}{n}"
        self._new_title(title)
        sheet_id = props.get("sheetId")
        if sheet_id is None:
            sheet_id = int(self.ws.ids.digits(9))
        elif grid.by_id(self.book, sheet_id) is not None:
            raise self.fail(f"A sheet with the id {sheet_id} already exists.")
        gp = props.get("gridProperties") or {}
        self._grow(int(gp.get("rowCount", grid.ROWS)) * int(gp.get("columnCount", grid.COLUMNS)))
        index = int(props.get("index", len(self.book["sheets"])))
        sheet = grid.new_sheet(int(sheet_id), title, index, int(gp.get("rowCount", grid.ROWS)),
                               int(gp.get("columnCount", grid.COLUMNS)))
        for key in ("tabColor", "hidden", "rightToLeft", "tabColorStyle"):
            if key in props:
                sheet["properties"][key] = props[key]
        for s in self.book["sheets"]:
            if s["properties"].get("index", 0) >= index:
                s["properties"]["index"] = s["properties"].get("index", 0) + 1
        self.book["sheets"].append(sheet)
        self._reindex()
        return {"addSheet": {"properties": copy.deepcopy(sheet["properties"])}}

    def delete_sheet(self, body: Json) -> Json:
        sheet = self.sheet(body.get("sheetId"))
        if len(self.book["sheets"]) == 1:
            raise self.fail("You can't remove all the sheets in a document.")
        self.book["sheets"].remove(sheet)
        self._reindex()
        return {}

    def duplicate_sheet(self, body: Json) -> Json:
        source = self.sheet(body.get("sourceSheetId"))
        title = str(body.get("newSheetName") or f"Copy of {source['properties']['title']}")
        self._new_title(title)
        new = copy.deepcopy(source)
        new["properties"].update({"title": title, "sheetId": int(body.get("newSheetId") or self.ws.ids.digits(9)),
                                  "index": int(body.get("insertSheetIndex", len(self.book["sheets"])))})
        for s in self.book["sheets"]:
            if s["properties"]["index"] >= new["properties"]["index"]:
                s["properties"]["index"] += 1
        self.book["sheets"].append(new)
        self._reindex()
        return {"duplicateSheet": {"properties": copy.deepcopy(new["properties"])}}

    def update_sheet(self, body: Json) -> Json:
        props = body.get("properties") or {}
        mask = body.get("fields")
        if not isinstance(mask, str) or not mask:
            raise self.fail("At least one field must be updated.")
        sheet = self.sheet(props.get("sheetId", 0))
        title = props.get("title")
        if title is not None and ("title" in mask.split(",") or mask == "*") and title != sheet["properties"]["title"]:
            self._new_title(str(title))
        apply_mask(sheet["properties"], props, mask)
        if "index" in mask.split(","):
            others = [s for s in self.book["sheets"] if s is not sheet]
            others.sort(key=lambda s: s["properties"]["index"])
            others.insert(min(int(props.get("index", 0)), len(others)), sheet)
            self.book["sheets"] = others
            for i, s in enumerate(others):
                s["properties"]["index"] = i
        return {}

    def update_spreadsheet(self, body: Json) -> Json:
        mask = body.get("fields")
        if not isinstance(mask, str) or not mask:
            raise self.fail("At least one field must be updated.")
        apply_mask(self.book["properties"], body.get("properties") or {}, mask)
        return {}

    def _dimension(self, rng: Json) -> tuple[Json, str, int, int]:
        sheet = self.sheet(rng.get("sheetId", 0))
        dim = rng.get("dimension")
        if dim not in ("ROWS", "COLUMNS"):
            raise self.fail("range.dimension must be ROWS or COLUMNS")
        start, end = int(rng.get("startIndex", 0)), rng.get("endIndex")
        rows, columns = grid.size(sheet)
        end_i = int(end) if end is not None else (rows if dim == "ROWS" else columns)
        if start < 0 or end_i <= start:
            raise self.fail("range's endIndex must be greater than its startIndex")
        return sheet, dim, start, end_i

    def insert_dimension(self, body: Json) -> Json:
        sheet, dim, start, end = self._dimension(body.get("range") or {})
        n = end - start
        gp = sheet["properties"]["gridProperties"]
        rows, columns = grid.size(sheet)
        self._grow(n * (columns if dim == "ROWS" else rows))
        if dim == "ROWS":
            if start > rows:
                raise self.fail(f"range.startIndex must be at most {rows}")
            data = grid.row_data(sheet)
            if start < len(data):
                data[start:start] = [{} for _ in range(n)]
            gp["rowCount"] = rows + n
        else:
            if start > columns:
                raise self.fail(f"range.startIndex must be at most {columns}")
            for row in grid.row_data(sheet):
                values = row.get("values")
                if values and start < len(values):
                    values[start:start] = [{} for _ in range(n)]
            gp["columnCount"] = columns + n
        return {}

    def append_dimension(self, body: Json) -> Json:
        sheet = self.sheet(body.get("sheetId", 0))
        length = int(body.get("length", 0))
        if length <= 0:
            raise self.fail("length must be positive")
        gp = sheet["properties"]["gridProperties"]
        rows, columns = grid.size(sheet)
        self._grow(length * (rows if body.get("dimension") == "COLUMNS" else columns))
        if body.get("dimension") == "COLUMNS":
            gp["columnCount"] = columns + length
        elif body.get("dimension") == "ROWS":
            gp["rowCount"] = rows + length
        else:
            raise self.fail("dimension must be ROWS or COLUMNS")
        return {}

    def delete_dimension(self, body: Json) -> Json:
        sheet, dim, start, end = self._dimension(body.get("range") or {})
        gp = sheet["properties"]["gridProperties"]
        rows, columns = grid.size(sheet)
        if dim == "ROWS":
            if end - start >= rows:
                raise self.fail("You can't delete all the rows on the sheet.")
            del grid.row_data(sheet)[start:end]
            gp["rowCount"] = rows - (min(end, rows) - start)
        else:
            if end - start >= columns:
                raise self.fail("You can't delete all the columns on the sheet.")
            for row in grid.row_data(sheet):
                if row.get("values"):
                    del row["values"][start:end]
            gp["columnCount"] = columns - (min(end, columns) - start)
        return {}

    def _cells(self, rng: Json) -> tuple[Json, int, int, int, int]:
        sheet = self.sheet(rng.get("sheetId", 0))
        rows, columns = grid.size(sheet)
        return (sheet, int(rng.get("startRowIndex", 0)), int(rng.get("endRowIndex", rows)),
                int(rng.get("startColumnIndex", 0)), int(rng.get("endColumnIndex", columns)))

    def _set(self, sheet: Json, r: int, c: int, source: Json, mask: str) -> None:
        rows, columns = grid.size(sheet)
        if r >= rows or c >= columns:
            raise self.fail(f"The range goes beyond the grid: row {r + 1}, column {c + 1}")
        data = grid.row_data(sheet)
        while len(data) <= r:
            data.append({})
        values = data[r].setdefault("values", [])
        while len(values) <= c:
            values.append({})
        cell = values[c]
        wanted = ("userEnteredValue", "userEnteredFormat", "note") if mask.strip() == "*" else \
            tuple(p.strip() for p in mask.split(",") if p.strip())
        for path in wanted:
            top = path.split(".", 1)[0]
            if top not in ("userEnteredValue", "userEnteredFormat", "note", "hyperlink", "dataValidation"):
                raise self.fail(f"Invalid field mask: {path}")
            if "." in path:
                apply_mask(cell, source, path)
            elif top in source:
                cell[top] = copy.deepcopy(source[top])
            else:
                cell.pop(top, None)
        cells.settle(cell)

    def update_cells(self, body: Json) -> Json:
        mask = body.get("fields")
        if not isinstance(mask, str) or not mask:
            raise self.fail("At least one field must be updated.")
        if "start" in body:
            start = body["start"] or {}
            sheet = self.sheet(start.get("sheetId", 0))
            r0, c0 = int(start.get("rowIndex", 0)), int(start.get("columnIndex", 0))
            r1 = c1 = None
        else:
            sheet, r0, r1_, c0, c1_ = self._cells(body.get("range") or {})
            r1, c1 = r1_, c1_
        for i, row in enumerate(body.get("rows") or []):
            for j, cell in enumerate((row or {}).get("values") or []):
                r, c = r0 + i, c0 + j
                if (r1 is not None and r >= r1) or (c1 is not None and c >= c1):
                    continue
                self._set(sheet, r, c, cell or {}, mask)
        return {}

    def repeat_cell(self, body: Json) -> Json:
        mask = body.get("fields")
        if not isinstance(mask, str) or not mask:
            raise self.fail("At least one field must be updated.")
        sheet, r0, r1, c0, c1 = self._cells(body.get("range") or {})
        if (r1 - r0) * (c1 - c0) > 200_000:
            raise self.fail("The range is too large for the emulator (200,000 cells at most)")
        for r in range(r0, r1):
            for c in range(c0, c1):
                self._set(sheet, r, c, body.get("cell") or {}, mask)
        return {}
