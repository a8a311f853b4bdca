"""`decathlon seeds from-runs`: a template's seed built from a recorded run, where the run shows it whole.

A template task's preprocess copies the template into the agent's folder under the template's name
(decathlon.sandbox.vendor_seeds names the template); the run's Sheets server then lists that copy and reads it
(`get_sheet_data`: the spreadsheet as `spreadsheets.get(includeGridData=true)` returns it, one sheet per read). The
copy is the template as it was, until the agent first writes to it. So a seed can be built when the run, before its
first write to the copy, lists the copy (the only spreadsheet of the folder, the task having one template), lists its
sheets, and reads every one of them whole: no range, and not cut by the recorder ("… is too long! Only the first N
characters are shown here"). Anything less is not the template, and is said, per task, with why: most runs read the
large templates only cut, and then no seed comes from them.

Runs are third-party data, read where they lie; the seeds written are the user's, beside their other packs.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from decathlon.emulators.fidelity.recorded import Exchange, exchanges
from decathlon.emulators.kit.state import MANIFEST, Manifest, write_json
from decathlon.emulators.workspace.links import spreadsheet_url
from decathlon.emulators.workspace.store import SPREADSHEET
from decathlon.sandbox.vendor_seeds import Need

PREFIX = "google_sheet-"
CUT = re.compile(r"is too long! Only the first \d+ characters are shown here")
WRITES = {"update_cells", "batch_update_cells", "add_rows", "add_columns", "rename_sheet", "create_sheet",
          "copy_sheet", "share_spreadsheet"}


@dataclass
class Outcome:
    task: str
    template: str
    written: list[Path] = field(default_factory=list)
    why: str = ""  # why no seed, when none was written

    @property
    def built(self) -> bool:
        return bool(self.written)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _items(answer: str) -> list[str]:
    """A tool's list result as the recorder kept it: one text item per element (a JSON array of them), or the one
    element's text alone."""
    doc = _json(answer)
    if isinstance(doc, list) and all(isinstance(d, dict) and d.get("type") == "text" for d in doc):
        return [str(d.get("text", "")) for d in doc]
    return [answer]


def _tool(ex: Exchange) -> str:
    return ex.tool[len(PREFIX):]


def _copy(calls: list[Exchange]) -> tuple[str, str] | str:
    """(id, title) of the copy the first listing shows, or why not."""
    listing = next((c for c in calls if _tool(c) == "list_spreadsheets"), None)
    if listing is None:
        return "the run never lists the folder's spreadsheets, so the copy is not known"
    found = [_json(item) for item in _items(listing.answer)]
    if not all(isinstance(x, dict) and "id" in x for x in found):
        return f"the run's first listing ({listing.name}) is not a list of spreadsheets"
    if len(found) != 1:
        return f"the run's first listing shows {len(found)} spreadsheets, not the one copy"
    return str(found[0]["id"]), str(found[0].get("title", ""))


def _sheet_reads(calls: list[Exchange], copy: str) -> tuple[list[str] | None, dict[str, Any], dict[str, str]]:
    """Before the first write to the copy: its sheet titles (as listed), each sheet read whole, why others are not."""
    titles: list[str] | None = None
    whole: dict[str, Any] = {}
    partial: dict[str, str] = {}
    for c in calls:
        args = c.arguments
        target = args.get("spreadsheet_id") or args.get("spreadsheet") or args.get("src_spreadsheet")
        if target != copy:
            continue
        tool = _tool(c)
        if tool in WRITES:
            break
        if tool == "list_sheets" and titles is None and not c.answer.startswith("Error"):  # a failed call lists nothing
            titles = _items(c.answer)
        elif tool == "get_sheet_data":
            sheet = str(args.get("sheet", ""))
            if args.get("range"):
                partial.setdefault(sheet, f"read only a range ({c.name})")
            elif CUT.search(c.answer):
                partial.setdefault(sheet, f"read only cut by the recorder ({c.name})")
            else:
                doc = _json(c.answer)
                sheets = doc.get("sheets") if isinstance(doc, dict) else None
                if isinstance(sheets, list) and len(sheets) == 1:
                    whole.setdefault(sheet, doc)
                else:
                    partial.setdefault(sheet, f"its read is not one sheet of a spreadsheet ({c.name})")
    return titles, whole, partial


def build(need: Need, run: Path, library: Path) -> Outcome:
    out = Outcome(need.task, need.resource)
    if not run.is_file():
        out.why = f"no recorded run {run}"
        return out
    calls = exchanges(run, PREFIX)
    copy = _copy(calls)
    if isinstance(copy, str):
        out.why = copy
        return out
    copy_id, title = copy
    titles, whole, partial = _sheet_reads(calls, copy_id)
    if titles is None:
        out.why = "the run never lists the copy's sheets before writing to it, so which sheets it has is not known"
        return out
    missing = [t for t in titles if t not in whole]
    if missing:
        out.why = "; ".join(f"sheet {t!r}: {partial.get(t, 'never read before the first write')}" for t in missing)
        return out
    first = whole[titles[0]]
    spreadsheet = {"spreadsheetId": need.resource, "properties": {**first.get("properties", {}), "title": title},
                   "sheets": [whole[t]["sheets"][0] for t in titles],
                   "spreadsheetUrl": spreadsheet_url(need.resource)}
    # As the template was: another account's file, shared with anyone who has the link, which the copy reads.
    drive = {"kind": "drive#file", "id": need.resource, "name": title, "mimeType": SPREADSHEET,
             "owners": [{"kind": "drive#user", "displayName": "the template's owner", "me": False}],
             "permissions": [{"kind": "drive#permission", "type": "anyone", "role": "reader"}]}
    pack = library / need.task / need.emulator
    docs = {"drive": drive, "sheets": spreadsheet}  # by the pack's folder the emulator reads each from
    for rel in need.source.paths(need.resource):
        write_json(pack / rel, docs[rel.split("/")[0]])
        out.written.append(pack / rel)
    if not (pack / MANIFEST).is_file():
        write_json(pack / MANIFEST, Manifest(need.emulator).to_json())
    return out


def from_runs(needs: list[Need], runs: Path, library: Path) -> list[Outcome]:
    """Each need's seed, where its task's run shows the template whole; a task with several templates gets none
    (which copy is which the run does not show)."""
    per_task: dict[str, list[Need]] = {}
    for n in needs:
        per_task.setdefault(n.task, []).append(n)
    outcomes = []
    for task, own in sorted(per_task.items()):
        if len(own) > 1:
            outcomes += [Outcome(task, n.resource, why=f"the task copies {len(own)} templates, and the run does not "
                                 "show which copy is which") for n in own]
            continue
        outcomes.append(build(own[0], runs / f"{task}.json", library))
    return outcomes
