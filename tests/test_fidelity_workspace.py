"""The Google Workspace emulator against Google's own recorded answers (decathlon.emulators.fidelity.workspace): every
recorded run's google_sheet-, google_calendar- and google_forms- calls replayed in order through the real Sheets server
and our Calendar and Forms stand-ins on a fresh emulator seeded with what the run showed, each answer compared with the
recorded one. The runs are read where they lie, never copied. The judging rules are also checked on answers of our
own making (so they hold without the recorded runs)."""
from __future__ import annotations

import json

import pytest

from fidelity_gaps import assert_only_known_gaps, replayed

from decathlon.emulators.fidelity import known_gaps, workspace
from decathlon.emulators.fidelity.recorded import Exchange
from decathlon.emulators.fidelity.workspace_seed import books, rebuild, texts

# What the replay measured (see the report in the module's commit): no fewer calls may agree.
AGREED_AT_LEAST = 67


@pytest.fixture(scope="module")
def cases() -> list[workspace.Case]:
    return replayed("workspace", workspace.replay)


def test_the_servers_calls_agree_with_googles_answers(cases: list[workspace.Case]) -> None:
    agreed = [c for c in cases if c.verdict == "agreed"]
    assert len(agreed) >= AGREED_AT_LEAST, [c.exchange.name for c in agreed]
    tools = {c.exchange.tool for c in agreed}
    assert {"google_sheet-list_spreadsheets", "google_sheet-list_sheets", "google_sheet-update_cells",
            "google_sheet-create_spreadsheet", "google_calendar-create_event", "google_forms-create_form",
            "google_forms-add_text_question"} <= tools, tools


def test_no_replayed_call_disagrees_but_the_known_gaps(cases: list[workspace.Case]) -> None:
    assert_only_known_gaps(cases, known_gaps.WORKSPACE)


# ---- the rules, on answers of our own making -------------------------------------------------------------------

S = "google_sheet-"
BOOK = "1" + "b" * 43


def _grid(sheet: str) -> str:
    return json.dumps({"spreadsheetId": BOOK, "properties": {"title": "Book"}, "sheets": [
        {"properties": {"sheetId": 7, "title": sheet, "index": 0}, "data": [{"rowData": []}]}]}, indent=2)


def test_the_seed_holds_the_listed_spreadsheet_its_sheets_and_only_grids_shown_from_a1() -> None:
    calls = [Exchange("t", 0, S + "list_spreadsheets", {}, json.dumps({"id": BOOK, "title": "Book"})),
             Exchange("t", 1, S + "list_sheets", {"spreadsheet_id": BOOK},
                      json.dumps([{"type": "text", "text": t, "annotations": None} for t in ("a", "b")])),
             Exchange("t", 2, S + "get_sheet_data", {"spreadsheet_id": BOOK, "sheet": "a", "range": "A1:C3"}, _grid("a")),
             Exchange("t", 3, S + "get_sheet_data", {"spreadsheet_id": BOOK, "sheet": "b", "range": "B2:C3"}, _grid("b"))]
    seen = rebuild(calls)
    assert seen.sheet_titles[BOOK] == ["a", "b"] and set(seen.shown) == {(BOOK, "a")}
    book = books(seen)[BOOK]
    assert [s["properties"]["title"] for s in book["sheets"]] == ["a", "b"]
    assert book["sheets"][0]["properties"]["sheetId"] == 7 and book["sheets"][1]["properties"]["sheetId"] != 7
    judge = workspace.Judge(seen)
    assert judge(calls[2], calls[2].answer).verdict == "agreed"
    wider = Exchange("t", 4, S + "get_sheet_data", {"spreadsheet_id": BOOK, "sheet": "a", "range": "A1:D3"}, "{}")
    assert judge(wider, "{}").verdict == "cannot-rebuild"
    assert judge(calls[3], calls[3].answer).verdict == "cannot-rebuild"


def test_a_drawn_id_is_learned_from_the_creation_and_anything_else_that_differs_disagrees() -> None:
    judge = workspace.Judge(rebuild([]))
    made = Exchange("t", 0, S + "create_spreadsheet", {"title": "X"}, json.dumps({"spreadsheetId": "1rec", "title": "X"}))
    assert judge(made, json.dumps({"spreadsheetId": "1emu", "title": "X"})).verdict == "agreed"
    wrote = Exchange("t", 1, S + "update_cells", {"spreadsheet_id": "1rec"},
                     json.dumps({"spreadsheetId": "1rec", "updatedCells": 4}))
    assert judge(wrote, json.dumps({"spreadsheetId": "1emu", "updatedCells": 4})).verdict == "agreed"
    case = judge(wrote, json.dumps({"spreadsheetId": "1emu", "updatedCells": "4"}))
    assert case.verdict == "disagreed" and "updatedCells" in case.diff()
    assert judge(wrote, json.dumps({"updatedCells": 4, "spreadsheetId": "1emu"})).verdict == "disagreed"  # key order


def test_a_client_failure_or_a_cut_answer_cannot_be_rebuilt_and_errors_compare_by_text() -> None:
    judge = workspace.Judge(rebuild([]))
    timeout = ("Error running tool google_sheet-list_sheets: Error invoking MCP tool list_sheets: Timed out while "
               "waiting for response to ClientRequest. Waited 60.0 seconds.")
    assert judge(Exchange("t", 0, S + "list_sheets", {}, timeout), "").verdict == "cannot-rebuild"
    long = '{"type":"text","text":"{' + "x" * 50 + ' saved to the file /w/.overlong_tool_outputs/a.json.)'
    assert judge(Exchange("t", 1, S + "list_sheets", {}, long), "[]").verdict == "cannot-rebuild"
    error = Exchange("t", 2, "google_forms-create_form", {}, "Error: MCP error -32603: Failed to create form: no")
    assert judge(error, error.answer).verdict == "agreed"
    assert judge(error, "Error: MCP error -32603: Failed to create form: other").verdict == "disagreed"


def test_several_text_items_read_as_the_recorded_list_and_masked_zones_unmasked() -> None:
    assert texts('[{"type": "text", "text": "a", "annotations": null}]') == ["a"]
    assert texts("plain") == ["plain"]
    args = workspace.unmasked({"start": {"dateTime": "x", "timeZone": "As**********ng"}})
    zone = args["start"]["timeZone"]
    assert len(zone) == 14 and zone.startswith("As") and zone.endswith("ng") and "*" not in zone
