"""The workspace emulator (Drive v3, Sheets v4, Forms v1, Calendar v3) driven by Google's own clients in the SaaS
virtualenv: googleapiclient with its static discovery documents and gspread 6.2.1, both reaching the emulator at the
real host names (a transport that keeps the URL's host in the Host header and sends the bytes to the emulator)."""
from __future__ import annotations

import json
import os
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lines import readline
from tests.saas_venv import REPO, saas_python

from decathlon.emulators.kit import control_client as cc

PRELUDE = '''
import json, os, sys
import httplib2, requests
from urllib.parse import urlsplit, urlunsplit
from google.oauth2.credentials import Credentials
from google_auth_httplib2 import AuthorizedHttp
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError

PORT = int(os.environ["WS_PORT"])

def local(url):
    parts = urlsplit(url)
    return urlunsplit(("http", f"127.0.0.1:{PORT}", parts.path, parts.query, "")), parts.netloc

class Http(httplib2.Http):
    def request(self, uri, method="GET", body=None, headers=None, **kw):
        uri, host = local(uri)
        return super().request(uri, method, body, {**(headers or {}), "host": host}, **kw)

class Adapter(requests.adapters.HTTPAdapter):
    def send(self, request, **kw):
        request.url, host = local(request.url)
        request.headers["Host"] = host
        return super().send(request, **kw)

creds = Credentials(token="any-token")
def api(name, version):
    return build(name, version, http=AuthorizedHttp(creds, http=Http()), static_discovery=True)
drive, sheets, forms, cal = api("drive", "v3"), api("sheets", "v4"), api("forms", "v1"), api("calendar", "v3")

def refusal(call):
    try:
        call.execute()
    except HttpError as exc:
        return [exc.resp.status, json.loads(exc.content)]
    return None

raw = requests.Session()
raw.mount("https://", Adapter())
out = {}
'''


@pytest.fixture(scope="module")
def emulator(tmp_path_factory) -> Iterator[tuple[int, Path]]:
    """The emulator's port and its control socket (whose folder is the state root)."""
    root = tmp_path_factory.mktemp("workspace")
    sock = root / "control" / "workspace.sock"
    proc = subprocess.Popen([str(saas_python()), "-m", "decathlon.emulators.workspace", "--root", str(root),
                             "--control", str(sock)], stdout=subprocess.PIPE, stderr=(root / "log").open("wb"),
                            cwd=root, env={**os.environ, "PYTHONPATH": str(REPO), "DECATHLON_EMULATOR_SEED": "s"})
    line = readline(proc, what="the workspace emulator's ready line").decode().strip()
    assert line.startswith("ready workspace "), (line, (root / "log").read_text()[-2000:])
    yield json.loads(line.split(" ", 2)[2])["http"], sock
    proc.terminate()
    proc.wait(15)


@pytest.fixture(scope="module")
def port(emulator) -> int:
    return emulator[0]


def run(port: int, body: str, tmp_path: Path) -> dict[str, Any]:
    script = tmp_path / "client.py"
    script.write_text(PRELUDE + textwrap.dedent(body) + "\nprint('RESULT ' + json.dumps(out))\n")
    proc = subprocess.run([str(saas_python()), str(script)], capture_output=True, text=True, timeout=120,
                          env={"WS_PORT": str(port), "PATH": "/usr/bin:/bin", "NO_PROXY": "*"})
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, f"client failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return json.loads(lines[-1][len("RESULT "):])


