"""The workspace emulator's Sheets formatting against what Google showed in the recorded runs (read where they lie,
tests/recorded_runs.py; nothing of them is kept here): every cell a run printed with both its effective number and its
formatted text, where no number format was set (Sheets' automatic format), must render the same; every range Sheets
wrote back (`updatedRange`) must name its sheet quoted or not as Sheets did."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator

from recorded_runs import TRAJECTORIES, require_runs

from decathlon.emulators.workspace.sheets import a1, cells

# A printed cell: its effective value, then its formatted text, then (maybe) the format the user gave it.
_CELL = re.compile(r'"effectiveValue":\s*\{\s*"numberValue":\s*([-0-9.eE+]+)\s*\}\s*,\s*"formattedValue":\s*'
                   r'"((?:[^"\\]|\\.)*)"\s*(,\s*"userEnteredFormat":\s*\{[^{}]*"numberFormat")?')
_UPDATED = re.compile(r'"updatedRange":\s*"((?:[^"\\]|\\.)*)"')


def _texts() -> Iterator[tuple[str, str]]:
    for path in sorted(TRAJECTORIES.glob("*.json")):
        run = json.loads(path.read_text(encoding="utf-8"))
        for message in run.get("messages", []):
            if message.get("role") != "tool":
                continue
            content = message.get("content") or ""
            try:
                doc = json.loads(content)
                text = doc.get("text", content) if isinstance(doc, dict) else content
            except ValueError:
                text = content
            yield path.stem, text


def test_automatic_number_format_matches_the_runs() -> None:
    require_runs()
    pairs = [(task, float(number), json.loads(f'"{shown}"')) for task, text in _texts()
             for number, shown, formatted in _CELL.findall(text) if not formatted]
    assert len(pairs) >= 50, f"expected the Sheets answers of the recorded runs, found {len(pairs)} cells"
    wrong = [(task, number, shown, cells.general(number)) for task, number, shown in pairs
             if cells.general(number) != shown]
    assert not wrong, wrong[:20]


def test_range_titles_are_quoted_as_sheets_writes_them() -> None:
    require_runs()
    ranges = sorted({json.loads(f'"{r}"') for _, text in _texts() for r in _UPDATED.findall(text)})
    assert len(ranges) >= 10, f"expected the updatedRange answers of the recorded runs, found {len(ranges)}"
    for written in ranges:
        title, cells_part = a1.split_sheet(written)
        assert title is not None and cells_part
        assert a1.quote_title(title) + "!" + cells_part == written
