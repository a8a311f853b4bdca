"""The workspace emulator's whole state: one Drive store whose files are folders, spreadsheets, forms and documents;
the spreadsheets' content as Sheets' own JSON (`spreadsheets.get?includeGridData=true`), the forms as `forms.get`
returns them with their responses, the calendars' events as `events.get` returns them. Ids are Google's: 44
characters of its alphabet starting with `1`, drawn from the episode's seed (decathlon.emulators.kit.ids)."""
from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Any

from decathlon.emulators.kit.clock import Clock, rfc3339, system_clock
from decathlon.emulators.kit.ids import Ids

ID_ALPHABET = string.ascii_letters + string.digits + "-_"
FOLDER = "application/vnd.google-apps.folder"
SPREADSHEET = "application/vnd.google-apps.spreadsheet"
FORM = "application/vnd.google-apps.form"
DOCUMENT = "application/vnd.google-apps.document"

Json = dict[str, Any]


@dataclass
class Workspace:
    clock: Clock = system_clock
    ids: Ids = field(default_factory=Ids)
    root_id: str = ""
    files: dict[str, Json] = field(default_factory=dict)  # Drive metadata, with "permissions"
    sheets: dict[str, Json] = field(default_factory=dict)
    forms: dict[str, Json] = field(default_factory=dict)
    responses: dict[str, list[Json]] = field(default_factory=dict)  # by form id
    events: dict[str, dict[str, Json]] = field(default_factory=dict)  # calendar id -> event id -> event
    short_links: dict[str, str] = field(default_factory=dict)  # forms.gle code -> form id

    def __post_init__(self) -> None:
        if not self.root_id:
            self.root_id = "0A" + self.ids.alnum(17, string.ascii_letters + string.digits) + "PVA"

    def clear(self) -> None:
        self.files.clear()
        self.sheets.clear()
        self.forms.clear()
        self.responses.clear()
        self.events.clear()
        self.short_links.clear()

    def now(self) -> str:
        return rfc3339(self.clock())[:-4] + "Z"  # Google writes milliseconds: 2025-10-17T23:00:28.123Z

    def file_id(self) -> str:
        while True:
            candidate = "1" + self.ids.alnum(43, ID_ALPHABET)
            if candidate not in self.files:
                return candidate

    def short_id(self, n: int) -> str:
        return self.ids.alnum(n, string.ascii_letters + string.digits)
