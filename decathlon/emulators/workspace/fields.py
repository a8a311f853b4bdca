"""Google's partial responses (`fields=`): `id,name`, `files(id,name),nextPageToken`, `files/id`, `*`. A selection
that does not parse is the API's 400 "Invalid field selection"."""
from __future__ import annotations

from typing import Any

Tree = dict[str, "Tree | None"]  # a selected key -> what of it is selected (None: all of it)


class FieldsError(ValueError):
    pass


def parse(text: str) -> Tree | None:
    """The selection, or None for everything (`*` or nothing)."""
    text = text.replace(" ", "").replace(".", "/")  # Sheets and Forms also take field-mask paths (a.b.c)
    if text in ("", "*"):
        return None
    tree, pos = _list(text, 0)
    if pos != len(text):
        raise FieldsError(text)
    return tree


def _list(text: str, pos: int) -> tuple[Tree, int]:
    tree: Tree = {}
    while True:
        name, sub, pos = _item(text, pos)
        tree[name] = _merge(tree[name], sub) if name in tree else sub
        if pos < len(text) and text[pos] == ",":
            pos += 1
            continue
        return tree, pos


def _item(text: str, pos: int) -> tuple[str, Tree | None, int]:
    """One selected field: `name`, `name/path…` or `name(list)`."""
    start = pos
    while pos < len(text) and text[pos] not in ",()/":
        pos += 1
    name = text[start:pos]
    if not name:
        raise FieldsError(text)
    if pos < len(text) and text[pos] == "/":
        inner, sub, pos = _item(text, pos + 1)
        return name, {inner: sub}, pos
    if pos < len(text) and text[pos] == "(":
        tree, pos = _list(text, pos + 1)
        if pos >= len(text) or text[pos] != ")":
            raise FieldsError(text)
        return name, tree, pos + 1
    return name, None, pos


def _merge(a: Tree | None, b: Tree | None) -> Tree | None:
    if a is None or b is None:
        return None
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if k in out else v
    return out


def select(doc: Any, tree: Tree | None) -> Any:
    if tree is None:
        return doc
    if isinstance(doc, list):
        return [select(item, tree) for item in doc]
    if not isinstance(doc, dict):
        return doc
    if "*" in tree:
        return doc
    return {k: select(doc[k], sub) for k, sub in tree.items() if k in doc}


def apply_mask(target: dict[str, Any], source: dict[str, Any], mask: str) -> None:
    """An update mask (`title,gridProperties.rowCount`, `*`) as Sheets and Forms apply it: each named field copied
    from `source` into `target`, removed where `source` lacks it."""
    import copy
    for path in (p.strip() for p in mask.split(",") if p.strip()):
        if path == "*":
            target.update(copy.deepcopy(source))
            continue
        keys = path.split(".")
        src: Any = source
        dst = target
        for key in keys[:-1]:
            src = src.get(key, {}) if isinstance(src, dict) else {}
            dst = dst.setdefault(key, {})
        if isinstance(src, dict) and keys[-1] in src:
            dst[keys[-1]] = copy.deepcopy(src[keys[-1]])
        else:
            dst.pop(keys[-1], None)
