"""The public links of Workspace resources, as Google writes them: for the emulator, and for clients of ours (the
Forms stand-in, seeds from recorded runs) that print them as the vendor's own code would. Standard library only: the
stand-ins' virtualenv imports it."""
from __future__ import annotations

DOCS = "https://docs.google.com"


def spreadsheet_url(spreadsheet_id: str) -> str:
    return f"{DOCS}/spreadsheets/d/{spreadsheet_id}/edit"


def form_view_url(form_id: str) -> str:
    """A form's page by its edit id (the link the Forms MCP server prints)."""
    return f"{DOCS}/forms/d/{form_id}/viewform"


def responder_url(responder_id: str) -> str:
    return f"{DOCS}/forms/d/e/{responder_id}/viewform"
