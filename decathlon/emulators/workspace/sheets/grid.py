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
                    time_zone: str = account.SHEETS_TIME_ZONE) -> Json:
    default_format = copy.deepcopy({k: v for k, v in cells.default_format().items() if k != "hyperlinkDisplayType"})
    # A new spreadsheet's default text format names the font as its theme does (cells' own effectiveFormat says Arial).
    default_format["textFormat"]["fontFamily"] = "arial,sans,sans-serif"
    return {"spreadsheetId": spreadsheet_id,
            "properties": {"title": title, "locale": locale, "autoRecalc": "ON_CHANGE", "timeZone": time_zone,
                           "defaultFormat": default_format, "spreadsheetTheme": default_theme()},
            "sheets": [new_sheet(0, first_sheet_title(locale), 0)],
            "spreadsheetUrl": spreadsheet_url(spreadsheet_id)}


# Sheets' default theme, as its API gives a new spreadsheet (the recorded runs' spreadsheets.get of books the agent made).
_THEME_COLORS: tuple[tuple[str, dict[str, float]], ...] = (("TEXT", {}), ("BACKGROUND", {"red": 1, "green": 1, "blue": 1}),
                 ("ACCENT1", {"red": 0.25882354, "green": 0.52156866, "blue": 0.95686275}),
                 ("ACCENT2", {"red": 0.91764706, "green": 0.2627451, "blue": 0.20784314}),
                 ("ACCENT3", {"red": 0.9843137, "green": 0.7372549, "blue": 0.015686275}),
                 ("ACCENT4", {"red": 0.20392157, "green": 0.65882355, "blue": 0.3254902}),
                 ("ACCENT5", {"red": 1, "green": 0.42745098, "blue": 0.003921569}),
                 ("ACCENT6", {"red": 0.27450982, "green": 0.7411765, "blue": 0.7764706}),
                 ("LINK", {"red": 0.06666667, "green": 0.33333334, "blue": 0.8}))


def default_theme() -> Json:
    return {"primaryFontFamily": "Arial",
            "themeColors": [{"colorType": kind, "color": {"rgbColor": dict(rgb)}} for kind, rgb in _THEME_COLORS]}


ROW_PIXELS, COLUMN_PIXELS = 21, 100  # Sheets' default row height and column width


def dimensions(sheet: Json, row0: int, row1: int, col0: int, col1: int) -> Json:
    """A read's rowMetadata and columnMetadata (a GridData's, for its rows and columns within the grid): the sizes
    the sheet was given (a seed, a snapshot), else Sheets' defaults."""
    stored = (sheet.get("data") or [{}])[0]
    rows, columns = size(sheet)

    def meta(kept: Any, start: int, end: int, default: int) -> list[Json]:
        kept = kept if isinstance(kept, list) else []
        return [copy.deepcopy(kept[i]) if i < len(kept) and isinstance(kept[i], dict) and kept[i]
                else {"pixelSize": default} for i in range(start, end)]

    return {"rowMetadata": meta(stored.get("rowMetadata"), row0, min(row1, rows), ROW_PIXELS),
            "columnMetadata": meta(stored.get("columnMetadata"), col0, min(col1, columns), COLUMN_PIXELS)}


def with_dimensions(book: Json) -> Json:
    """The whole book with its grid data, as spreadsheets.get?includeGridData=true answers: each sheet's data with the
    sizes of all its rows and columns (the stored book is left as it is)."""
    out = dict(book)
    out["sheets"] = []
    for sheet in book.get("sheets", []):
        rows, columns = size(sheet)
        data = {k: v for k, v in (sheet.get("data") or [{}])[0].items() if k not in ("rowMetadata", "columnMetadata")}
        out["sheets"].append({**sheet, "data": [{**data, **dimensions(sheet, 0, rows, 0, columns)}]})
    return out


# A Spreadsheet's fields in the order Google writes them (a seed or a snapshot may hold them in another).
_ORDER = ("spreadsheetId", "properties", "sheets", "namedRanges", "spreadsheetUrl", "developerMetadata", "dataSources",
          "dataSourceSchedules")


def in_google_order(book: Json) -> Json:
    return {**{k: book[k] for k in _ORDER if k in book}, **{k: v for k, v in book.items() if k not in _ORDER}}


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
        _trim(values)
    _trim(data, "values")
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
        _trim(values)
    _trim(data, "values")


def _trim(line: list[Json], key: str | None = None) -> None:
    """Empty cells (or rows) at the end are no part of the grid's data: Sheets gives none back."""
    while line and not (line[-1].get(key) if key else line[-1]):
        line.pop()


def copy_book(book: Json, new_id: str, title: str) -> Json:
    out = copy.deepcopy(book)
    out["spreadsheetId"] = new_id
    out.setdefault("properties", {})["title"] = title
    out["spreadsheetUrl"] = spreadsheet_url(new_id)
    return out
