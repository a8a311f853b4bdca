"""Tool names, descriptions and JSON input schemas.

Argument names and property order follow the reference server (property
order matters: it is the order validation issues are reported in).
"""

from __future__ import annotations

from typing import Any

_STRING: dict[str, Any] = {"type": "string"}


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_PATH_ONLY = _object({"path": _STRING}, ["path"])

TOOL_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "read_file": (
        (
            "Return the text of one file, decoded as UTF-8. Pass 'head' to get only the first N lines or "
            "'tail' to get only the last N lines (not both). Only paths inside the allowed directories work."
        ),
        _object(
            {
                "path": _STRING,
                "tail": {"type": "number", "description": "Return only this many lines from the end of the file"},
                "head": {"type": "number", "description": "Return only this many lines from the start of the file"},
            },
            ["path"],
        ),
    ),
    "read_multiple_files": (
        (
            "Read several files in one call. Each file's content is returned under its path, separated by '---'. "
            "A file that cannot be read gets an error line instead and does not stop the others."
        ),
        _object({"paths": {"type": "array", "items": _STRING}}, ["paths"]),
    ),
    "write_file": (
        (
            "Create a file with the given content, or replace an existing file's content entirely. "
            "The parent directory must already exist. Only paths inside the allowed directories work."
        ),
        _object({"path": _STRING, "content": _STRING}, ["path", "content"]),
    ),
    "edit_file": (
        (
            "Change parts of a text file. Each edit replaces the first occurrence of oldText with newText; "
            "when there is no exact occurrence, lines are matched ignoring leading/trailing whitespace. "
            "Returns a unified diff of the change. With dryRun the diff is returned and the file is left untouched."
        ),
        _object(
            {
                "path": _STRING,
                "edits": {
                    "type": "array",
                    "items": _object(
                        {
                            "oldText": {"type": "string", "description": "Text to look for (must match exactly)"},
                            "newText": {"type": "string", "description": "Text to put in its place"},
                        },
                        ["oldText", "newText"],
                    ),
                },
                "dryRun": {"type": "boolean", "default": False, "description": "Only show the diff, do not write"},
            },
            ["path", "edits"],
        ),
    ),
    "create_directory": (
        (
            "Create a directory. Succeeds silently if it already exists. Its parent directory must exist. "
            "Only paths inside the allowed directories work."
        ),
        _PATH_ONLY,
    ),
    "list_directory": (
        "List the entries directly inside a directory, one per line, each marked [FILE] or [DIR].",
        _PATH_ONLY,
    ),
    "list_directory_with_sizes": (
        (
            "List the entries directly inside a directory with [FILE]/[DIR] markers and file sizes, "
            "followed by file/directory counts and the combined size. Sort by name (default) or size."
        ),
        _object(
            {
                "path": _STRING,
                "sortBy": {
                    "type": "string",
                    "enum": ["name", "size"],
                    "default": "name",
                    "description": "Order entries by name or by size (largest first)",
                },
            },
            ["path"],
        ),
    ),
    "directory_tree": (
        (
            "Return the whole tree below a directory as indented JSON: each entry has 'name' and 'type' "
            "('file' or 'directory'), and directories have a 'children' array."
        ),
        _PATH_ONLY,
    ),
    "move_file": (
        "Move or rename a file or directory. Both source and destination must be inside the allowed directories.",
        _object({"source": _STRING, "destination": _STRING}, ["source", "destination"]),
    ),
    "search_files": (
        (
            "Walk a directory recursively and return the full paths of all files and directories whose name "
            "contains the pattern (case-insensitive), one per line. Entries matching any excludePatterns glob "
            "(relative to the search directory) are skipped."
        ),
        _object(
            {
                "path": _STRING,
                "pattern": _STRING,
                "excludePatterns": {"type": "array", "items": _STRING, "default": []},
            },
            ["path", "pattern"],
        ),
    ),
    "get_file_info": (
        "Show metadata for a file or directory: size, creation/modification/access times, type and permissions.",
        _PATH_ONLY,
    ),
    "list_allowed_directories": (
        "Show which directories this server is allowed to access.",
        _object({}, []),
    ),
}
