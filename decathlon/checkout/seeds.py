"""What a task starts from that its checkout lacks: the seed its real scripts expect and cannot find.

A task's preprocess unpacks archives the workspace is meant to hold (`files.tar.gz` in `initial_workspace/`), and its
evaluator compares against `groundtruth_workspace/`. A checkout made without its large files has the folders and not
the files: the preprocess then fails, or carries on with an empty workspace, and the evaluator has nothing to compare
against. Such a task still runs here with its real scripts, but it is not graded as the benchmark grades it; this
says which file is missing, read from the task's own folder and preprocess code (whatever checkout it is given).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_ARCHIVE = re.compile(r"['\"]([\w.-]+\.(?:tar\.gz|tgz|tar|zip))['\"]")
_SCANNED_LIMIT = 2 * 1024 * 1024


@dataclass(frozen=True)
class MissingSeed:
    file: str  # relative to the task's folder
    why: str


def _archives_named(preprocess: Path) -> list[str]:
    names: set[str] = set()
    for path in sorted(preprocess.rglob("*.py")) if preprocess.is_dir() else []:
        try:
            if path.stat().st_size <= _SCANNED_LIMIT:
                names.update(_ARCHIVE.findall(path.read_bytes().decode("utf-8", "replace")))
        except OSError:
            continue
    return sorted(names)


def _empty(folder: Path) -> bool:
    try:
        return folder.is_dir() and next(folder.iterdir(), None) is None
    except OSError:
        return False


def missing(task_dir: Path) -> list[MissingSeed]:
    """The seeds `task_dir` lacks: an archive its preprocess unpacks that no file of the task's folder is (the workspace
    starts as a copy of initial_workspace/, so it is not there either), a groundtruth_workspace/ that is empty."""
    out = []
    present = {p.name for p in task_dir.rglob("*") if p.is_file()}
    for name in _archives_named(task_dir / "preprocess"):
        if name not in present:
            out.append(MissingSeed(f"initial_workspace/{name}", f"its preprocess unpacks {name} from the workspace, and "
                                   "the task's folder has no such file (the checkout lacks it)"))
    if _empty(task_dir / "groundtruth_workspace"):
        out.append(MissingSeed("groundtruth_workspace/", "its groundtruth_workspace/ is empty: the evaluator has nothing "
                               "to compare against (the checkout lacks its files)"))
    return out
