"""The one signed-in user every request acts as (any non-empty Bearer token is theirs: the emulator cannot check
Google's tokens offline), and the account's settings Google applies to what they create."""
from __future__ import annotations

EMAIL = "decathlon.user@gmail.com"
NAME = "Decathlon User"
PERMISSION_ID = "07364178539275810251"
# The recorded runs' account was set to Chinese (China): a new spreadsheet's first sheet is `工作表1`, and the tasks'
# own instructions name it so (investment-decision-analysis). A spreadsheet created with another locale gets that
# locale's name (sheets/grid.py).
LOCALE = "zh_CN"
TIME_ZONE = "Asia/Shanghai"
# ... but a spreadsheet made through the API got Etc/GMT (the recorded runs' spreadsheets.get of the agent's new books).
SHEETS_TIME_ZONE = "Etc/GMT"


def user() -> dict[str, object]:
    """The user as Drive writes a file's owner."""
    return {"kind": "drive#user", "displayName": NAME, "me": True, "permissionId": PERMISSION_ID,
            "emailAddress": EMAIL}
