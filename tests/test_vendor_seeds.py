"""What tasks start from that lived in a vendor account (decathlon/sandbox/vendor_seeds.py): found in the task's own
preprocess by each vendor's SeedSource, checked against a library of seed packs (missing → seed_missing, naming it and
the capture command), and captured read-only (decathlon/checkout/seed_capture.py). A checkout of our own, written here
in Toolathlon's conventions (tasks/finalpool/<task>/preprocess/main.py); the vendor is a descriptor of our own."""
from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx

from decathlon.checkout import seed_capture
from decathlon.emulators.vendor import SeedSource, Vendor
from decathlon.errors import InfraError, Kind
from decathlon.sandbox import vendor_seeds

SOURCE = SeedSource("sheet", r"https://sheets\.example\.test/d/([A-Za-z0-9_-]{20,})",
                    (("files/{id}.json", "https://files.example.test/v1/files/{id}?fields=*"),
                     ("grids/{id}.json", "https://grid.example.test/v2/sheets/{id}?grid=true")))
VENDOR = Vendor(name="exampleco", title="an example", reach="front", protocol="REST", seeds=(SOURCE,))
ID_A, ID_B = "a" * 12 + "Bc_-12345678", "Z9" * 14


def _checkout(root: Path) -> Path:
    pre = root / "tasks" / "finalpool" / "copies-two" / "preprocess"
    pre.mkdir(parents=True)
    (pre / "main.py").write_text(f'URLS = ["https://sheets.example.test/d/{ID_A}/edit",\n'
                                 f'        "https://sheets.example.test/d/{ID_B}"]\n'
                                 f'AGAIN = "https://sheets.example.test/d/{ID_A}"\n'
                                 'SHORT = "https://sheets.example.test/d/tooshort"\n')
    ev = root / "tasks" / "finalpool" / "copies-two" / "evaluation"
    ev.mkdir(parents=True)  # the evaluator names one too: it reads the agent's copy, not a template
    (ev / "main.py").write_text('X = "https://sheets.example.test/d/' + "e" * 30 + '"\n')
    (root / "tasks" / "finalpool" / "plain" / "preprocess").mkdir(parents=True)
    return root


def test_needs_are_what_the_preprocess_names_once_each_where_first_named(tmp_path):
    root = _checkout(tmp_path)
    found = vendor_seeds.needs(root, "copies-two", (VENDOR,))
    assert [(n.resource, n.file, n.line) for n in found] == [
        (ID_A, "tasks/finalpool/copies-two/preprocess/main.py", 1),
        (ID_B, "tasks/finalpool/copies-two/preprocess/main.py", 2)]
    assert found[0].paths() == (f"exampleco/files/{ID_A}.json", f"exampleco/grids/{ID_A}.json")
    assert vendor_seeds.needs(root, "plain", (VENDOR,)) == []
    assert vendor_seeds.needs(root, "no-such-task", (VENDOR,)) == []


def test_a_missing_seed_is_seed_missing_naming_the_resource_and_the_capture_command(tmp_path):
    root = _checkout(tmp_path / "src")
    wanted = vendor_seeds.needs(root, "copies-two", (VENDOR,))
    with pytest.raises(InfraError) as caught:
        vendor_seeds.require("copies-two", None, wanted)
    assert caught.value.kind is Kind.SEED_MISSING
    assert ID_A in str(caught.value) and ID_B in str(caught.value) and "decathlon seeds capture" in str(caught.value)
    pack = tmp_path / "lib" / "copies-two"
    for path in wanted[0].paths() + wanted[1].paths()[:1]:
        (pack / path).parent.mkdir(parents=True, exist_ok=True)
        (pack / path).write_text("{}")
    with pytest.raises(InfraError) as caught:
        vendor_seeds.require("copies-two", pack, wanted)
    assert f"the sheet {ID_B}" in str(caught.value) and f"the sheet {ID_A}" not in str(caught.value)
    assert f"lacks exampleco/grids/{ID_B}.json" in str(caught.value)
    assert [f.present for f in vendor_seeds.check(pack, wanted)] == [True, False]
    (pack / wanted[1].paths()[1]).write_text("{}")
    vendor_seeds.require("copies-two", pack, wanted)  # complete: no error


@respx.mock
def test_capture_writes_each_answer_as_it_came_with_the_manifest(tmp_path):
    root = _checkout(tmp_path / "src")
    wanted = vendor_seeds.needs(root, "copies-two", (VENDOR,))[:1]
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=json.dumps({"host": request.headers["host"], "path": request.url.path}))

    respx.get(url__startswith="http://127.0.0.1:9/").mock(side_effect=answer)
    lines: list[str] = []
    written = seed_capture.capture(wanted, tmp_path / "lib", "tok-1", endpoint="http://127.0.0.1:9",
                                   progress=lines.append)
    assert [w.path.relative_to(tmp_path / "lib").as_posix() for w in written] == [
        f"copies-two/exampleco/files/{ID_A}.json", f"copies-two/exampleco/grids/{ID_A}.json"]
    assert [r.headers["host"] for r in seen] == ["files.example.test", "grid.example.test"]
    assert {r.headers["authorization"] for r in seen} == {"Bearer tok-1"} and {r.method for r in seen} == {"GET"}
    assert seen[1].url.query == b"grid=true"
    assert json.loads(written[1].path.read_text()) == {"host": "grid.example.test", "path": f"/v2/sheets/{ID_A}"}
    manifest = json.loads((tmp_path / "lib" / "copies-two" / "exampleco" / "manifest.json").read_text())
    assert manifest == {"emulator": "exampleco", "format": 1} and len(lines) == 2
    assert "tok-1" not in "".join(p.read_text() for p in (tmp_path / "lib").rglob("*.json"))


