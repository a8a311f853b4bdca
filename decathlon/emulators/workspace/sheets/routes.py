"""Sheets v4's routes: spreadsheets (create, get, batchUpdate), their values (get, batchGet, update, append, clear,
batchUpdate, batchClear) and sheets.copyTo. Access follows the spreadsheet's Drive file (drive.files)."""
from __future__ import annotations

import copy

from aiohttp import web

from decathlon.emulators.kit.google import status_error
from decathlon.emulators.workspace import fields
from decathlon.emulators.workspace.drive.files import Drive, content
from decathlon.emulators.workspace.sheets import a1, cells, grid
from decathlon.emulators.workspace.sheets.requests import BatchUpdate
from decathlon.emulators.workspace.store import SPREADSHEET, Json, Workspace
from decathlon.emulators.workspace.web import BAD_JSON, answer, bad, json_body, selection

RENDER = ("FORMATTED_VALUE", "UNFORMATTED_VALUE", "FORMULA")
INPUT = ("RAW", "USER_ENTERED")
DIMENSIONS = ("ROWS", "COLUMNS")


def _choice(request: web.Request, name: str, allowed: tuple[str, ...], default: str | None) -> str:
    value = request.query.get(name, default)
    if value is None:
        raise bad(f"'{name}' is required but not specified")
    if value not in allowed:
        raise bad(f"Invalid value at '{_snake(name)}' (type.googleapis.com/google.apps.sheets.v4.{name[0].upper()}"
                  f"{name[1:]}), \"{value}\"")
    return value


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


