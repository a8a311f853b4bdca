"""Port of the parts of the npm ``diff`` package (v5) used by ``edit_file``.

The reference server builds its diff with ``createTwoFilesPatch``; hunk
boundaries, the choice between equally short edit scripts and the
``\\ No newline at end of file`` markers all follow from jsdiff's particular
Myers implementation, so it is ported line by line rather than replaced with
difflib.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

_CONTEXT = 4
_LINE_SPLIT = re.compile(r"(\n|\r\n)")


@dataclass
class _Component:
    count: int
    added: bool = False
    removed: bool = False
    previous: _Component | None = None
    value: str = ""
    lines: list[str] = field(default_factory=list)


@dataclass
class _Path:
    old_pos: int
    last: _Component | None


def _tokenize(text: str) -> list[str]:
    parts = _LINE_SPLIT.split(text)
    if parts and not parts[-1]:
        parts.pop()
    tokens: list[str] = []
    for index, part in enumerate(parts):
        if index % 2:
            tokens[-1] += part
        else:
            tokens.append(part)
    return [token for token in tokens if token]


def _add_to_path(path: _Path, added: bool, removed: bool, old_pos_inc: int) -> _Path:
    last = path.last
    if last is not None and last.added == added and last.removed == removed:
        component = _Component(last.count + 1, added, removed, last.previous)
    else:
        component = _Component(1, added, removed, last)
    return _Path(path.old_pos + old_pos_inc, component)


def _extract_common(path: _Path, new: list[str], old: list[str], diagonal: int) -> int:
    old_pos = path.old_pos
    new_pos = old_pos - diagonal
    common = 0
    while new_pos + 1 < len(new) and old_pos + 1 < len(old) and new[new_pos + 1] == old[old_pos + 1]:
        new_pos += 1
        old_pos += 1
        common += 1
    if common:
        path.last = _Component(common, previous=path.last)
    path.old_pos = old_pos
    return new_pos


def _build_values(last: _Component | None, new: list[str], old: list[str]) -> list[_Component]:
    components: list[_Component] = []
    while last is not None:
        components.append(last)
        last = last.previous
    components.reverse()
    new_pos = old_pos = 0
    for index, component in enumerate(components):
        if not component.removed:
            component.value = "".join(new[new_pos : new_pos + component.count])
            new_pos += component.count
            if not component.added:
                old_pos += component.count
        else:
            component.value = "".join(old[old_pos : old_pos + component.count])
            old_pos += component.count
            # jsdiff emits removals before the insertions they pair with.
            if index and components[index - 1].added:
                components[index - 1], components[index] = components[index], components[index - 1]
    return components


def diff_lines(old_text: str, new_text: str) -> list[_Component]:
    old = _tokenize(old_text)
    new = _tokenize(new_text)
    old_len, new_len = len(old), len(new)
    best: dict[int, _Path | None] = {0: _Path(-1, None)}
    start = best[0]
    assert start is not None
    new_pos = _extract_common(start, new, old, 0)
    if start.old_pos + 1 >= old_len and new_pos + 1 >= new_len:
        return _build_values(start.last, new, old)

    min_diagonal: float = -math.inf
    max_diagonal: float = math.inf
    edit_length = 1
    while edit_length <= old_len + new_len:
        diagonal = int(max(min_diagonal, -edit_length))
        while diagonal <= min(max_diagonal, edit_length):
            remove_path = best.get(diagonal - 1)
            add_path = best.get(diagonal + 1)
            if remove_path is not None:
                best[diagonal - 1] = None
            can_add = add_path is not None and 0 <= add_path.old_pos - diagonal < new_len
            can_remove = remove_path is not None and remove_path.old_pos + 1 < old_len
            if not can_add and not can_remove:
                best[diagonal] = None
                diagonal += 2
                continue
            add_reaches_further = (
                add_path is not None and remove_path is not None and remove_path.old_pos + 1 < add_path.old_pos
            )
            if not can_remove or (can_add and add_reaches_further):
                assert add_path is not None
                base = _add_to_path(add_path, True, False, 0)
            else:
                assert remove_path is not None
                base = _add_to_path(remove_path, False, True, 1)
            new_pos = _extract_common(base, new, old, diagonal)
            if base.old_pos + 1 >= old_len and new_pos + 1 >= new_len:
                return _build_values(base.last, new, old)
            best[diagonal] = base
            if base.old_pos + 1 >= old_len:
                max_diagonal = min(max_diagonal, diagonal - 1)
            if new_pos + 1 >= new_len:
                min_diagonal = max(min_diagonal, diagonal + 1)
            diagonal += 2
        edit_length += 1
    raise AssertionError("diff did not converge")


@dataclass
class _Hunk:
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: list[str]


def _hunks(old_text: str, new_text: str) -> list[_Hunk]:
    components = diff_lines(old_text, new_text)
    components.append(_Component(0, value=""))

    def context(lines: list[str]) -> list[str]:
        return [" " + line for line in lines]

    hunks: list[_Hunk] = []
    old_range_start = new_range_start = 0
    current: list[str] = []
    old_line = new_line = 1
    for index, component in enumerate(components):
        is_sentinel = index == len(components) - 1
        value = component.value.removesuffix("\n")
        lines = [] if is_sentinel else value.split("\n")
        component.lines = lines
        if component.added or component.removed:
            if not old_range_start:
                old_range_start, new_range_start = old_line, new_line
                if index > 0:
                    previous = components[index - 1]
                    current = context(previous.lines[-_CONTEXT:]) if _CONTEXT > 0 else []
                    old_range_start -= len(current)
                    new_range_start -= len(current)
            marker = "+" if component.added else "-"
            current.extend(marker + line for line in lines)
            if component.added:
                new_line += len(lines)
            else:
                old_line += len(lines)
        else:
            if old_range_start:
                if len(lines) <= _CONTEXT * 2 and index < len(components) - 2:
                    current.extend(context(lines))
                else:
                    context_size = min(len(lines), _CONTEXT)
                    current.extend(context(lines[:context_size]))
                    hunk = _Hunk(
                        old_range_start,
                        old_line - old_range_start + context_size,
                        new_range_start,
                        new_line - new_range_start + context_size,
                        current,
                    )
                    if index >= len(components) - 2 and len(lines) <= _CONTEXT:
                        old_eof_newline = old_text.endswith("\n")
                        new_eof_newline = new_text.endswith("\n")
                        no_nl_before_adds = len(lines) == 0 and len(current) > hunk.old_lines
                        if not old_eof_newline and no_nl_before_adds and old_text:
                            current.insert(hunk.old_lines, "\\ No newline at end of file")
                        if (not old_eof_newline and not no_nl_before_adds) or not new_eof_newline:
                            current.append("\\ No newline at end of file")
                    hunks.append(hunk)
                    old_range_start = new_range_start = 0
                    current = []
            old_line += len(lines)
            new_line += len(lines)
    return hunks


def create_two_files_patch(
    old_name: str, new_name: str, old_text: str, new_text: str, old_header: str, new_header: str
) -> str:
    out: list[str] = []
    if old_name == new_name:
        out.append("Index: " + old_name)
    out.append("=" * 67)
    out.append(f"--- {old_name}\t{old_header}")
    out.append(f"+++ {new_name}\t{new_header}")
    for hunk in _hunks(old_text, new_text):
        old_start = hunk.old_start - 1 if hunk.old_lines == 0 else hunk.old_start
        new_start = hunk.new_start - 1 if hunk.new_lines == 0 else hunk.new_start
        out.append(f"@@ -{old_start},{hunk.old_lines} +{new_start},{hunk.new_lines} @@")
        out.extend(hunk.lines)
    return "\n".join(out) + "\n"