@respx.mock
def test_capture_names_the_resource_when_the_vendor_refuses(tmp_path):
    root = _checkout(tmp_path / "src")
    wanted = vendor_seeds.needs(root, "copies-two", (VENDOR,))[:1]
    respx.get(url__startswith="https://files.example.test/").mock(
        return_value=httpx.Response(404, json={"error": {"code": 404, "message": f"File not found: {ID_A}."}}))
    with pytest.raises(InfraError) as caught:
        seed_capture.capture(wanted, tmp_path / "lib", "tok")
    assert caught.value.kind is Kind.SEED_FAILED and "404" in str(caught.value) and f"File not found: {ID_A}" in str(caught.value)
    assert not list((tmp_path / "lib").rglob("*.json"))


def _run(path: Path, calls: list[tuple[str, dict, object]]) -> Path:
    """A recorded run in Toolathlon's trajectory format: each call's answer a JSON text item, as the servers give."""
    messages: list[dict] = [{"role": "user", "content": "do it"}]
    for i, (tool, args, answer) in enumerate(calls):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": f"google_sheet-{tool}", "arguments": json.dumps(args)}}]})
        if isinstance(answer, list):  # a list result: one text item per element, as FastMCP gave it
            items = [{"type": "text", "text": x if isinstance(x, str) else json.dumps(x)} for x in answer]
            content = json.dumps(items) if len(items) > 1 else json.dumps(items[0])
        else:
            content = json.dumps({"type": "text", "text": answer if isinstance(answer, str) else json.dumps(answer)})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": content})
    path.write_text(json.dumps({"pass": False, "messages": messages}))
    return path


def _grid(title: str, values: list[str]) -> dict:
    return {"spreadsheetId": "COPY", "properties": {"title": "Stock", "locale": "en_US"},
            "sheets": [{"properties": {"sheetId": len(title), "title": title},
                        "data": [{"rowData": [{"values": [{"formattedValue": v}]} for v in values]}]}]}


def test_from_runs_builds_a_seed_only_where_the_run_shows_the_template_whole(tmp_path):
    from decathlon.recordings import seeds_from_runs

    source = SeedSource("sheet", r"https://sheets\.example\.test/d/([A-Za-z0-9_-]{20,})",
                        (("drive/{id}.json", "https://files.example.test/{id}"),
                         ("sheets/{id}.json", "https://grid.example.test/{id}")))
    need = vendor_seeds.Need("one-template", "exampleco", source, ID_A, "tasks/finalpool/x/preprocess/main.py", 1)
    runs = tmp_path / "runs"
    runs.mkdir()
    listing = ("list_spreadsheets", {}, [{"id": "COPY", "title": "Stock"}])
    sheets = ("list_sheets", {"spreadsheet_id": "COPY"}, ["A", "B"])
    read_a = ("get_sheet_data", {"spreadsheet_id": "COPY", "sheet": "A"}, _grid("A", ["1", "2"]))
    cut_b = ("get_sheet_data", {"spreadsheet_id": "COPY", "sheet": "B"},
             json.dumps(_grid("B", ["x"]))[:40] + "... is too long! Only the first 100000 characters are shown here")
    read_b = ("get_sheet_data", {"spreadsheet_id": "COPY", "sheet": "B"}, _grid("B", ["3"]))
    write_b = ("update_cells", {"spreadsheet_id": "COPY", "sheet": "B", "range": "A1", "data": [["w"]]}, {"ok": 1})

    _run(runs / "one-template.json", [listing, sheets, read_a, cut_b])
    got = seeds_from_runs.from_runs([need], runs, tmp_path / "lib")
    assert not got[0].built and "sheet 'B': read only cut by the recorder" in got[0].why

    _run(runs / "one-template.json", [listing, sheets, read_a, write_b, read_b])
    got = seeds_from_runs.from_runs([need], runs, tmp_path / "lib")
    assert not got[0].built and "sheet 'B': never read before the first write" in got[0].why

    _run(runs / "one-template.json", [listing, read_a, sheets, cut_b, read_b, write_b])
    got = seeds_from_runs.from_runs([need], runs, tmp_path / "lib")
    assert got[0].built, got[0].why
    pack = tmp_path / "lib" / "one-template" / "exampleco"
    spreadsheet = json.loads((pack / "sheets" / f"{ID_A}.json").read_text())
    assert spreadsheet["spreadsheetId"] == ID_A and [s["properties"]["title"] for s in spreadsheet["sheets"]] == ["A", "B"]
    assert spreadsheet["sheets"][1]["data"][0]["rowData"][0]["values"][0]["formattedValue"] == "3"
    assert json.loads((pack / "drive" / f"{ID_A}.json").read_text())["name"] == "Stock"
    assert json.loads((pack / "manifest.json").read_text())["emulator"] == "exampleco"

    two = [need, vendor_seeds.Need("one-template", "exampleco", source, ID_B, need.file, 2)]
    assert all("2 templates" in o.why for o in seeds_from_runs.from_runs(two, runs, tmp_path / "lib2"))
    assert "no recorded run" in seeds_from_runs.from_runs([need], tmp_path / "none", tmp_path / "lib3")[0].why