def test_drive_files_query_fields_paging(port, tmp_path):
    got = run(port, '''
        folder = drive.files().create(body={"name": "Work", "mimeType": "application/vnd.google-apps.folder"},
                                      fields="id").execute()["id"]
        ids = []
        for name in ("Stock Alert", "stock notes", "Budget 2025"):
            ids.append(drive.files().create(body={"name": name, "parents": [folder],
                       "mimeType": "application/vnd.google-apps.spreadsheet"}, fields="id").execute()["id"])
        out["folder"] = folder
        out["ids"] = ids
        q = (f"'{folder}' in parents and name contains 'stock' and "
             "mimeType='application/vnd.google-apps.spreadsheet' and trashed=false")
        out["contains"] = sorted(f["name"] for f in drive.files().list(q=q, fields="files(id,name)").execute()["files"])
        out["exact"] = drive.files().list(q="name='Budget 2025'").execute()
        out["or_not"] = sorted(f["name"] for f in drive.files().list(
            q=f"('{folder}' in parents) and (name = 'Budget 2025' or not name contains 'stock')").execute()["files"])
        page1 = drive.files().list(q=f"'{folder}' in parents", pageSize=2, orderBy="name",
                                   fields="nextPageToken,files(name)").execute()
        page2 = drive.files().list(q=f"'{folder}' in parents", pageSize=2, orderBy="name", pageToken=page1["nextPageToken"],
                                   fields="nextPageToken,files(name)").execute()
        out["pages"] = [page1, page2]
        out["bad_q"] = refusal(drive.files().list(q="name = 'x' and"))
        out["get"] = drive.files().get(fileId=ids[0], fields="name,parents,mimeType,webViewLink").execute()
        out["missing"] = refusal(drive.files().get(fileId="1nope"))
        c = drive.files().copy(fileId=ids[0], body={"name": "Copied", "parents": [folder]}).execute()
        out["copy"] = c
        drive.files().update(fileId=c["id"], body={"name": "Renamed"}, addParents="root", removeParents=folder).execute()
        out["moved"] = drive.files().get(fileId=c["id"], fields="name,parents").execute()
        out["root"] = drive.files().get(fileId="root", fields="id").execute()["id"]
        drive.files().update(fileId=ids[2], body={"trashed": True}).execute()
        out["untrashed"] = len(drive.files().list(q=f"'{folder}' in parents and trashed=false").execute()["files"])
        p = drive.permissions().create(fileId=ids[0], body={"type": "anyone", "role": "writer"}).execute()
        out["perm"] = p
        out["perms"] = [x["type"] for x in drive.permissions().list(fileId=ids[0]).execute()["permissions"]]
        drive.permissions().delete(fileId=ids[0], permissionId=p["id"]).execute()
        drive.files().delete(fileId=ids[1]).execute()
        out["deleted"] = refusal(drive.files().get(fileId=ids[1]))
        out["noauth"] = [raw.get("https://www.googleapis.com/drive/v3/files").status_code,
                         raw.get("https://www.googleapis.com/drive/v3/files").json()["error"]["errors"][0]["reason"]]
        out["unimplemented"] = refusal(drive.changes().getStartPageToken())
        r = raw.get("https://www.googleapis.com/drive/v3/nothing", headers={"Authorization": "Bearer t"})
        out["unknown"] = [r.status_code, r.json()["error"]["code"]]
        from googleapiclient.http import MediaInMemoryUpload
        up = drive.files().create(body={"name": "notes.txt", "parents": [folder]}, fields="id,size,mimeType",
                                  media_body=MediaInMemoryUpload(b"hello drive", mimetype="text/plain")).execute()
        out["upload"] = [up["size"], up["mimeType"], drive.files().get_media(fileId=up["id"]).execute().decode()]
    ''', tmp_path)
    assert all(len(i) == 44 and i.startswith("1") for i in got["ids"])
    assert got["contains"] == ["Stock Alert", "stock notes"]
    assert got["exact"]["kind"] == "drive#fileList" and [set(f) for f in got["exact"]["files"]] == [
        {"kind", "id", "name", "mimeType"}]
    assert got["or_not"] == ["Budget 2025"]
    assert [f["name"] for f in got["pages"][0]["files"]] == ["Budget 2025", "Stock Alert"]
    assert [f["name"] for f in got["pages"][1]["files"]] == ["stock notes"] and "nextPageToken" not in got["pages"][1]
    status, body = got["bad_q"]
    assert status == 400 and body["error"]["message"] == "Invalid Value"
    assert body["error"]["errors"][0] == {"message": "Invalid Value", "domain": "global", "reason": "invalid",
                                          "location": "q", "locationType": "parameter"}
    assert got["get"]["parents"] == [got["folder"]] and got["get"]["webViewLink"].startswith(
        "https://docs.google.com/spreadsheets/d/")
    assert got["missing"][0] == 404 and got["missing"][1]["error"]["message"] == "File not found: 1nope."
    assert got["missing"][1]["error"]["errors"][0]["reason"] == "notFound"
    assert got["copy"]["name"] == "Copied" and got["copy"]["mimeType"] == "application/vnd.google-apps.spreadsheet"
    assert got["moved"] == {"name": "Renamed", "parents": [got["root"]]}
    assert got["untrashed"] == 2
    assert got["perm"] == {"kind": "drive#permission", "id": "anyoneWithLink", "type": "anyone", "role": "writer"}
    assert got["perms"] == ["user", "anyone"]
    assert got["deleted"][0] == 404
    assert got["noauth"] == [401, "required"]
    assert got["unimplemented"][0] == 501 and "drive.changes.getStartPageToken" in got["unimplemented"][1]["error"]["message"]
    assert got["unknown"] == [404, 404]
    assert got["upload"] == ["11", "text/plain", "hello drive"]


