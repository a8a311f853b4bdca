"""The workspace as the grader sees it: frozen once the agent can no longer act, and defused.

`task-api evaluate` stops every process of the agent first, so nothing changes the workspace after
this. Then, in place (the evaluator reads paths the trajectory names, so the workspace keeps its path):
- links that leave the workspace are removed: the grader can read the ground truth, and a link to it
  planted by the agent would otherwise hand the evaluator the right answer;
- files that are not regular files, folders or links (FIFOs, sockets, devices) are removed: a FIFO
  would block an evaluator that opens it;
- every git repository, wherever git would find its config, is cut down to what describes it
  (decathlon.sandbox.git_defuse), and a `.git` file naming a repository outside the workspace is removed;
- where users are separated, the tree is handed to the grader (git then trusts it without
  `safe.directory=*`, which the image no longer sets).
Everything removed is listed, so the evaluator's output says what it did not see.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from decathlon.sandbox.git_defuse import DefuseReport, defuse, inside, is_git_dir_candidate
from decathlon.sandbox.users import Users


@dataclass
class FreezeReport(DefuseReport):
    def lines(self) -> list[str]:
        out = [f"decathlon: not graded (removed before grading): {p}" for p in self.removed]
        out += [f"decathlon: git config key dropped before grading: {k}" for k in self.git_keys_dropped]
        return out


def freeze(workspace: Path, users: Users) -> FreezeReport:
    report = FreezeReport()
    if not workspace.is_dir() or workspace.is_symlink():
        return report
    root = workspace.resolve()
    doomed: list[tuple[Path, str]] = []  # removed after the walk: a link is judged before any other goes
    gitdirs: list[Path] = []
    gitfiles: list[Path] = []
    for folder, dirs, files in os.walk(workspace):
        here = Path(folder)
        dirs.sort()
        for name in sorted(dirs + files):
            path = here / name
            try:
                st = path.lstat()
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                if not inside(path, root):
                    doomed.append((path, "a link that leaves the workspace"))
            elif not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                doomed.append((path, "not a regular file"))
            elif name == ".git" and stat.S_ISREG(st.st_mode):
                gitfiles.append(path)
        if is_git_dir_candidate(here):
            gitdirs.append(here)
    for path, why in doomed:
        path.unlink(missing_ok=True)
        report.removed.append(f"{path.relative_to(workspace)} ({why})")
    for gitfile in gitfiles:
        _defuse_gitfile(gitfile, root, workspace, report)
    defuse(gitdirs, workspace, report)
    users.give(workspace, "grader")
    return report


def _defuse_gitfile(gitfile: Path, root: Path, workspace: Path, report: FreezeReport) -> None:
    """A `.git` file names the repository elsewhere: kept only if that is inside the workspace (where
    the walk found it, and git_defuse defused it, like every other)."""
    try:
        line = gitfile.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return
    target = line[len("gitdir:"):].strip() if line.startswith("gitdir:") else ""
    if not target or not inside(gitfile.parent / target, root):
        gitfile.unlink()
        report.removed.append(f"{gitfile.relative_to(workspace)} (points at a repository outside the workspace)")
