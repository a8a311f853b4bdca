"""The twelve filesystem tools. Each takes validated arguments and returns the result text.

Every path argument goes through ``Sandbox.validate`` before any filesystem
access; entries discovered while walking directories are re-validated when
they are symlinks (a plain entry of a real, validated directory is inside it).
"""

from __future__ import annotations

import json
import os
import posixpath
import stat
from collections.abc import Callable
from typing import Any

from . import fileio
from .birthtime import birthtime_ns
from .edits import apply_edits, fenced_diff
from .errors import ToolError, node_error
from .formatting import (
    display_name,
    format_size,
    js_date_string,
    locale_compare_key,
    pad_end,
    pad_start,
    strcmp_key,
)
from .minimatch import minimatch
from .paths import Sandbox

Arguments = dict[str, Any]


def _scandir(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as iterator:
            entries = list(iterator)
    except OSError as exc:
        raise node_error(exc, "scandir", path) from exc
    return sorted(entries, key=lambda entry: strcmp_key(entry.name))


def _is_dir_entry(entry: os.DirEntry[str]) -> bool:
    # Node's Dirent.isDirectory() does not follow symlinks.
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _entry_allowed(sandbox: Sandbox, entry: os.DirEntry[str]) -> bool:
    try:
        is_link = entry.is_symlink()
    except OSError:
        return False
    return not is_link or sandbox.is_allowed_entry(entry.path)


def read_file(sandbox: Sandbox, args: Arguments) -> str:
    path = sandbox.validate(args["path"])
    head, tail = args.get("head"), args.get("tail")
    if head and tail:
        raise ToolError("Cannot specify both head and tail parameters simultaneously")
    if tail:
        return fileio.tail(path, tail)
    if head:
        return fileio.head(path, head)
    return fileio.read_text(path)


def read_multiple_files(sandbox: Sandbox, args: Arguments) -> str:
    blocks: list[str] = []
    for requested in args["paths"]:
        try:
            content = fileio.read_text(sandbox.validate(requested))
            blocks.append(f"{requested}:\n{content}\n")
        except ToolError as exc:
            blocks.append(f"{requested}: Error - {exc.message}")
    return "\n---\n".join(blocks)


def write_file(sandbox: Sandbox, args: Arguments) -> str:
    fileio.write_text(sandbox.validate(args["path"]), args["content"])
    return f"Successfully wrote to {args['path']}"


def edit_file(sandbox: Sandbox, args: Arguments) -> str:
    path = sandbox.validate(args["path"])
    original = fileio.normalize_line_endings(fileio.read_text(path))
    modified = apply_edits(original, args["edits"])
    diff = fenced_diff(original, modified, path)
    if not args.get("dryRun", False):
        fileio.replace_atomically(path, fileio.encode(modified))
    return diff


def create_directory(sandbox: Sandbox, args: Arguments) -> str:
    path = sandbox.validate(args["path"])
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise node_error(exc, "mkdir", path) from exc
    return f"Successfully created directory {args['path']}"


def list_directory(sandbox: Sandbox, args: Arguments) -> str:
    path = sandbox.validate(args["path"])
    return "\n".join(
        f"{'[DIR]' if _is_dir_entry(entry) else '[FILE]'} {display_name(entry.name)}" for entry in _scandir(path)
    )


def _entry_size(sandbox: Sandbox, entry: os.DirEntry[str]) -> int:
    if not _entry_allowed(sandbox, entry):
        return 0
    try:
        return entry.stat(follow_symlinks=True).st_size
    except OSError:
        return 0


def list_directory_with_sizes(sandbox: Sandbox, args: Arguments) -> str:
    path = sandbox.validate(args["path"])
    rows = [(display_name(entry.name), _is_dir_entry(entry), _entry_size(sandbox, entry)) for entry in _scandir(path)]
    if args.get("sortBy") == "size":
        ordered = sorted(rows, key=lambda row: -row[2])
    else:
        ordered = sorted(rows, key=lambda row: locale_compare_key(row[0]))
    lines = [
        f"{'[DIR]' if is_dir else '[FILE]'} {pad_end(name, 30)} {'' if is_dir else pad_start(format_size(size), 10)}"
        for name, is_dir, size in ordered
    ]
    files = sum(1 for _, is_dir, _ in rows if not is_dir)
    directories = len(rows) - files
    total = sum(size for _, is_dir, size in rows if not is_dir)
    lines += ["", f"Total: {files} files, {directories} directories", f"Combined size: {format_size(total)}"]
    return "\n".join(lines)


def _tree(sandbox: Sandbox, path: str) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = []
    for entry in _scandir(path):
        node: dict[str, Any] = {"name": display_name(entry.name)}
        if _is_dir_entry(entry):
            node["type"] = "directory"
            node["children"] = _tree(sandbox, entry.path)
        else:
            node["type"] = "file"
        result.append(node)
    return result


def directory_tree(sandbox: Sandbox, args: Arguments) -> str:
    return json.dumps(_tree(sandbox, sandbox.validate(args["path"])), indent=2, ensure_ascii=False)


def move_file(sandbox: Sandbox, args: Arguments) -> str:
    source = sandbox.validate(args["source"])
    destination = sandbox.validate(args["destination"])
    try:
        os.rename(source, destination)
    except OSError as exc:
        raise node_error(exc, "rename", source, destination) from exc
    return f"Successfully moved {args['source']} to {args['destination']}"


def _is_excluded(relative: str, patterns: list[str]) -> bool:
    return any(minimatch(relative, pattern if "*" in pattern else f"**/{pattern}/**") for pattern in patterns)


def search_files(sandbox: Sandbox, args: Arguments) -> str:
    root = sandbox.validate(args["path"])
    needle = args["pattern"].lower()
    excludes: list[str] = args.get("excludePatterns") or []
    results: list[str] = []

    def walk(directory: str) -> None:
        for entry in _scandir(directory):
            if not _entry_allowed(sandbox, entry):
                continue
            if _is_excluded(posixpath.relpath(entry.path, root), excludes):
                continue
            if needle in display_name(entry.name).lower():
                results.append(display_name(entry.path))
            if _is_dir_entry(entry):
                try:
                    walk(entry.path)
                except ToolError:
                    continue

    walk(root)
    return "\n".join(results) if results else "No matches found"


def get_file_info(sandbox: Sandbox, args: Arguments) -> str:
    path = sandbox.validate(args["path"])
    try:
        info = os.stat(path)
    except OSError as exc:
        raise node_error(exc, "stat", path) from exc
    fields = {
        "size": str(info.st_size),
        "created": js_date_string(birthtime_ns(path, info)),
        "modified": js_date_string(info.st_mtime_ns),
        "accessed": js_date_string(info.st_atime_ns),
        "isDirectory": "true" if stat.S_ISDIR(info.st_mode) else "false",
        "isFile": "true" if stat.S_ISREG(info.st_mode) else "false",
        "permissions": oct(info.st_mode)[-3:],
    }
    return "\n".join(f"{key}: {value}" for key, value in fields.items())


def list_allowed_directories(sandbox: Sandbox, args: Arguments) -> str:
    return "Allowed directories:\n" + "\n".join(sandbox.roots)


TOOLS: dict[str, Callable[[Sandbox, Arguments], str]] = {
    "read_file": read_file,
    "read_multiple_files": read_multiple_files,
    "write_file": write_file,
    "edit_file": edit_file,
    "create_directory": create_directory,
    "list_directory": list_directory,
    "list_directory_with_sizes": list_directory_with_sizes,
    "directory_tree": directory_tree,
    "move_file": move_file,
    "search_files": search_files,
    "get_file_info": get_file_info,
    "list_allowed_directories": list_allowed_directories,
}