def test_sheets_values_and_formatting(port, tmp_path):
    got = run(port, '''
        s = sheets.spreadsheets().create(body={"properties": {"title": "Numbers"}}).execute()
        sid = s["spreadsheetId"]
        out["first"] = s["sheets"][0]["properties"]["title"]
        en = sheets.spreadsheets().create(body={"properties": {"title": "E", "locale": "en_US"}}).execute()
        out["first_en"] = en["sheets"][0]["properties"]["title"]
        t = out["first"]
        up = sheets.spreadsheets().values().update(spreadsheetId=sid, range=f"'{t}'!A1", valueInputOption="USER_ENTERED",
            body={"values": [["name", "amount", "share", "day", "ok", "sum"],
                             ["a", "27610090.52367381", "12.5%", "2025-01-15", "true", "=B2+B3"],
                             ["b", 3966712.5731046433, "50%", "1/15/2025", "FALSE", "=SUM(B2:B3)"]]}).execute()
        out["update"] = up
        out["formatted"] = sheets.spreadsheets().values().get(spreadsheetId=sid, range="A:H").execute()
        out["unformatted"] = sheets.spreadsheets().values().get(spreadsheetId=sid, range=f"'{t}'!B2:F3",
            valueRenderOption="UNFORMATTED_VALUE").execute()["values"]
        out["formula"] = sheets.spreadsheets().values().get(spreadsheetId=sid, range="F2:F3",
            valueRenderOption="FORMULA").execute()["values"]
        out["columns"] = sheets.spreadsheets().values().get(spreadsheetId=sid, range="A1:B3",
            majorDimension="COLUMNS").execute()["values"]
        ap = sheets.spreadsheets().values().append(spreadsheetId=sid, range="A1", valueInputOption="RAW",
            body={"values": [["c", "7"]]}).execute()
        out["append"] = ap
        out["raw_text"] = sheets.spreadsheets().values().get(spreadsheetId=sid, range="B4",
            valueRenderOption="UNFORMATTED_VALUE").execute()["values"]
        sheets.spreadsheets().batchUpdate(spreadsheetId=sid, body={"requests": [
            {"addSheet": {"properties": {"title": "2023Final"}}},
            {"updateSheetProperties": {"properties": {"sheetId": 0, "title": "Data"}, "fields": "title"}}]}).execute()
        bu = sheets.spreadsheets().values().batchUpdate(spreadsheetId=sid, body={"valueInputOption": "RAW", "data": [
            {"range": "2023Final!A1", "values": [[1]]}, {"range": "'2023Final'!B2:C2", "values": [[2, 3]]}]}).execute()
        out["batch"] = [r["updatedRange"] for r in bu["responses"]]
        out["batch_totals"] = [bu[k] for k in ("totalUpdatedRows", "totalUpdatedColumns", "totalUpdatedCells")]
        down = sheets.spreadsheets().values().batchUpdate(spreadsheetId=sid, body={"valueInputOption": "RAW", "data": [
            {"range": f"2023Final!D{r}", "values": [[r]]} for r in range(2, 10)]}).execute()
        out["down_totals"] = [down[k] for k in ("totalUpdatedRows", "totalUpdatedColumns", "totalUpdatedCells")]
        out["batchget"] = [v.get("values") for v in sheets.spreadsheets().values().batchGet(
            spreadsheetId=sid, ranges=["Data!A1:A2", "'2023Final'!A1:C2"]).execute()["valueRanges"]]
        sheets.spreadsheets().values().clear(spreadsheetId=sid, range="Data!A4:B4").execute()
        grid = sheets.spreadsheets().get(spreadsheetId=sid, includeGridData=True, ranges=["Data!B2"]).execute()
        out["cell"] = grid["sheets"][0]["data"][0]["rowData"][0]["values"][0]
        out["titles"] = [x["properties"]["title"] for x in sheets.spreadsheets().get(spreadsheetId=sid,
                          fields="sheets.properties.title").execute()["sheets"]]
        out["bad_range"] = refusal(sheets.spreadsheets().values().get(spreadsheetId=sid, range="Nope!A1"))
        out["no_book"] = refusal(sheets.spreadsheets().get(spreadsheetId="1nope"))
        out["too_far"] = refusal(sheets.spreadsheets().values().update(spreadsheetId=sid, range="Data!A1001",
            valueInputOption="RAW", body={"values": [["x"]]}))
        c = sheets.spreadsheets().sheets().copyTo(spreadsheetId=sid, sheetId=0,
            body={"destinationSpreadsheetId": en["spreadsheetId"]}).execute()
        out["copyTo"] = c["title"]
        copied = drive.files().copy(fileId=sid, body={"name": "Numbers copy"}).execute()
        out["copied"] = sheets.spreadsheets().values().get(spreadsheetId=copied["id"], range="Data!A1:B2").execute()["values"]
        out["copied_title"] = sheets.spreadsheets().get(spreadsheetId=copied["id"]).execute()["properties"]["title"]
    ''', tmp_path)
    assert got["first"] == "工作表1" and got["first_en"] == "Sheet1"
    assert got["update"]["updatedRange"] == "'工作表1'!A1:F3" and got["update"]["updatedCells"] == 18
    f = got["formatted"]
    assert f["range"] == "'工作表1'!A1:H1000" and f["majorDimension"] == "ROWS"
    assert f["values"][1] == ["a", "27610090.52", "12.50%", "2025-01-15", "TRUE", "31576803.1"]
    assert f["values"][2] == ["b", "3966712.573", "50%", "1/15/2025", "FALSE", "31576803.1"]
    assert got["unformatted"][0] == [27610090.52367381, 0.125, 45672, True, 27610090.52367381 + 3966712.5731046433]
    assert got["formula"] == [["=B2+B3"], ["=SUM(B2:B3)"]]
    assert got["columns"] == [["name", "a", "b"], ["amount", "27610090.52", "3966712.573"]]
    assert got["append"]["tableRange"] == "'工作表1'!A1:F3"
    assert got["append"]["updates"]["updatedRange"] == "'工作表1'!A4:B4"
    assert got["raw_text"] == [["7"]]
    assert got["batch"] == ["'2023Final'!A1", "'2023Final'!B2:C2"]
    # distinct rows and columns, as Google counts them (update-material-inventory: eight cells down C gave 8 and 1)
    assert got["batch_totals"] == [2, 3, 3] and got["down_totals"] == [8, 1, 8]
    assert got["batchget"] == [[["name"], ["a"]], [["1"], ["", "2", "3"]]]
    assert got["cell"]["formattedValue"] == "27610090.52" and got["cell"]["effectiveFormat"]["horizontalAlignment"] == "RIGHT"
    assert got["titles"] == ["Data", "2023Final"]
    assert got["bad_range"][0] == 400 and got["bad_range"][1]["error"] == {
        "code": 400, "message": "Unable to parse range: Nope!A1", "status": "INVALID_ARGUMENT"}
    assert got["no_book"][0] == 404 and got["no_book"][1]["error"]["status"] == "NOT_FOUND"
    assert got["too_far"][0] == 400 and "exceeds grid limits" in got["too_far"][1]["error"]["message"]
    assert got["copyTo"] == "Copy of Data"
    assert got["copied"] == [["name", "amount"], ["a", "27610090.52"]] and got["copied_title"] == "Numbers copy"


