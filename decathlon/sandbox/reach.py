"""What a task's own scripts reach outside the sandbox, read from their code: never run, never imported.

A task's preprocess and evaluator talk to the world through client libraries (googleapiclient, the Snowflake
connector, imaplib…), hard-coded API hosts (api.github.com) and MCP servers they start themselves
(`MCPServerManager` … `connect_servers(["google_calendar"])`). Each is a *system*; the table below says how to
recognise it in code and what answers it in an episode: one of the front's emulators, one of the episode's own
services, or nothing (it is out there, and an offline episode cannot reach it). The code read is every `.py` of
the task's `preprocess/` and `evaluation/`, the shell scripts they name, and, transitively, the modules of the
checkout they import (`utils.app_specific.github.api` holds the host its callers reach): whatever checkout it is
given, so nothing of a particular checkout is written here.

Two readers: the SaaS front (decathlon.sandbox.saas: an episode whose scripts reach a Google or Snowflake host gets
it) and the task statuses (decathlon.checkout.task_status: a preprocess that calls api.github.com is not "graded
here").
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from decathlon.emulators import registry, unemulated
from decathlon.emulators.vendor import System

STEPS = ("preprocess", "evaluation")
_SCANNED_LIMIT = 2 * 1024 * 1024  # per file: task scripts are small; a huge data file is not code
_MAX_FILES = 400  # per step: a closure larger than this is not a task's scripts any more


# The emulated vendors' systems come from their descriptors; the rest are vendors no emulator answers yet.
SYSTEMS: tuple[System, ...] = (*registry.systems(), *unemulated.SYSTEMS)
BY_NAME = {s.name: s for s in SYSTEMS}

_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)", re.M)
# The MCP servers a script starts through the checkout's MCPServerManager: connect_servers(["a", "b"]), servers['a'].
_CONNECT = re.compile(r"connect_servers\(\s*\[([^\]]*)\]")
_SERVER_KEY = re.compile(r"\bservers(?:\[|\.get\()\s*['\"]([\w.-]+)['\"]|['\"]([\w.-]+)['\"]\s+in\s+\w+\.servers\b")
_QUOTED = re.compile(r"['\"]([\w.-]+)['\"]")
_SHELL = re.compile(r"['\"]([\w.-]+\.sh)['\"]")
# A module run as a program (`uv run -m utils.app_specific.notion.notion_remove_and_duplicate`): read like an import.
_RUN_MODULE = re.compile(r"\s-m\s+([A-Za-z_]\w*(?:\.\w+)+)")
_MARKERS = [(s, re.compile("|".join(f"(?:{p})" for p in (*s.hosts, *s.text)))) for s in SYSTEMS if s.hosts or s.text]


@dataclass(frozen=True)
class Finding:
    """One piece of evidence that a step reaches a system."""

    system: str
    step: str
    file: str  # relative to the Toolathlon root
    line: int
    marker: str  # what the code shows: `import googleapiclient`, `api.github.com`

    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class ServerUse:
    """An MCP server a step starts itself (through the checkout's MCPServerManager)."""

    server: str
    step: str
    file: str
    line: int


@dataclass(frozen=True)
class Reach:
    findings: tuple[Finding, ...] = ()
    servers: tuple[ServerUse, ...] = ()
    files: dict[str, tuple[str, ...]] = field(default_factory=dict)  # step → the files read, relative to the root

    def systems(self, step: str | None = None) -> list[str]:
        """The systems reached (by one step, or by either), in the table's order."""
        found = {f.system for f in self.findings if step is None or f.step == step}
        return [s.name for s in SYSTEMS if s.name in found]

    def first(self, system: str, step: str | None = None) -> Finding | None:
        return next((f for f in self.findings if f.system == system and (step is None or f.step == step)), None)

    def reaches_front(self) -> bool:
        return any(BY_NAME[s].front for s in self.systems())


@dataclass(frozen=True)
class _FileScan:
    imports: tuple[tuple[int, int, str, tuple[str, ...]], ...]  # (line, dots, module, names)
    markers: tuple[tuple[str, int, str], ...]  # (system, line, marker)
    servers: tuple[tuple[str, int], ...]  # (server, line)
    shell: tuple[str, ...]  # shell scripts it names
    runs: tuple[str, ...]  # modules it runs as programs (`-m MODULE`)


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _module_systems(module: str) -> list[str]:
    return [s.name for s in SYSTEMS if any(module == m or module.startswith(m + ".") for m in s.modules)]


# Google's generic discovery client: what it reaches is the API a file builds with it, where the file says.
_DISCOVERY_CLIENT = "googleapiclient"
_BUILD = re.compile(r"\bbuild\(\s*(?:serviceName\s*=\s*)?['\"](\w+)['\"]")


_ANY_BUILD = re.compile(r"\bbuild\(")


def _built_systems(text: str) -> list[str] | None:
    """The systems of the APIs `text` builds with the discovery client; none when it builds nothing (an import the
    file never uses: the modules it imports are read for their own builds); None when it builds an API not named."""
    apis = set(_BUILD.findall(text))
    if not apis:
        return [] if _ANY_BUILD.search(text) is None else None
    return [s.name for s in SYSTEMS if apis & set(s.apis)]


@functools.lru_cache(maxsize=4096)
def _scan_file(path: Path, _mtime_ns: int, _size: int) -> _FileScan:
    text = path.read_bytes().decode("utf-8", "replace")
    imports: list[tuple[int, int, str, tuple[str, ...]]] = []
    markers: list[tuple[str, int, str]] = []
    for m in _FROM.finditer(text):
        names = tuple(n.split(" as ")[0].strip() for n in m.group(3).strip("()").replace("\n", " ").split(","))
        imports.append((_line(text, m.start()), len(m.group(1)), m.group(2), tuple(n for n in names if n.isidentifier())))
    for m in _IMPORT.finditer(text):
        for part in m.group(1).split(","):
            imports.append((_line(text, m.start()), 0, part.split(" as ")[0].strip(), ()))
    built = _built_systems(text)
    for line, dots, module, names in imports:
        if dots:
            continue
        marked: set[str] = set()
        for full in (module, *(f"{module}.{n}" for n in names)):
            generic = full == _DISCOVERY_CLIENT or full.startswith(_DISCOVERY_CLIENT + ".")
            for name in (built if generic and built is not None else _module_systems(full)):
                if name not in marked:  # `from google.cloud import bigquery, storage`: each system once, most precisely
                    marked.add(name)
                    markers.append((name, line, f"import {full}"))
    for owner, pattern in _MARKERS:
        for m in pattern.finditer(text):
            markers.append((owner.name, _line(text, m.start()), m.group(0)))
    servers = [(name, _line(text, m.start())) for m in _CONNECT.finditer(text) for name in _QUOTED.findall(m.group(1))]
    servers += [(m.group(1) or m.group(2), _line(text, m.start())) for m in _SERVER_KEY.finditer(text)]
    return _FileScan(tuple(imports), tuple(sorted(set(markers), key=lambda x: (x[1], x[0], x[2]))),
                     tuple(sorted(set(servers), key=lambda x: (x[1], x[0]))), tuple(sorted(set(_SHELL.findall(text)))),
                     tuple(sorted(set(_RUN_MODULE.findall(text)))))


def _scan(path: Path) -> _FileScan | None:
    try:
        st = path.stat()
        if st.st_size > _SCANNED_LIMIT:
            return None
        return _scan_file(path, st.st_mtime_ns, st.st_size)
    except OSError:
        return None


def _inside(path: Path, root: Path) -> bool:
    # Not resolved: a task copy's utils/ is a link to the checkout, and still the checkout's code.
    return path.is_relative_to(root) and ".." not in path.relative_to(root).parts


@functools.lru_cache(maxsize=65536)
def _module_file(base: Path, parts: tuple[str, ...]) -> tuple[Path, ...]:
    """The files importing `parts` from `base` runs: each package's __init__ on the way, then the module. Cached: one
    listing reads the same checkout modules for every task (a checkout's code does not change under a listing)."""
    out: list[Path] = []
    folder = base
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if last and (folder / f"{part}.py").is_file():
            out.append(folder / f"{part}.py")
            return tuple(out)
        folder = folder / part
        if not folder.is_dir():
            return ()
        if (folder / "__init__.py").is_file():
            out.append(folder / "__init__.py")
    return tuple(out)


def _resolve(file: Path, dots: int, module: str, names: tuple[str, ...], task_dir: Path, root: Path) -> list[Path]:
    """The checkout's own files an import statement runs (a library's are not ours to read)."""
    parts = [p for p in module.split(".") if p]
    if dots:
        base = file.parent
        for _ in range(dots - 1):
            base = base.parent
        bases = [base]
    else:
        # As the scripts find them: beside themselves first (a sibling `main` is theirs, not the root's runner), then
        # the root (`python -m tasks.…` from it) and the task's folder (sys.path tricks).
        bases = [file.parent, root, task_dir]
    for base in bases:
        found = _module_file(base, tuple(parts)) if parts else ()
        extra = [f for n in names for f in _module_file(base, (*parts, n))]
        if found or extra:
            return [f for f in [*found, *extra] if _inside(f, root)]
    return []


def _named_in(folder: Path, name: str) -> list[Path]:
    return sorted(p for p in folder.rglob(name) if p.is_file())


def _closure(step_dir: Path, task_dir: Path, root: Path) -> list[Path]:
    """The files a step runs. A shared module's commands (`-m MODULE`, a shell script) count only where it is run as a
    program: the helper that can fork a GitHub repository is imported by every task, and forks only for its callers."""
    if not step_dir.is_dir():
        return []
    todo = [(p, True) for p in sorted(step_dir.rglob("*.py"))]
    seen: list[Path] = []
    commands_read: dict[Path, bool] = {}
    while todo and len(seen) < _MAX_FILES:
        path, runs = todo.pop(0)
        runs = runs or _inside(path, task_dir)
        if path in commands_read and (commands_read[path] or not runs):
            continue
        first = path not in commands_read
        commands_read[path] = runs
        scan = _scan(path)
        if scan is None:
            continue
        if first:
            seen.append(path)
            for _line_no, dots, module, names in scan.imports:
                todo.extend((p, False) for p in _resolve(path, dots, module, names, task_dir, root))
        if runs:
            for module in scan.runs:
                todo.extend((p, True) for p in _resolve(path, 0, module, (), task_dir, root))
            for script in scan.shell:  # a shell script the code runs, from the task's own folder
                todo.extend((p, True) for p in _named_in(task_dir, script))
    return seen


def read(task_dir: Path, root: Path) -> Reach:
    """What the task's preprocess and evaluation reach, with the evidence. `root`: the Toolathlon root its scripts
    import the checkout's modules from (the checkout, or an episode's copy of it)."""
    findings: list[Finding] = []
    servers: list[ServerUse] = []
    files: dict[str, tuple[str, ...]] = {}
    for step in STEPS:
        read_files = _closure(task_dir / step, task_dir, root)
        rel = [str(p.relative_to(root)) if _inside(p, root) else str(p) for p in read_files]
        files[step] = tuple(rel)
        for path, name in zip(read_files, rel):
            scan = _scan(path)
            if scan is None:
                continue
            findings += [Finding(system, step, name, line, marker) for system, line, marker in scan.markers]
            servers += [ServerUse(server, step, name, line) for server, line in scan.servers]
    return Reach(tuple(findings), tuple(servers), files)
