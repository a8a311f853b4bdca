"""A spreadsheet as Sheets' own JSON (`spreadsheets.get?includeGridData=true`: each sheet's cells in `data[0].rowData`),
and what the API does to it: find a sheet, resolve a range against the grid, read and write a rectangle of cells,
work out the formulas again."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from decathlon.emulators.workspace import account
from decathlon.emulators.workspace.links import spreadsheet_url
from decathlon.emulators.workspace.sheets import a1, cells, formula

Json = dict[str, Any]
ROWS, COLUMNS = 1000, 26
MAX_CELLS = 10_000_000  # Sheets' limit for a whole spreadsheet
FIRST_SHEET = {"zh": "工作表1", "ja": "シート1", "ko": "시트1", "de": "Tabellenblatt1", "fr": "Feuille 1",
               "es": "Hoja 1", "it": "Foglio1", "pt": "Página1", "ru": "Лист1"}


class GridError(ValueError):
    """A request the grid refuses, with Sheets' own message (a 400)."""


def first_sheet_title(locale: str) -> str:
    """A new spreadsheet's first sheet is named in its locale's language (`Sheet1` in English)."""
    return FIRST_SHEET.get(locale.split("_", 1)[0].lower(), "Sheet1")


def new_sheet(sheet_id: int, title: str, index: int, rows: int = ROWS, columns: int = COLUMNS) -> Json:
    return {"properties": {"sheetId": sheet_id, "title": title, "index": index, "sheetType": "GRID",
                           "gridProperties": {"rowCount": rows, "columnCount": columns}},
            "data": [{"rowData": []}]}


def new_spreadsheet(spreadsheet_id: str, title: str, locale: str = account.LOCALE,
                    time_zone: str = account.TIME_ZONE) -> Json:
    return {"spreadsheetId": spreadsheet_id,
            "properties": {"title": title, "locale": locale, "autoRecalc": "ON_CHANGE", "timeZone": time_zone,
                           "defaultFormat": {k: v for k, v in cells.default_format().items()
                                             if k != "hyperlinkDisplayType"}},
            "sheets": [new_sheet(0, first_sheet_title(locale), 0)],
            "spreadsheetUrl": spreadsheet_url(spreadsheet_id)}


def check_growth(book: Json, more: int) -> None:
    """GridError where `more` cells would take the spreadsheet over Sheets' limit."""
    total = sum(size(s)[0] * size(s)[1] for s in book.get("sheets", []))
    if total + more > MAX_CELLS:
        raise GridError(f"This action would increase the number of cells in the workbook above the limit of "
                        f"{MAX_CELLS} cells.")


def titles(book: Json) -> list[str]:
    return [s["properties"]["title"] for s in book.get("sheets", [])]


def by_title(book: Json, title: str) -> Json | None:
    for sheet in book.get("sheets", []):
        if sheet["properties"]["title"] == title:
            return sheet
    return None


def by_id(book: Json, sheet_id: Any) -> Json | None:
    for sheet in book.get("sheets", []):
        if sheet["properties"].get("sheetId", 0) == sheet_id:
            return sheet
    return None


def size(sheet: Json) -> tuple[int, int]:
    grid = sheet["properties"].setdefault("gridProperties", {})
    return int(grid.get("rowCount", ROWS)), int(grid.get("columnCount", COLUMNS))


def row_data(sheet: Json) -> list[Json]:
    data = sheet.setdefault("data", [])
    if not data:
        data.append({})
    return data[0].setdefault("rowData", [])


@dataclass(frozen=True)
class Rect:
    sheet: Json
    row0: int
    row1: int
    col0: int
    col1: int

    @property
    def title(self) -> str:
        return str(self.sheet["properties"]["title"])

    def a1(self) -> str:
        return a1.write(self.title, self.row0, self.row1, self.col0, self.col1)


def resolve(book: Json, text: str) -> Rect:
    """`text` as a rectangle of the grid (open sides to its edges); GridError `Unable to parse range: X`."""
    try:
        ref = a1.parse(text, titles(book))
    except a1.RangeError:
        raise GridError(f"Unable to parse range: {text}") from None
    if ref.sheet is None:
        sheets = book.get("sheets") or []
        if not sheets:
            raise GridError(f"Unable to parse range: {text}")
        sheet = sheets[0]
    else:
        found = by_title(book, ref.sheet)
        if found is None:
            raise GridError(f"Unable to parse range: {text}")
        sheet = found
    rows, columns = size(sheet)
    c = ref.cells or a1.Cells(None, None, None, None)
    return Rect(sheet, c.row0 or 0, c.row1 if c.row1 is not None else rows,
                c.col0 or 0, c.col1 if c.col1 is not None else columns)