def test_gspread(port, tmp_path):
    got = run(port, '''
        import gspread
        gc = gspread.authorize(creds)
        gc.http_client.session.mount("https://", Adapter())
        sh = gc.create("Made by gspread")
        ws = sh.get_worksheet(0)
        ws.update([["a", "b"], [1, 2.5], ["x", "=A2*2"]], "A1", value_input_option="USER_ENTERED")
        out["values"] = ws.get_all_values()
        out["records"] = ws.get_all_records()
        ws.append_row(["y", 3])
        again = gc.open_by_key(sh.id)
        out["title"] = again.title
        out["rows"] = again.sheet1.get_all_values()
        out["opened"] = gc.open("Made by gspread").id == sh.id
        new = sh.add_worksheet("Second", rows=10, cols=3)
        out["worksheets"] = [w.title for w in sh.worksheets()]
    ''', tmp_path)
    assert got["values"] == [["a", "b"], ["1", "2.5"], ["x", "2"]]
    assert got["records"] == [{"a": 1, "b": 2.5}, {"a": "x", "b": 2}]
    assert got["title"] == "Made by gspread" and got["rows"][-1] == ["y", "3"]
    assert got["opened"] is True
    assert got["worksheets"] == ["工作表1", "Second"]


def test_calendar(port, tmp_path):
    got = run(port, '''
        ev = cal.events().insert(calendarId="primary", body={"summary": "Interview A", "start": {
            "dateTime": "2025-03-10T10:00:00+08:00"}, "end": {"dateTime": "2025-03-10T11:00:00+08:00"}}).execute()
        cal.events().insert(calendarId="primary", body={"summary": "Interview B", "start": {
            "dateTime": "2025-03-09T02:00:00Z", "timeZone": "America/New_York"},
            "end": {"dateTime": "2025-03-09T03:00:00Z", "timeZone": "America/New_York"}}).execute()
        utc = cal.events().insert(calendarId="primary", body={"summary": "Deadline", "start": {
            "dateTime": "2025-09-27T08:59:00Z", "timeZone": "UTC"}, "end": {"dateTime": "2025-09-27T09:29:00Z",
            "timeZone": "UTC"}}).execute()
        out["utc"] = utc["start"]
        cal.events().insert(calendarId="primary", body={"summary": "Holiday", "start": {"date": "2025-04-01"},
            "end": {"date": "2025-04-02"}}).execute()
        listed = cal.events().list(calendarId="primary", timeMin="2025-03-01T00:00:00Z", timeMax="2025-03-31T00:00:00Z",
                                   singleEvents=True, orderBy="startTime").execute()
        out["order"] = [e["summary"] for e in listed["items"]]
        out["starts"] = [e["start"] for e in listed["items"]]
        out["q"] = [e["summary"] for e in cal.events().list(calendarId="primary", q="interview b").execute()["items"]]
        out["patched"] = cal.events().patch(calendarId="primary", eventId=ev["id"],
                                            body={"summary": "Moved"}).execute()["summary"]
        out["get"] = cal.events().get(calendarId="primary", eventId=ev["id"]).execute()["summary"]
        cal.events().delete(calendarId="primary", eventId=ev["id"]).execute()
        out["gone"] = refusal(cal.events().get(calendarId="primary", eventId=ev["id"]))
        out["bad_order"] = refusal(cal.events().list(calendarId="primary", orderBy="startTime"))
        out["max"] = len(cal.events().list(calendarId="primary", maxResults=1).execute()["items"])
    ''', tmp_path)
    assert got["order"] == ["Interview B", "Interview A"]
    assert got["starts"][0] == {"dateTime": "2025-03-08T21:00:00-05:00", "timeZone": "America/New_York"}
    assert got["starts"][1] == {"dateTime": "2025-03-10T10:00:00+08:00"}
    assert got["utc"] == {"dateTime": "2025-09-27T08:59:00Z", "timeZone": "UTC"}
    assert got["q"] == ["Interview B"]
    assert got["patched"] == got["get"] == "Moved"
    assert got["gone"][0] == 404 and got["gone"][1]["error"]["errors"][0]["reason"] == "notFound"
    assert got["bad_order"][0] == 400
    assert got["max"] == 1


