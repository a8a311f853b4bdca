"""A task that starts from a template in someone else's Drive (our own fixture, fixtures/toolathlon-saas/tasks/
finalpool/sheet-restock-flags, in the checkout's conventions): without a seed pack its setup ends with seed_missing,
naming the template and the capture command, before anything runs; `decathlon seeds capture` writes the pack from a
Workspace emulator standing in for Google (holding a template of our own, owned by another account and shared by its
link); with that pack, the task's real preprocess copies the template and its real evaluator reads the copy."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LAUNCH, REPO
from decathlon.emulators.kit import control_client
from decathlon.emulators.kit.state import write_json
from lines import readline
from saas_venv import saas_python

PACK = REPO / "fixtures" / "toolathlon-saas"
TASK = "sheet-restock-flags"
TEMPLATE = "1DecathlonFixtureRestockTemplate000000000000"
SPREADSHEET = "application/vnd.google-apps.spreadsheet"
ROWS = [["item", "stock", "reorder_level", "action"], ["bolts", 3, 10, ""], ["nuts", 25, 10, ""],
        ["washers", 0, 5, ""], ["screws", 12, 12, ""]]

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the local backend gives an episode its own network "
                                "namespace, which needs root (CI runs as root)")


def _cell(value: object) -> dict:
    if value == "":
        return {}
    kind = "numberValue" if isinstance(value, int) else "stringValue"
    return {"userEnteredValue": {kind: value}, "effectiveValue": {kind: value}, "formattedValue": str(value)}


def _template_pack(folder: Path) -> None:
    """The template as Google keeps it: another account's spreadsheet, shared with anyone who has the link."""
    write_json(folder / "manifest.json", {"emulator": "workspace", "format": 1})
    write_json(folder / "drive" / f"{TEMPLATE}.json", {
        "kind": "drive#file", "id": TEMPLATE, "name": "Restock sheet", "mimeType": SPREADSHEET,
        "owners": [{"kind": "drive#user", "displayName": "Supplier", "emailAddress": "supplier@example.com"}],
        "permissions": [{"kind": "drive#permission", "id": "anyoneWithLink", "type": "anyone", "role": "reader"}]})
    write_json(folder / "sheets" / f"{TEMPLATE}.json", {
        "spreadsheetId": TEMPLATE, "properties": {"title": "Restock sheet", "locale": "en_US"},
        "sheets": [{"properties": {"sheetId": 0, "title": "stock", "index": 0, "sheetType": "GRID",
                                   "gridProperties": {"rowCount": 100, "columnCount": 26}},
                    "data": [{"rowData": [{"values": [_cell(v) for v in row]} for row in ROWS]}]}]})


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("google")
    sock = root / "control.sock"
    proc = subprocess.Popen([str(saas_python()), "-m", "decathlon.emulators.workspace", "--root", str(root),
                             "--control", str(sock)], stdout=subprocess.PIPE, stderr=open(root / "log", "wb"),
                            cwd=root, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        line = readline(proc, what="the workspace emulator's ready line").decode()
        port = json.loads(line.split(" ", 2)[2])["http"]
        _template_pack(root / "seed")
        control_client.load_seed(sock, "seed")
        token = root / "token"
        token.write_text("a-token-of-the-account-that-reads-the-template\n")
        lib = root / "lib"
        out = subprocess.run([sys.executable, "-m", "decathlon", "seeds", "capture", "--source", str(PACK), "--task",
                              TASK, "--out", str(lib), "--token-file", str(token), "--endpoint",
                              f"http://127.0.0.1:{port}"], cwd=REPO, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return lib
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)


def decathlon(*args: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    proc = subprocess.run([sys.executable, "-m", "decathlon", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "DECATHLON_TASK_PYTHON": str(saas_python())})
    return proc, [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]


def test_capture_writes_the_template_as_google_answers_a_reader(library):
    pack = library / TASK / "workspace"
    drive = json.loads((pack / "drive" / f"{TEMPLATE}.json").read_text())
    sheets = json.loads((pack / "sheets" / f"{TEMPLATE}.json").read_text())
    assert drive["id"] == TEMPLATE and drive["name"] == "Restock sheet" and drive["ownedByMe"] is False
    values = [[c.get("formattedValue", "") for c in r.get("values", [])]
              for r in sheets["sheets"][0]["data"][0]["rowData"]]
    assert values[0] == ["item", "stock", "reorder_level", "action"] and values[1][:3] == ["bolts", "3", "10"]
    assert json.loads((pack / "manifest.json").read_text()) == {"emulator": "workspace", "format": 1}
    check = subprocess.run([sys.executable, "-m", "decathlon", "seeds", "check", "--source", str(PACK), "--seeds",
                            str(library), "--json"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert [(r["task"], r["resource"], r["present"]) for r in json.loads(check.stdout)] == [(TASK, TEMPLATE, True)]


@needs_root
def test_without_its_seed_the_task_ends_at_setup_with_seed_missing():
    proc, rows = decathlon("run", TASK, "--source", str(PACK), "--policy", "null", "--json", "--launch-time", LAUNCH)
    (r,) = rows
    assert r["infra_error"] is not None and r["infra_error"]["kind"] == "seed_missing", (r, proc.stderr[-2000:])
    assert TEMPLATE in r["infra_error"]["message"] and "decathlon seeds capture" in r["infra_error"]["message"]


@needs_root
def test_with_the_captured_seed_the_real_preprocess_copies_it_and_the_evaluator_grades_the_copy(library, tmp_path):
    proc, rows = decathlon("run", TASK, "--source", str(PACK), "--policy", "null", "--json", "--launch-time", LAUNCH,
                           "--seeds", str(library), "--out", str(tmp_path / "out"))
    (r,) = rows
    assert r["infra_error"] is None and r["pass"] is False, (r, proc.stderr[-3000:])
    [said] = [p.read_text() for p in (tmp_path / "out").rglob("eval_output.txt")]
    assert "4 items read from the copy" in said and "bolts: expected restock, found nothing" in said, said[-3000:]


@needs_root
def test_the_real_sheets_server_edits_the_copy_and_the_evaluator_passes_it(library, task_api, tmp_path, monkeypatch):
    """mcp-google-sheets (PyPI 0.4.1) against the episode's emulated Drive and Sheets: it lists the task's folder, writes
    the actions into the copy, and the task's real evaluator passes what it wrote; its grid-data answer is Google's."""
    monkeypatch.setenv("DECATHLON_TASK_PYTHON", str(saas_python()))
    task_api.ok("setup", TASK, "--source", str(PACK), "--launch-time", LAUNCH, "--seeds", str(library / TASK),
                timeout=300)
    listed = task_api.ok("execute", "google_sheet-list_spreadsheets", "{}", timeout=120)
    text = json.dumps(listed["content"])
    assert listed["is_error"] is False and "Restock sheet" in text, listed
    copy = json.loads(json.loads(listed["content"])["text"])["id"]  # one spreadsheet: one text item, as recorded
    assert copy != TEMPLATE
    grid = task_api.ok("execute", "google_sheet-get_sheet_data", json.dumps({"spreadsheet_id": copy, "sheet": "stock"}),
                       timeout=120)
    sheet = json.loads(json.loads(grid["content"])["text"])["sheets"][0]
    assert grid["is_error"] is False and sheet["properties"]["title"] == "stock", grid
    assert [c.get("formattedValue") for c in sheet["data"][0]["rowData"][1]["values"][:3]] == ["bolts", "3", "10"]
    wrote = task_api.ok("execute", "google_sheet-update_cells", json.dumps(
        {"spreadsheet_id": copy, "sheet": "stock", "range": "D2:D5", "data": [["restock"], [""], ["restock"], [""]]}),
        timeout=120)
    assert wrote["is_error"] is False, wrote
    messages = tmp_path / "messages.json"
    messages.write_text(json.dumps([{"role": "user", "content": "x"}]))
    result = task_api.ok("evaluate", "--messages", str(messages), timeout=300)
    assert result["pass"] is True, result