def read(rect: Rect) -> list[list[Json]]:
    """The rectangle's cells, row by row, trailing empty cells and rows left out (as values.get trims them)."""
    rows = row_data(rect.sheet)
    out: list[list[Json]] = []
    for r in range(rect.row0, min(rect.row1, len(rows))):
        values = rows[r].get("values") or []
        line = values[rect.col0:min(rect.col1, len(values))]
        out.append(line)
    while out:
        line = out[-1]
        while line and not _has_value(line[-1]):
            line.pop()
        if line:
            break
        out.pop()
    for line in out:
        while line and not _has_value(line[-1]):
            line.pop()
    return out


def _has_value(cell: Json) -> bool:
    return "userEnteredValue" in cell or "effectiveValue" in cell or "formattedValue" in cell


def write(book: Json, sheet: Json, row0: int, col0: int, matrix: list[list[Json | None]]) -> tuple[int, int, int]:
    """Put `matrix` (None: leave that cell) at (row0, col0); (rows, columns, cells) it spans. The grid must hold it."""
    rows, columns = size(sheet)
    height = len(matrix)
    width = max((len(r) for r in matrix), default=0)
    if row0 + height > rows or col0 + width > columns:
        title = a1.quote_title(sheet["properties"]["title"])
        raise GridError(f"Range ({title}!{a1.column_letters(col0 + width - 1)}{row0 + height}) exceeds grid limits. "
                        f"Max rows: {rows}, max columns: {columns}")
    data = row_data(sheet)
    written = 0
    for i, line in enumerate(matrix):
        r = row0 + i
        while len(data) <= r:
            data.append({})
        values = data[r].setdefault("values", [])
        for j, cell in enumerate(line):
            if cell is None:
                continue
            c = col0 + j
            while len(values) <= c:
                values.append({})
            old = values[c]
            kept = {k: v for k, v in old.items() if k in ("userEnteredFormat", "note")}
            if cell.get("userEnteredFormat"):
                kept["userEnteredFormat"] = {**kept.get("userEnteredFormat", {}), **cell["userEnteredFormat"]}
            new = {**({"userEnteredValue": cell["userEnteredValue"]} if "userEnteredValue" in cell else {}), **kept}
            values[c] = cells.settle(new) if "userEnteredValue" in new else new
            written += 1
    if _formulas(book):
        recalc(book)
    return height, width, written


def _formulas(book: Json) -> bool:
    for sheet in book.get("sheets", []):
        for row in row_data(sheet):
            for cell in row.get("values") or ():
                if "formulaValue" in (cell.get("userEnteredValue") or {}):
                    return True
    return False


def recalc(book: Json) -> None:
    """Work every formula out again (in two passes, so one that reads another's result sees it)."""
    for _ in range(2):
        for sheet in book.get("sheets", []):
            for r, row in enumerate(row_data(sheet)):
                for c, cell in enumerate(row.get("values") or ()):
                    text = (cell.get("userEnteredValue") or {}).get("formulaValue")
                    if text is None:
                        continue
                    try:
                        value: Json | None = formula.evaluate(text, _lookup(book, sheet))
                    except formula.FormulaError:
                        value = None
                    cells.settle(cell, value)


def _lookup(book: Json, here: Json) -> formula.Lookup:
    def values(title: str | None, row0: int, row1: int, col0: int, col1: int) -> list[list[Any]]:
        sheet = here if title is None else by_title(book, title)
        if sheet is None:
            raise formula.FormulaError(f"no sheet {title}")
        data = row_data(sheet)
        out = []
        for r in range(row0, row1):
            line = (data[r].get("values") or []) if r < len(data) else []
            out.append([cells.unformatted(line[c]["effectiveValue"]) if c < len(line) and "effectiveValue" in line[c]
                        else None for c in range(col0, col1)])
        return out
    return values


def clear(rect: Rect) -> None:
    data = row_data(rect.sheet)
    for r in range(rect.row0, min(rect.row1, len(data))):
        values = data[r].get("values") or []
        for c in range(rect.col0, min(rect.col1, len(values))):
            kept = {k: v for k, v in values[c].items() if k == "userEnteredFormat"}
            values[c] = kept


def copy_book(book: Json, new_id: str, title: str) -> Json:
    out = copy.deepcopy(book)
    out["spreadsheetId"] = new_id
    out.setdefault("properties", {})["title"] = title
    out["spreadsheetUrl"] = spreadsheet_url(new_id)
    return out