def test_forms_and_pages(port, tmp_path):
    got = run(port, '''
        out["create_refused"] = refusal(forms.forms().create(body={"info": {"title": "T"}, "items": []}))
        f = forms.forms().create(body={"info": {"title": "Recall survey"}}).execute()
        fid = f["formId"]
        forms.forms().batchUpdate(formId=fid, body={"requests": [
            {"createItem": {"item": {"title": "Your name", "questionItem": {"question": {"required": True,
                "textQuestion": {}}}}, "location": {"index": 0}}},
            {"createItem": {"item": {"title": "Pick one", "questionItem": {"question": {"choiceQuestion": {
                "type": "RADIO", "options": [{"value": "Yes"}, {"value": "No"}]}}}}, "location": {"index": 1}}},
            {"updateFormInfo": {"info": {"description": "Please answer"}, "updateMask": "description"}}]}).execute()
        got = forms.forms().get(formId=fid).execute()
        out["items"] = [i["title"] for i in got["items"]]
        out["info"] = got["info"]
        out["mime"] = drive.files().get(fileId=fid, fields="mimeType").execute()["mimeType"]
        out["responses"] = forms.forms().responses().list(formId=fid).execute()
        page = raw.get(got["responderUri"])
        out["page"] = [page.status_code, "Google Forms" in page.text, "Recall survey" in page.text, "Pick one" in page.text]
        out["by_id"] = raw.get(f"https://docs.google.com/forms/d/{fid}/viewform").status_code
        out["uri"] = got["responderUri"]
    ''', tmp_path)
    assert got["create_refused"][0] == 400 and got["create_refused"][1]["error"]["message"] == (
        "Only info.title can be set when creating a form. To add items and change settings, use batchUpdate.")
    assert got["items"] == ["Your name", "Pick one"]
    assert got["info"] == {"title": "Recall survey", "documentTitle": "Recall survey", "description": "Please answer"}
    assert got["mime"] == "application/vnd.google-apps.form"
    assert got["responses"] == {}
    assert got["page"] == [200, True, True, True] and got["by_id"] == 200
    assert got["uri"].startswith("https://docs.google.com/forms/d/e/")


