"""``edit_file``'s text replacement and diff rendering, after the reference's ``applyFileEdits``.

Reference quirks kept on purpose: the first exact occurrence is replaced with
JavaScript ``String.prototype.replace`` semantics, so ``$$``, ``$&``, ``$```
and ``$'`` in ``newText`` are substitution patterns; CRLF files are written
back with LF endings; the fallback match compares lines with JS ``trim()``.
"""

from __future__ import annotations

import re

from .errors import ToolError
from .fileio import normalize_line_endings
from .jsdiff import create_two_files_patch

# JavaScript's WhiteSpace and LineTerminator sets (what trim() and \s remove).
_JS_SPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_LEADING_SPACE = re.compile(f"^[{re.escape(_JS_SPACE)}]*")
_REPLACEMENT_PATTERN = re.compile(r"\$([$&`'])")


def _js_trim(text: str) -> str:
    return text.strip(_JS_SPACE)


def _leading_space(text: str) -> str:
    match = _LEADING_SPACE.match(text)
    return match.group(0) if match else ""


def _js_replace_first(haystack: str, needle: str, replacement: str) -> str:
    index = haystack.find(needle)
    before, after = haystack[:index], haystack[index + len(needle) :]

    def substitute(match: re.Match[str]) -> str:
        return {"$": "$", "&": needle, "`": before, "'": after}[match.group(1)]

    return before + _REPLACEMENT_PATTERN.sub(substitute, replacement) + after


def _apply_flexible(content: str, old_text: str, new_text: str) -> str | None:
    old_lines = old_text.split("\n")
    content_lines = content.split("\n")
    for start in range(len(content_lines) - len(old_lines) + 1):
        window = content_lines[start : start + len(old_lines)]
        if not all(_js_trim(old) == _js_trim(line) for old, line in zip(old_lines, window, strict=True)):
            continue
        original_indent = _leading_space(content_lines[start])
        new_lines: list[str] = []
        for index, line in enumerate(new_text.split("\n")):
            if index == 0:
                new_lines.append(original_indent + line.lstrip(_JS_SPACE))
                continue
            old_indent = _leading_space(old_lines[index]) if index < len(old_lines) else ""
            new_indent = _leading_space(line)
            if old_indent and new_indent:
                relative = len(new_indent) - len(old_indent)
                new_lines.append(original_indent + " " * max(0, relative) + line.lstrip(_JS_SPACE))
            else:
                new_lines.append(line)
        content_lines[start : start + len(old_lines)] = new_lines
        return "\n".join(content_lines)
    return None


def apply_edits(content: str, edits: list[dict[str, str]]) -> str:
    modified = content
    for edit in edits:
        old_text = normalize_line_endings(edit["oldText"])
        new_text = normalize_line_endings(edit["newText"])
        if old_text in modified:
            modified = _js_replace_first(modified, old_text, new_text)
            continue
        flexible = _apply_flexible(modified, old_text, new_text)
        if flexible is None:
            raise ToolError(f"Could not find exact match for edit:\n{edit['oldText']}")
        modified = flexible
    return modified


def fenced_diff(original: str, modified: str, path: str) -> str:
    diff = create_two_files_patch(
        path, path, normalize_line_endings(original), normalize_line_endings(modified), "original", "modified"
    )
    fence_length = 3
    while "`" * fence_length in diff:
        fence_length += 1
    fence = "`" * fence_length
    return f"{fence}diff\n{diff}{fence}\n\n"
