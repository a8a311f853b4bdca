"""The reference's five tools: names, descriptions and input schemas as its source writes them (the model reads them)."""
from __future__ import annotations

from typing import Any


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _flag() -> dict[str, Any]:
    return {"type": "boolean", "description": "Whether required (optional, default is false)"}


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


TOOLS: list[dict[str, Any]] = [
    {"name": "create_form", "description": "Create a new Google Form",
     "inputSchema": _schema({"title": _text("Form title"), "description": _text("Form description (optional)")},
                            ["title"])},
    {"name": "add_text_question", "description": "Add a text question to the form",
     "inputSchema": _schema({"formId": _text("Form ID"), "questionTitle": _text("Question title"),
                             "required": _flag()}, ["formId", "questionTitle"])},
    {"name": "add_multiple_choice_question", "description": "Add a multiple choice question to the form",
     "inputSchema": _schema({"formId": _text("Form ID"), "questionTitle": _text("Question title"),
                             "options": {"type": "array", "items": {"type": "string"},
                                         "description": "Array of choices"},
                             "required": _flag()}, ["formId", "questionTitle", "options"])},
    {"name": "get_form", "description": "Get form details",
     "inputSchema": _schema({"formId": _text("Form ID")}, ["formId"])},
    {"name": "get_form_responses", "description": "Get form responses",
     "inputSchema": _schema({"formId": _text("Form ID")}, ["formId"])},
]