def test_a_new_books_defaults_grid_sizes_and_googles_field_order(port, tmp_path):
    """As the recorded runs show Google answering: an API-made book's Sheets defaults (not the account's), a grid read's
    row and column sizes, no empty cells left at a row's end, the URL after the sheets."""
    got = run(port, '''
        book = sheets.spreadsheets().create(body={"properties": {"title": "Sizes"}}).execute()
        sid = book["spreadsheetId"]
        out["props"] = book["properties"]
        sheets.spreadsheets().values().update(spreadsheetId=sid, range="B2:D3", valueInputOption="USER_ENTERED",
                                              body={"values": [["a", "b", "c"], ["d", "e", "f"]]}).execute()
        sheets.spreadsheets().values().clear(spreadsheetId=sid, range="D2:D3").execute()
        out["ranged"] = sheets.spreadsheets().get(spreadsheetId=sid, ranges=["B2:E4"], includeGridData=True).execute()
        whole = sheets.spreadsheets().get(spreadsheetId=sid, includeGridData=True).execute()
        out["whole_sizes"] = [len(whole["sheets"][0]["data"][0]["rowMetadata"]),
                              len(whole["sheets"][0]["data"][0]["columnMetadata"])]
    ''', tmp_path)
    props = got["props"]
    assert props["timeZone"] == "Etc/GMT"
    assert props["defaultFormat"]["textFormat"]["fontFamily"] == "arial,sans,sans-serif"
    assert props["spreadsheetTheme"]["primaryFontFamily"] == "Arial"
    assert [c["colorType"] for c in props["spreadsheetTheme"]["themeColors"]] == [
        "TEXT", "BACKGROUND", "ACCENT1", "ACCENT2", "ACCENT3", "ACCENT4", "ACCENT5", "ACCENT6", "LINK"]
    assert list(got["ranged"]) == ["spreadsheetId", "properties", "sheets", "spreadsheetUrl"]
    data = got["ranged"]["sheets"][0]["data"][0]
    assert list(data) == ["startRow", "startColumn", "rowData", "rowMetadata", "columnMetadata"]
    assert [[c["formattedValue"] for c in r["values"]] for r in data["rowData"]] == [["a", "b"], ["d", "e"]]
    assert data["rowMetadata"] == [{"pixelSize": 21}] * 3 and data["columnMetadata"] == [{"pixelSize": 100}] * 4
    assert got["whole_sizes"] == [1000, 26]


