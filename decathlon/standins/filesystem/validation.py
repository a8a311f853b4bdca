"""Argument checking against the tools' JSON schemas, reported like zod v3.

The reference validates with zod and reports
``Invalid arguments for <tool>: <ZodError>``, where the ZodError text is the
issue list as 2-space-indented JSON. Unknown extra keys are ignored, as zod's
default object parsing strips them.
"""

from __future__ import annotations

import json
from typing import Any

from ..jsvalues import zod_type
from .errors import ToolError

Issue = dict[str, Any]
PathParts = list[str | int]


_type_name = zod_type


def _type_issue(expected: str, received: str, path: PathParts) -> Issue:
    message = "Required" if received == "undefined" else f"Expected {expected}, received {received}"
    return {"code": "invalid_type", "expected": expected, "received": received, "path": path, "message": message}


def _check(schema: dict[str, Any], value: Any, path: PathParts, issues: list[Issue]) -> None:
    enum = schema.get("enum")
    if enum is not None:
        expected = " | ".join(f"'{option}'" for option in enum)
        if not isinstance(value, str):
            issues.append(_type_issue(expected, _type_name(value), path))
        elif value not in enum:
            issues.append(
                {
                    "received": value,
                    "code": "invalid_enum_value",
                    "options": list(enum),
                    "path": path,
                    "message": f"Invalid enum value. Expected {expected}, received '{value}'",
                }
            )
        return
    expected = schema["type"]
    received = _type_name(value)
    if received != expected:
        issues.append(_type_issue(expected, received, path))
        return
    if expected == "array":
        for index, item in enumerate(value):
            _check(schema["items"], item, [*path, index], issues)
    elif expected == "object":
        _check_object(schema, value, path, issues)


def _check_object(schema: dict[str, Any], value: dict[str, Any], path: PathParts, issues: list[Issue]) -> None:
    required = set(schema.get("required", ()))
    for key, property_schema in schema.get("properties", {}).items():
        if key not in value:
            if key in required:
                issues.append(_type_issue(property_schema.get("type", "string"), "undefined", [*path, key]))
            continue
        _check(property_schema, value[key], [*path, key], issues)


def validate_arguments(tool_name: str, schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    issues: list[Issue] = []
    _check_object(schema, arguments, [], issues)
    if issues:
        raise ToolError(f"Invalid arguments for {tool_name}: {json.dumps(issues, indent=2, ensure_ascii=False)}")
