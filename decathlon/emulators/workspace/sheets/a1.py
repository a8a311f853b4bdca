"""A1 notation as Sheets reads it: `Sheet1!A1:B2`, `'My sheet'!A:H`, `A2:C`, `3:5`, a sheet's name alone, and how Sheets
writes a range back (`'工作表1'!A1:H1000`: the sheet name quoted unless it is a plain identifier)."""
from __future__ import annotations

import re
from dataclasses import dataclass

_CELLS = re.compile(r"^(?:(?P<c0>[A-Za-z]{1,3})?(?P<r0>\d{1,7})?)(?::(?:(?P<c1>[A-Za-z]{1,3})?(?P<r1>\d{1,7})?))?$")
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class RangeError(ValueError):
    """`Unable to parse range: X`."""


@dataclass(frozen=True)
class Cells:
    """A rectangle, 0-based, ends exclusive; None where the range leaves that side open (to the grid's edge)."""

    row0: int | None
    row1: int | None
    col0: int | None
    col1: int | None


@dataclass(frozen=True)
class A1:
    sheet: str | None  # the title as written (unquoted); None: the first sheet
    cells: Cells | None  # None: the whole sheet


def column_number(letters: str) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + ord(ch) - 64
    return n - 1


def column_letters(index: int) -> str:
    out = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        out = chr(65 + rem) + out
    return out


def split_sheet(text: str) -> tuple[str | None, str | None]:
    """(sheet title, cells part); a quoted title is unquoted."""
    text = text.strip()
    if text.startswith("'"):
        i, title = 1, list[str]()
        while i < len(text):
            if text[i] == "'":
                if text[i + 1:i + 2] == "'":
                    title.append("'")
                    i += 2
                    continue
                break
            title.append(text[i])
            i += 1
        else:
            raise RangeError(text)
        rest = text[i + 1:]
        if rest == "":
            return "".join(title), None
        if not rest.startswith("!"):
            raise RangeError(text)
        return "".join(title), rest[1:]
    if "!" in text:
        name, _, cells = text.rpartition("!")
        return name, cells
    return None, text


def parse_cells(text: str) -> Cells:
    m = _CELLS.match(text.strip())
    if m is None or not text.strip():
        raise RangeError(text)
    c0, r0, c1, r1 = m.group("c0"), m.group("r0"), m.group("c1"), m.group("r1")
    if c0 is None and r0 is None:
        raise RangeError(text)
    single = ":" not in text
    if single:
        if c0 is None or r0 is None:
            raise RangeError(text)
        c1, r1 = c0, r0
    elif c1 is None and r1 is None:
        raise RangeError(text)
    # `A:B` are whole columns, `2:4` whole rows, `A2:B` from row 2 down, `A1:5` to row 5 across.
    cells = Cells(int(r0) - 1 if r0 else None, int(r1) if r1 else None,
                  column_number(c0) if c0 else None, column_number(c1) + 1 if c1 else None)
    if (r0 is not None and int(r0) < 1) or (r1 is not None and int(r1) < 1):
        raise RangeError(text)
    if c0 is None and r0 is not None and c1 is not None and r1 is None:
        raise RangeError(text)
    return _ordered(cells)


def _ordered(c: Cells) -> Cells:
    r0, r1, c0, c1 = c.row0, c.row1, c.col0, c.col1
    if r0 is not None and r1 is not None and r1 <= r0:
        r0, r1 = r1 - 1, r0 + 1
    if c0 is not None and c1 is not None and c1 <= c0:
        c0, c1 = c1 - 1, c0 + 1
    return Cells(r0, r1, c0, c1)


def parse(text: str, titles: list[str]) -> A1:
    """`text` against a spreadsheet whose sheets have `titles`: a bare word is a sheet's title where one has it."""
    sheet, cells = split_sheet(text)
    if sheet is None:
        bare = (cells or "").strip()
        if bare in titles:
            return A1(bare, None)
        return A1(None, parse_cells(bare))
    return A1(sheet, parse_cells(cells) if cells is not None else None)


def quote_title(title: str) -> str:
    if _PLAIN.match(title) and not re.match(r"^[A-Za-z]{1,3}\d+$", title):
        return title
    return "'" + title.replace("'", "''") + "'"


def write(title: str, row0: int, row1: int, col0: int, col1: int) -> str:
    """`Title!A1:B2` (one cell: `Title!A1`) for the 0-based rectangle, ends exclusive."""
    start = f"{column_letters(col0)}{row0 + 1}"
    end = f"{column_letters(col1 - 1)}{row1}"
    return f"{quote_title(title)}!{start}" + ("" if start == end else f":{end}")