def test_a_forms_items_as_google_writes_them(port, tmp_path):
    got = run(port, '''
        fid = forms.forms().create(body={"info": {"title": "Order"}}).execute()["formId"]
        forms.forms().batchUpdate(formId=fid, body={"requests": [
            {"createItem": {"item": {"title": "Optional", "questionItem": {"question": {"required": False,
                "textQuestion": {}}}}, "location": {"index": 0}}}]}).execute()
        out["item"] = forms.forms().get(formId=fid).execute()["items"][0]
    ''', tmp_path)
    item = got["item"]
    assert list(item) == ["itemId", "title", "questionItem"]
    assert list(item["questionItem"]["question"]) == ["questionId", "textQuestion"]  # no "required": false


def _same_tree(a: Path, b: Path) -> None:
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


READS = '''
        out["files"] = drive.files().list(fields="files(id,name,mimeType,parents,permissions)", orderBy="name").execute()
        out["values"] = [sheets.spreadsheets().values().get(spreadsheetId=f["id"], range="A1:Z50").execute()
                         for f in out["files"]["files"] if f["mimeType"].endswith("spreadsheet")]
        out["events"] = cal.events().list(calendarId="primary").execute()["items"]
'''


def test_snapshot_restore_and_reset(emulator, tmp_path):
    port, sock = emulator
    cc.reset(sock)
    run(port, '''
        s = sheets.spreadsheets().create(body={"properties": {"title": "Kept"}}).execute()
        sheets.spreadsheets().values().update(spreadsheetId=s["spreadsheetId"], range="A1", valueInputOption="USER_ENTERED",
                                              body={"values": [["x", "5%", "=1+1"]]}).execute()
        cal.events().insert(calendarId="primary", body={"summary": "E", "start": {"date": "2025-01-01"},
                                                         "end": {"date": "2025-01-02"}}).execute()
        forms.forms().create(body={"info": {"title": "F"}}).execute()
    ''', tmp_path)
    before = run(port, READS, tmp_path)
    root = sock.parent
    cc.snapshot(sock, "one")
    cc.snapshot(sock, "two")
    _same_tree(root / "one", root / "two")
    run(port, '''
        for f in drive.files().list().execute()["files"]:
            drive.files().delete(fileId=f["id"]).execute()
    ''', tmp_path)
    assert run(port, READS, tmp_path) != before
    cc.restore(sock, "one")
    assert run(port, READS, tmp_path) == before
    cc.snapshot(sock, "three")
    _same_tree(root / "one", root / "three")
    assert sorted(p.name for p in (root / "one").iterdir()) == ["calendar", "drive", "forms", "manifest.json",
                                                                "sheets", "workspace.json"]
    links = json.loads((root / "one" / "workspace.json").read_text())["shortLinks"]
    (code, form_id), = links.items()
    got = run(port, f'''
        r = raw.get("https://forms.gle/{code}", allow_redirects=False)
        out["short"] = [r.status_code, r.headers.get("Location")]
        out["uri"] = forms.forms().get(formId="{form_id}").execute()["responderUri"]
        out["unknown"] = raw.get("https://forms.gle/nothing", allow_redirects=False).status_code
        r = raw.get("https://sheets.googleapis.com/drive/v3/files", headers={{"Authorization": "Bearer t"}})
        out["wrong_host"] = [r.status_code, "That\u2019s an error" in r.text]
    ''', tmp_path)
    assert got["short"] == [302, got["uri"]] and got["unknown"] == 404 and got["wrong_host"] == [404, True]
    cc.reset(sock)
    assert run(port, READS, tmp_path) == {"files": {"files": []}, "values": [], "events": []}


