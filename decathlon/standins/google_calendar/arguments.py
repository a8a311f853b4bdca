"""The reference's `Schema.parse(args)` (zod 3): the issues it throws as a ZodError, whose message (the issue list as
2-space JSON) the result text carries, else the arguments with every key its schema lacks stripped, as zod's objects
strip them before they become the request body."""
from __future__ import annotations

import json
from typing import Any

from ..filesystem.validation import _check_object
from ..jsvalues import MessageError


def _strip(schema: dict[str, Any], value: Any) -> Any:
    if schema.get("type") != "object" or not isinstance(value, dict):
        return value
    properties = schema.get("properties", {})
    # In the schema's order, as zod builds its output.
    return {key: _strip(spec, value[key]) for key, spec in properties.items() if key in value}


def parse(schema: dict[str, Any], arguments: dict[str, Any] | None) -> dict[str, Any]:
    issues: list[dict[str, Any]] = []
    if arguments is None:
        issues.append({"code": "invalid_type", "expected": "object", "received": "undefined", "path": [],
                       "message": "Required"})
    else:
        _check_object(schema, arguments, [], issues)
    if issues:
        raise MessageError(json.dumps(issues, indent=2, ensure_ascii=False))
    assert arguments is not None
    stripped: dict[str, Any] = _strip(schema, arguments)
    return stripped
