"""The workspace as the grader sees it: frozen once the agent can no longer act, and defused.

`task-api evaluate` stops every process of the agent first, so nothing changes the workspace after
this. Then, in place (the evaluator reads paths the trajectory names, so the workspace keeps its path):
- links that leave the workspace are removed: the grader can read the ground truth, and a link to it
  planted by the agent would otherwise hand the evaluator the right answer;
- files that are not regular files, folders or links (FIFOs, sockets, devices) are removed: a FIFO
  would block an evaluator that opens it;
- every git repository's config is cut down to the keys that only describe the repository (no hooks,
  no programs: fsmonitor, gpg.program, filters, aliases, pagers, includes…), because the evaluator runs
  git in the agent's repositories and git would run what their config names;
- where users are separated, the tree is handed to the grader (git then trusts it without
  `safe.directory=*`, which the image no longer sets).
Everything removed is listed, so the evaluator's output says what it did not see.
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from task_api.users import Users

# Keys that describe a repository and make git run nothing. Anything else in an agent's .git/config
# is dropped. (section, key) with the subsection ignored; key names are lower-case as git reports them.
SAFE_GIT_KEYS = {
    ("core", "repositoryformatversion"), ("core", "filemode"), ("core", "bare"), ("core", "logallrefupdates"),
    ("core", "ignorecase"), ("core", "precomposeunicode"), ("core", "symlinks"), ("core", "autocrlf"),
    ("core", "eol"), ("core", "quotepath"), ("core", "abbrev"),
    ("extensions", "objectformat"), ("extensions", "refstorage"), ("extensions", "worktreeconfig"),
    ("user", "name"), ("user", "email"), ("init", "defaultbranch"),
    ("remote", "url"), ("remote", "fetch"), ("branch", "remote"), ("branch", "merge"),
    ("i18n", "commitencoding"), ("i18n", "logoutputencoding"),
}
_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_KEYVAL = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")
MAX_CONFIG = 1 << 20  # a git config larger than this is not a repository description: dropped whole


@dataclass
class FreezeReport:
    removed: list[str] = field(default_factory=list)
    git_keys_dropped: list[str] = field(default_factory=list)

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
    for folder, dirs, files in os.walk(workspace):
        here = Path(folder)
        for name in sorted(dirs + files):
            path = here / name
            try:
                st = path.lstat()
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                if not _inside(path, root):
                    doomed.append((path, "a link that leaves the workspace"))
            elif not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                doomed.append((path, "not a regular file"))
        if here.name == ".git" or (here / "HEAD").is_file() and (here / "objects").is_dir():
            _defuse_repo(here, workspace, report)
            dirs[:] = [d for d in dirs if d != "hooks"]
        elif (here / ".git").is_file() and not (here / ".git").is_symlink():
            _defuse_gitfile(here / ".git", root, workspace, report)
    for path, why in doomed:
        path.unlink(missing_ok=True)
        report.removed.append(f"{path.relative_to(workspace)} ({why})")
    users.give(workspace, "grader")
    return report


def _inside(link: Path, root: Path) -> bool:
    """Where the link leads, resolved all the way (chains of links included), is inside `root`."""
    try:
        target = link.resolve(strict=False)
    except (OSError, RuntimeError):  # a loop
        return False
    return target == root or root in target.parents


def _defuse_repo(gitdir: Path, workspace: Path, report: FreezeReport) -> None:
    rel = gitdir.relative_to(workspace)
    hooks = gitdir / "hooks"
    if hooks.is_dir() and not hooks.is_symlink():
        for hook in sorted(hooks.iterdir()):
            if not hook.name.endswith(".sample"):
                report.removed.append(f"{rel}/hooks/{hook.name} (a git hook)")
        _rmtree(hooks)
    for name in ("config", "config.worktree"):
        cfg = gitdir / name
        if cfg.is_file() and not cfg.is_symlink():
            kept, dropped = _safe_config(cfg)
            cfg.write_text(kept, encoding="utf-8")
            report.git_keys_dropped += [f"{rel}/{name}: {k}" for k in dropped]


def _defuse_gitfile(gitfile: Path, root: Path, workspace: Path, report: FreezeReport) -> None:
    """A `.git` file names the repository elsewhere: kept only if that is inside the workspace."""
    try:
        line = gitfile.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return
    target = line[len("gitdir:"):].strip() if line.startswith("gitdir:") else ""
    where = (gitfile.parent / target).resolve() if target else None
    if where is None or not (where == root or root in where.parents):
        gitfile.unlink()
        report.removed.append(f"{gitfile.relative_to(workspace)} (points at a repository outside the workspace)")


def _safe_config(cfg: Path) -> tuple[str, list[str]]:
    """The config with only SAFE_GIT_KEYS kept. Parsed line by line (git's syntax, without includes:
    an include is itself a dropped key); a line this does not understand is dropped."""
    if cfg.stat().st_size > MAX_CONFIG:
        return "", ["(the whole file: over 1 MiB)"]
    out: list[str] = []
    dropped: list[str] = []
    section: tuple[str, str | None] | None = None
    header_written = False
    for raw in cfg.read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        m = _SECTION.match(line)
        if m:
            section, header_written = (m.group(1).lower(), m.group(2)), False
            line = m.group(3).strip()
            if not line or line[0] in "#;":
                continue
        kv = _KEYVAL.match(line)
        if section is None or kv is None or raw.rstrip().endswith("\\"):
            dropped.append(line[:80])
            continue
        name, sub = section
        key = kv.group(1).lower()
        full = f"{name}.{sub}.{key}" if sub is not None else f"{name}.{key}"
        value = kv.group(2) if kv.group(2) is not None else "true"
        # A remote helper URL (`ext::sh -c …`, `fd::…`) is a program too, run by any fetch.
        if (name.split(".")[0], key) not in SAFE_GIT_KEYS or "::" in value:
            dropped.append(full)
            continue
        if not header_written:
            out.append(f'[{name} "{sub}"]' if sub is not None else f"[{name}]")
            header_written = True
        out.append(f"\t{key} = {value}")
    return "\n".join(out) + ("\n" if out else ""), dropped


def _rmtree(path: Path) -> None:
    import shutil
    shutil.rmtree(path, ignore_errors=True)