def test_a_seed_in_googles_own_json(emulator, tmp_path):
    """A seed pack as `decathlon seeds capture` writes it from Google: a template owned by someone else, shared with
    anyone who has the link (its spreadsheet as spreadsheets.get?includeGridData=true answers), and a private file
    of theirs. The template can be read and copied, not changed; the private one does not exist for the user."""
    port, sock = emulator
    pack = sock.parent / "seed"
    (pack / "drive").mkdir(parents=True)
    (pack / "sheets").mkdir()
    (pack / "manifest.json").write_text(json.dumps({"emulator": "workspace", "format": 1}))
    template, private = "1" + "T" * 43, "1" + "P" * 43
    other = [{"kind": "drive#user", "displayName": "Author", "emailAddress": "author@example.com", "me": False}]
    (pack / "drive" / f"{template}.json").write_text(json.dumps({
        "kind": "drive#file", "id": template, "name": "Template", "mimeType": "application/vnd.google-apps.spreadsheet",
        "owners": other, "permissions": [{"kind": "drive#permission", "id": "anyoneWithLink", "type": "anyone",
                                          "role": "reader"}]}))
    (pack / "drive" / f"{private}.json").write_text(json.dumps({
        "kind": "drive#file", "id": private, "name": "Private", "mimeType": "application/vnd.google-apps.spreadsheet",
        "owners": other, "permissions": []}))
    cell = {"userEnteredValue": {"numberValue": 1234.5}, "effectiveValue": {"numberValue": 1234.5},
            "formattedValue": "1,234.50", "userEnteredFormat": {"numberFormat": {"type": "NUMBER", "pattern": "#,##0.00"}}}
    (pack / "sheets" / f"{template}.json").write_text(json.dumps({
        "spreadsheetId": template, "properties": {"title": "Template", "locale": "en_US", "timeZone": "Etc/GMT"},
        "sheets": [{"properties": {"sheetId": 0, "title": "stock_sheet", "index": 0, "sheetType": "GRID",
                                   "gridProperties": {"rowCount": 100, "columnCount": 8}},
                    "data": [{"rowData": [{"values": [{"userEnteredValue": {"stringValue": "Qty"},
                                                       "effectiveValue": {"stringValue": "Qty"},
                                                       "formattedValue": "Qty"}]}, {"values": [cell]}],
                              "rowMetadata": [{"pixelSize": 21}], "columnMetadata": [{"pixelSize": 100}]}]}],
        "spreadsheetUrl": f"https://docs.google.com/spreadsheets/d/{template}/edit"}))
    cc.load_seed(sock, "seed")
    got = run(port, f'''
        T, P = "{template}", "{private}"
        out["listed"] = drive.files().list().execute()["files"]
        out["read"] = sheets.spreadsheets().values().get(spreadsheetId=T, range="stock_sheet!A:H").execute()
        out["name"] = drive.files().get(fileId=T, fields="name").execute()["name"]
        out["write"] = refusal(sheets.spreadsheets().values().update(spreadsheetId=T, range="stock_sheet!A1",
                               valueInputOption="RAW", body={{"values": [["x"]]}}))
        out["rename"] = refusal(drive.files().update(fileId=T, body={{"name": "Mine"}}))
        out["private"] = refusal(drive.files().get(fileId=P))
        c = drive.files().copy(fileId=T, body={{"name": "My copy"}}).execute()
        drive.permissions().create(fileId=c["id"], body={{"type": "anyone", "role": "writer"}}).execute()
        out["copy"] = sheets.spreadsheets().values().get(spreadsheetId=c["id"], range="stock_sheet!A:H").execute()
        out["own_write"] = sheets.spreadsheets().values().update(spreadsheetId=c["id"], range="stock_sheet!A3",
                                 valueInputOption="USER_ENTERED", body={{"values": [["7"]]}}).execute()["updatedRange"]
    ''', tmp_path)
    assert got["listed"] == []  # shared by link only: not in the user's listing
    assert got["read"] == {"range": "stock_sheet!A1:H100", "majorDimension": "ROWS", "values": [["Qty"], ["1,234.50"]]}
    assert got["name"] == "Template"
    assert got["write"][0] == 403 and got["write"][1]["error"]["status"] == "PERMISSION_DENIED"
    assert got["rename"][0] == 403 and got["rename"][1]["error"]["errors"][0]["reason"] == "insufficientFilePermissions"
    assert got["rename"][1]["error"]["message"] == f"The user does not have sufficient permissions for file {template}."
    assert got["private"][0] == 404 and got["private"][1]["error"]["message"] == f"File not found: {private}."
    assert got["copy"]["values"] == [["Qty"], ["1,234.50"]]
    assert got["own_write"] == "stock_sheet!A3"