class SheetsRoutes:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.drive = Drive(ws)

    def book(self, spreadsheet_id: str, need: str = "reader") -> Json:
        return content(self.ws, self.ws.sheets, spreadsheet_id, need)

    def rect(self, book: Json, text: str) -> grid.Rect:
        try:
            return grid.resolve(book, text)
        except grid.GridError as exc:
            raise bad(str(exc)) from None

    # ---- spreadsheets -------------------------------------------------------------------------------------------
    async def create(self, request: web.Request) -> web.Response:
        body = await json_body(request, BAD_JSON)
        props: Json = body["properties"] if isinstance(body.get("properties"), dict) else {}
        title = str(props.get("title") or "Untitled spreadsheet")
        sheets = self._sheets(body.get("sheets"))  # checked before anything is made
        f = self.drive.create({"name": title, "mimeType": SPREADSHEET})
        book = self.ws.sheets[f["id"]]
        if props.get("locale"):
            book["properties"]["locale"] = str(props["locale"])
            book["sheets"][0]["properties"]["title"] = grid.first_sheet_title(str(props["locale"]))
        for key in ("timeZone", "autoRecalc"):
            if key in props:
                book["properties"][key] = props[key]
        if sheets:
            book["sheets"] = sheets
        return answer(_without_grid(book), request)

    def _sheets(self, wanted: object) -> list[Json]:
        out: list[Json] = []
        try:
            for i, s in enumerate(w for w in (wanted if isinstance(wanted, list) else []) if isinstance(w, dict)):
                p = s.get("properties") or {}
                gp = p.get("gridProperties") or {}
                rows, columns = int(gp.get("rowCount", grid.ROWS)), int(gp.get("columnCount", grid.COLUMNS))
                if rows < 1 or columns < 1:
                    raise ValueError("a sheet has at least one row and one column")
                sheet_id = int(p["sheetId"]) if "sheetId" in p else 0 if i == 0 else int(self.ws.ids.digits(9))
                out.append(grid.new_sheet(sheet_id, str(p.get("title") or f"Sheet{i + 1}"), i, rows, columns))
        except (ValueError, TypeError, AttributeError) as exc:
            raise bad(f"Invalid spreadsheet.sheets: {exc}") from None
        if sum(grid.size(s)[0] * grid.size(s)[1] for s in out) > grid.MAX_CELLS:
            raise bad(f"This action would increase the number of cells in the workbook above the limit of "
                      f"{grid.MAX_CELLS} cells.")
        return out

    async def get(self, request: web.Request) -> web.Response:
        book = self.book(request.match_info["spreadsheetId"])
        ranges = request.query.getall("ranges", [])
        grid_data = request.query.get("includeGridData", "false").lower() == "true"
        tree = selection(request)
        if ranges:
            out = self._ranged(book, ranges, grid_data)
        elif grid_data or _asks_for_data(tree):
            out = grid.with_dimensions(book)
        else:
            out = _without_grid(book)
        return answer(fields.select(grid.in_google_order(out), tree))

    def _ranged(self, book: Json, ranges: list[str], grid_data: bool) -> Json:
        sheets: list[Json] = []
        out = {k: sheets if k == "sheets" else v for k, v in book.items()}  # in Google's order: the URL last
        for text in ranges:
            rect = self.rect(book, text)
            sheet = next((s for s in sheets if s["properties"] is rect.sheet["properties"]), None)
            if sheet is None:
                sheet = {k: v for k, v in rect.sheet.items() if k != "data"}
                sheet["data"] = []
                sheets.append(sheet)
            if grid_data:
                rows = grid.row_data(rect.sheet)[rect.row0:rect.row1]
                data: Json = {}
                if rect.row0:
                    data["startRow"] = rect.row0
                if rect.col0:
                    data["startColumn"] = rect.col0
                data["rowData"] = [{"values": (r.get("values") or [])[rect.col0:rect.col1]} if r.get("values") else {}
                                   for r in rows]
                data.update(grid.dimensions(rect.sheet, rect.row0, rect.row1, rect.col0, rect.col1))
                sheet["data"].append(data)
        for s in sheets:
            if not s["data"]:
                del s["data"]
        return out

    async def batch_update(self, request: web.Request) -> web.Response:
        book = self.book(request.match_info["spreadsheetId"], "writer")
        body = await json_body(request, BAD_JSON)
        requests = body.get("requests")
        if not isinstance(requests, list):
            raise bad("Must specify at least one request.")
        work = copy.deepcopy(book)  # all or nothing, as Sheets applies a batch
        replies = BatchUpdate(self.ws, work).run(requests)
        book.clear()
        book.update(work)
        f = self.ws.files[request.match_info["spreadsheetId"]]
        if f.get("name") != book["properties"].get("title"):
            f["name"] = book["properties"]["title"]
        self._touch(request.match_info["spreadsheetId"])
        out: Json = {"spreadsheetId": book["spreadsheetId"], "replies": replies}
        if body.get("includeSpreadsheetInResponse"):
            out["updatedSpreadsheet"] = _without_grid(book)
        return answer(out, request)

    def _touch(self, spreadsheet_id: str) -> None:
        f = self.ws.files.get(spreadsheet_id)
        if f is not None:
            f["modifiedTime"] = f["modifiedByMeTime"] = self.ws.now()

    # ---- values -------------------------------------------------------------------------------------------------
    def value_range(self, book: Json, text: str, request: web.Request) -> Json:
        rect = self.rect(book, text)
        option = _choice(request, "valueRenderOption", RENDER, "FORMATTED_VALUE")
        major = _choice(request, "majorDimension", DIMENSIONS, "ROWS")
        rows = [[cells.render(c, option) for c in line] for line in grid.read(rect)]
        if major == "COLUMNS":
            width = max((len(r) for r in rows), default=0)
            rows = [[r[j] if j < len(r) else "" for r in rows] for j in range(width)]
            for col in rows:
                while col and col[-1] == "":
                    col.pop()
        out: Json = {"range": rect.a1(), "majorDimension": major}
        if rows:
            out["values"] = rows
        return out

    async def values_get(self, request: web.Request) -> web.Response:
        book = self.book(request.match_info["spreadsheetId"])
        return answer(self.value_range(book, request.match_info["range"], request), request)

    async def values_batch_get(self, request: web.Request) -> web.Response:
        book = self.book(request.match_info["spreadsheetId"])
        ranges = request.query.getall("ranges", [])
        return answer({"spreadsheetId": book["spreadsheetId"],
                       "valueRanges": [self.value_range(book, r, request) for r in ranges]}, request)

    def _matrix(self, body: Json, user_entered: bool) -> list[list[Json | None]]:
        values = body.get("values") or []
        if not isinstance(values, list) or not all(isinstance(r, list) for r in values):
            raise bad("Invalid values: a list of lists is expected")
        major = body.get("majorDimension") or "ROWS"
        if major not in DIMENSIONS:
            raise bad(f"Invalid value at 'data.major_dimension' (type.googleapis.com/google.apps.sheets.v4.Dimension), "
                      f"\"{major}\"")
        if major == "COLUMNS":
            height = max((len(c) for c in values), default=0)
            values = [[c[i] if i < len(c) else None for c in values] for i in range(height)]
        out = []
        for row in values:
            line = []
            for v in row:
                if isinstance(v, (dict, list)):
                    raise bad("Invalid values: a cell's value is a string, number or boolean")
                line.append(cells.entered(v, user_entered))
            out.append(line)
        return out

    def _write(self, book: Json, text: str, body: Json, user_entered: bool,
               cells: set[tuple[str, str, int]] | None = None) -> Json:
        """`cells`, where given, gains the rows and columns written, as ("row"|"column", sheet, index)."""
        rect = self.rect(book, text)
        matrix = self._matrix(body, user_entered)
        height, width = len(matrix), max((len(r) for r in matrix), default=0)
        # One cell anchors the data (it may spread from there); a rectangle bounds it.
        bounded = ":" in (a1.split_sheet(text)[1] or "")
        if bounded and height and rect.row0 + height > rect.row1:
            raise bad(f"Requested writing within range [{rect.a1()}], but tried writing to row [{rect.row0 + height}]")
        if bounded and width and rect.col0 + width > rect.col1:
            raise bad(f"Requested writing within range [{rect.a1()}], but tried writing to column "
                      f"[{a1.column_letters(rect.col0 + width - 1)}]")
        try:
            _, _, written = grid.write(book, rect.sheet, rect.row0, rect.col0, matrix)
        except grid.GridError as exc:
            raise bad(str(exc)) from None
        out: Json = {"spreadsheetId": book["spreadsheetId"]}
        if height and width:
            if cells is not None:
                cells.update(("row", rect.title, r) for r in range(rect.row0, rect.row0 + height))
                cells.update(("column", rect.title, c) for c in range(rect.col0, rect.col0 + width))
            out.update({"updatedRange": a1.write(rect.title, rect.row0, rect.row0 + height, rect.col0,
                                                 rect.col0 + width),
                        "updatedRows": height, "updatedColumns": width, "updatedCells": written})
        else:
            out["updatedRange"] = rect.a1()
        return out

    async def values_update(self, request: web.Request) -> web.Response:
        book = self.book(request.match_info["spreadsheetId"], "writer")
        option = _choice(request, "valueInputOption", INPUT, None)
        body = await json_body(request, BAD_JSON)
        out = self._write(book, request.match_info["range"], body, option == "USER_ENTERED")
        self._touch(book["spreadsheetId"])
        return answer(out, request)

    async def values_batch_update(self, request: web.Request) -> web.Response:
        book = self.book(request.match_info["spreadsheetId"], "writer")
        body = await json_body(request, BAD_JSON)
        option = body.get("valueInputOption")
        if option not in INPUT:
            raise bad("'valueInputOption' is required but not specified" if option is None else
                      f"Invalid value at 'value_input_option', \"{option}\"")
        responses, sheets = [], set()
        # Google's totals count the distinct rows and columns written (eight cells down one column: 8 rows, 1 column)
        written: set[tuple[str, str, int]] = set()
        for item in body.get("data") or []:
            if not isinstance(item, dict) or not isinstance(item.get("range"), str):
                raise bad("Invalid data: each item needs a range")
            out = self._write(book, item["range"], item, option == "USER_ENTERED", written)
            responses.append(out)
            if "updatedRange" in out:
                sheets.add(out["updatedRange"].rsplit("!", 1)[0])
        self._touch(book["spreadsheetId"])
        total: Json = {"spreadsheetId": book["spreadsheetId"],
                       "totalUpdatedRows": sum(1 for kind, _, _ in written if kind == "row"),
                       "totalUpdatedColumns": sum(1 for kind, _, _ in written if kind == "column"),
                       "totalUpdatedCells": sum(r.get("updatedCells", 0) for r in responses),
                       "totalUpdatedSheets": len(sheets), "responses": responses}
        return answer(total, request)

    async def values_append(self, request: web.Request) -> web.Response:
        book = self.book(request.match_info["spreadsheetId"], "writer")
        option = _choice(request, "valueInputOption", INPUT, None)
        insert = _choice(request, "insertDataOption", ("OVERWRITE", "INSERT_ROWS"), "OVERWRITE")
        body = await json_body(request, BAD_JSON)
        rect = self.rect(book, request.match_info["range"])
        matrix = self._matrix(body, option == "USER_ENTERED")
        data = grid.row_data(rect.sheet)
        # The table the values go under: the rows with data from the range's first row down, as wide as their data
        # (within the range where it is a rectangle).
        span = rect.col1 if ":" in (a1.split_sheet(request.match_info["range"])[1] or "") else grid.size(rect.sheet)[1]
        last, right = None, rect.col0 + 1
        for r in range(rect.row0, len(data)):
            values = (data[r].get("values") or [])[rect.col0:span]
            filled = [i for i, c in enumerate(values) if "userEnteredValue" in c]
            if filled:
                last, right = r, max(right, rect.col0 + filled[-1] + 1)
        at = rect.row0 if last is None else last + 1
        rows, columns = grid.size(rect.sheet)
        grow = max(0, at + len(matrix) - rows)
        width = max((len(r) for r in matrix), default=0)
        try:
            grid.check_growth(book, grow * columns + max(0, rect.col0 + width - columns) * (rows + grow)
                              + (len(matrix) * columns if insert == "INSERT_ROWS" else 0))
        except grid.GridError as exc:
            raise bad(str(exc)) from None
        if insert == "INSERT_ROWS" and at < len(data):
            data[at:at] = [{} for _ in matrix]
            grow = len(matrix)
        if grow:
            rect.sheet["properties"]["gridProperties"]["rowCount"] = rows + grow
        if rect.col0 + width > columns:
            rect.sheet["properties"]["gridProperties"]["columnCount"] = rect.col0 + width
        try:
            _, _, written = grid.write(book, rect.sheet, at, rect.col0, matrix)
        except grid.GridError as exc:
            raise bad(str(exc)) from None
        self._touch(book["spreadsheetId"])
        out: Json = {"spreadsheetId": book["spreadsheetId"]}
        if last is not None:
            out["tableRange"] = a1.write(rect.title, rect.row0, last + 1, rect.col0, right)
        updates: Json = {"spreadsheetId": book["spreadsheetId"]}
        if matrix and width:
            updates.update({"updatedRange": a1.write(rect.title, at, at + len(matrix), rect.col0, rect.col0 + width),
                            "updatedRows": len(matrix), "updatedColumns": width, "updatedCells": written})
        out["updates"] = updates
        return answer(out, request)

    async def values_clear(self, request: web.Request) -> web.Response:
        book = self.book(request.match_info["spreadsheetId"], "writer")
        rect = self.rect(book, request.match_info["range"])
        grid.clear(rect)
        grid.recalc(book)
        self._touch(book["spreadsheetId"])
        return answer({"spreadsheetId": book["spreadsheetId"], "clearedRange": rect.a1()}, request)

    async def values_batch_clear(self, request: web.Request) -> web.Response:
        book = self.book(request.match_info["spreadsheetId"], "writer")
        body = await json_body(request, BAD_JSON)
        cleared = []
        for text in body.get("ranges") or []:
            rect = self.rect(book, str(text))
            grid.clear(rect)
            cleared.append(rect.a1())
        grid.recalc(book)
        self._touch(book["spreadsheetId"])
        return answer({"spreadsheetId": book["spreadsheetId"], "clearedRanges": cleared}, request)

    async def copy_to(self, request: web.Request) -> web.Response:
        book = self.book(request.match_info["spreadsheetId"])
        body = await json_body(request, BAD_JSON)
        target_id = body.get("destinationSpreadsheetId")
        if not isinstance(target_id, str) or not target_id:
            raise bad("Invalid destinationSpreadsheetId")
        sheet_id = request.match_info["sheetId"]
        sheet = grid.by_id(book, int(sheet_id)) if sheet_id.lstrip("-").isdigit() else None
        if sheet is None:
            raise status_error(404, f"No grid with id: {sheet_id}")
        target = self.book(target_id, "writer")
        new = copy.deepcopy(sheet)
        title = f"Copy of {sheet['properties']['title']}"
        n = 2
        while grid.by_title(target, title) is not None:
            title = f"Copy of {sheet['properties']['title']} {n}"
            n += 1
        new["properties"].update({"title": title, "index": len(target["sheets"]),
                                  "sheetId": int(self.ws.ids.digits(9))})
        target["sheets"].append(new)
        self._touch(target_id)
        return answer(new["properties"], request)

    def routes(self) -> list[web.RouteDef]:
        base = "/v4/spreadsheets"
        one = base + "/{spreadsheetId}"
        return [web.post(base, self.create), web.get(one, self.get), web.post(one + ":batchUpdate", self.batch_update),
                web.get(one + "/values:batchGet", self.values_batch_get),
                web.post(one + "/values:batchUpdate", self.values_batch_update),
                web.post(one + "/values:batchClear", self.values_batch_clear),
                web.get(one + "/values/{range}", self.values_get), web.put(one + "/values/{range}", self.values_update),
                web.post(one + "/values/{range}:append", self.values_append),
                web.post(one + "/values/{range}:clear", self.values_clear),
                web.post(one + "/sheets/{sheetId}:copyTo", self.copy_to)]


def _without_grid(book: Json) -> Json:
    out = {k: v for k, v in book.items() if k != "sheets"}
    out["sheets"] = [{k: v for k, v in s.items() if k != "data"} for s in book.get("sheets", [])]
    return out


def _asks_for_data(tree: fields.Tree | None) -> bool:
    sheets = (tree or {}).get("sheets", {}) if tree else {}
    return isinstance(sheets, dict) and "data" in sheets
