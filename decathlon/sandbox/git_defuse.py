"""Every git repository of a frozen workspace, made to describe itself and name no program.

The grader runs git in the agent's repositories, and git runs what a repository's config names (hooks,
core.fsmonitor, gpg.program, diff.external, textconv and filter drivers, core.sshCommand, credential
helpers, includes of further files…). What git reads as a repository's config is fixed by git itself:
`$GIT_DIR/config.worktree` and `$GIT_COMMON_DIR/config` (plus what they include), where `$GIT_DIR` is
any directory holding a `HEAD` (git's `is_git_directory` requires one) and `$GIT_COMMON_DIR` is what its
`commondir` file names, or `$GIT_DIR` itself. So instead of recognising repositories by their usual
shape, every directory of the workspace that holds an entry named HEAD, or is named `.git`, is taken
for a git dir, and for it and its common dir:
- `config` and `config.worktree` keep only SAFE_GIT_KEYS (a config that is a link is replaced by the
  kept keys of what it points to, inside the workspace, or dropped);
- `hooks/` is removed;
- a `commondir` or `objects/info/alternates` that names a place outside the workspace is removed (the
  repository then breaks, which is the agent's doing).
decathlon.sandbox.grader_git closes the same class from the other side: the grader's git is run with every
program-naming key forced to a harmless value, whatever a config says.
"""
from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

# Keys that describe a repository and make git run nothing. Anything else in an agent's config is
# dropped. (section, key) with the subsection ignored; key names are lower-case as git reports them.
SAFE_GIT_KEYS = frozenset({
    ("core", "repositoryformatversion"), ("core", "filemode"), ("core", "bare"), ("core", "logallrefupdates"),
    ("core", "ignorecase"), ("core", "precomposeunicode"), ("core", "symlinks"), ("core", "autocrlf"),
    ("core", "eol"), ("core", "quotepath"), ("core", "abbrev"),
    ("extensions", "objectformat"), ("extensions", "refstorage"), ("extensions", "worktreeconfig"),
    ("user", "name"), ("user", "email"), ("init", "defaultbranch"),
    ("remote", "url"), ("remote", "fetch"), ("branch", "remote"), ("branch", "merge"),
    ("i18n", "commitencoding"), ("i18n", "logoutputencoding"),
})
CONFIG_FILES = ("config", "config.worktree")
_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_KEYVAL = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")
MAX_CONFIG = 1 << 20  # a git config larger than this is not a repository description: dropped whole


@dataclass
class DefuseReport:
    removed: list[str] = field(default_factory=list)
    git_keys_dropped: list[str] = field(default_factory=list)


def is_git_dir_candidate(folder: Path) -> bool:
    """A superset of what git accepts as a git dir: every one has a HEAD (a file or a link)."""
    return folder.name == ".git" or os.path.lexists(folder / "HEAD")


def inside(path: Path, root: Path) -> bool:
    """Where `path` leads, resolved all the way (links and `..` included), is `root` or below it."""
    try:
        target = path.resolve(strict=False)
    except (OSError, RuntimeError):  # a loop
        return False
    return target == root or root in target.parents


def defuse(gitdirs: list[Path], workspace: Path, report: DefuseReport) -> None:
    """Defuse each git dir found in `workspace` (resolved) and the common dir it names."""
    root = workspace.resolve()
    done: set[Path] = set()
    for gitdir in sorted(gitdirs):
        for folder in (gitdir, _common_dir(gitdir, root, workspace, report)):
            if folder is None or not folder.is_dir() or folder.is_symlink():
                continue
            key = folder.resolve()
            if key in done or not inside(key, root):
                continue
            done.add(key)
            _defuse_one(folder, root, workspace, report)


def _rel(path: Path, workspace: Path) -> str:
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return str(path)


def _common_dir(gitdir: Path, root: Path, workspace: Path, report: DefuseReport) -> Path | None:
    pointer = gitdir / "commondir"
    if not os.path.lexists(pointer):
        return None
    try:
        named = pointer.read_text(encoding="utf-8", errors="replace").strip() if pointer.is_file() else ""
    except OSError:
        named = ""
    target = (gitdir / named) if named else None
    if target is None or pointer.is_symlink() or not inside(target, root):
        _remove(pointer)
        report.removed.append(f"{_rel(pointer, workspace)} (names a common git dir outside the workspace)")
        return None
    return target


def _defuse_one(folder: Path, root: Path, workspace: Path, report: DefuseReport) -> None:
    hooks = folder / "hooks"
    if os.path.lexists(hooks):
        if hooks.is_dir() and not hooks.is_symlink():
            for hook in sorted(hooks.iterdir()):
                if not hook.name.endswith(".sample"):
                    report.removed.append(f"{_rel(hook, workspace)} (a git hook)")
        else:
            report.removed.append(f"{_rel(hooks, workspace)} (a git hooks folder elsewhere)")
        _remove(hooks)
    for name in CONFIG_FILES:
        cfg = folder / name
        if not os.path.lexists(cfg):
            continue
        text = _read_config(cfg, root)
        if text is None:
            _remove(cfg)
            report.removed.append(f"{_rel(cfg, workspace)} (a git config that is not a file of the workspace)")
            continue
        kept, dropped = safe_config(text)
        _remove(cfg)  # a link goes: the file written here is the grader's own
        cfg.write_text(kept, encoding="utf-8")
        report.git_keys_dropped += [f"{_rel(cfg, workspace)}: {k}" for k in dropped]
    alternates = folder / "objects" / "info" / "alternates"
    if os.path.lexists(alternates) and not _alternates_inside(alternates, root):
        _remove(alternates)
        report.removed.append(f"{_rel(alternates, workspace)} (borrows objects from outside the workspace)")


def _read_config(cfg: Path, root: Path) -> str | None:
    """The config's text, following a link only to a regular file inside the workspace."""
    if not inside(cfg, root):
        return None
    try:
        real = cfg.resolve()
        if not real.is_file():
            return None
        with open(real, "rb") as f:  # bounded: past MAX_CONFIG, safe_config drops it whole
            return f.read(MAX_CONFIG + 1).decode("utf-8", errors="replace")
    except OSError:
        return None


def _alternates_inside(path: Path, root: Path) -> bool:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines() if path.is_file() else None
    except OSError:
        return False
    if lines is None or path.is_symlink():
        return False
    base = path.parent.parent  # relative entries are relative to the objects folder
    return all(inside(base / line.strip(), root) for line in lines if line.strip() and not line.startswith("#"))


def safe_config(text: str) -> tuple[str, list[str]]:
    """The config with only SAFE_GIT_KEYS kept, and what was dropped. Parsed line by line (git's syntax,
    without includes: an include is itself a dropped key); a line this does not understand is dropped."""
    if len(text) > MAX_CONFIG:
        return "", ["(the whole file: over 1 MiB)"]
    out: list[str] = []
    dropped: list[str] = []
    section: tuple[str, str | None] | None = None
    header_written = False
    for raw in text.splitlines():
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


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
