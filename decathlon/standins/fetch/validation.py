"""The reference's argument check: ``z.object({url: z.string().url(), headers: z.record(z.string()).optional()})``.

It runs before the tool name is even looked at, and a failure is thrown, so the client gets a
JSON-RPC error whose message is zod 3's ``ZodError.message``: the issue list as 2-space
indented JSON, e.g. ``[{"code": "invalid_type", ..., "message": "Required"}]`` for a missing
url or ``{"validation": "url", "code": "invalid_string", "message": "Invalid url", ...}`` for
a string ``new URL`` rejects. Unknown extra keys are dropped, as zod's object parsing does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..memory.stringify import own_keys, stringify
from . import urls
from ..jsvalues import zod_type


class ArgumentError(Exception):
    """Invalid arguments: the message of the ZodError the reference would throw."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Payload:
    url: str
    parsed: urls.ParsedUrl
    headers: dict[str, str] | None


def _zod_type(value: Any) -> str:
    return zod_type(value, nan="nan")


def _type_issue(expected: str, value: Any, path: list[str], *, missing: bool = False) -> dict[str, Any]:
    received = "undefined" if missing else _zod_type(value)
    message = "Required" if missing else f"Expected {expected}, received {received}"
    return {"code": "invalid_type", "expected": expected, "received": received, "path": path, "message": message}


def validate_arguments(arguments: dict[str, Any] | None) -> Payload:
    """The parsed payload, or ArgumentError carrying zod's message."""
    if arguments is None or not isinstance(arguments, dict):
        issue = _type_issue("object", arguments, [], missing=arguments is None)
        raise ArgumentError(stringify([issue], "  "))
    issues: list[dict[str, Any]] = []
    url = arguments.get("url")
    parsed: urls.ParsedUrl | None = None
    if "url" not in arguments:
        issues.append(_type_issue("string", None, ["url"], missing=True))
    elif not isinstance(url, str):
        issues.append(_type_issue("string", url, ["url"]))
    else:
        parsed = urls.parse(url)
        if parsed is None:
            issues.append({"validation": "url", "code": "invalid_string", "message": "Invalid url", "path": ["url"]})
    headers = arguments.get("headers")
    if "headers" in arguments:
        if not isinstance(headers, dict):
            issues.append(_type_issue("object", headers, ["headers"]))
        else:
            for key in own_keys(headers):
                if not isinstance(headers[key], str):
                    issues.append(_type_issue("string", headers[key], ["headers", key]))
    if issues:
        raise ArgumentError(stringify(issues, "  "))
    assert isinstance(url, str) and parsed is not None
    return Payload(url, parsed, headers)
