"""The task catalogue: a source is a Toolathlon root (ours under fixtures/, or a user's checkout)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from decathlon.errors import InfraError, Kind
from decathlon.sandbox import taskdef

REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "fixtures" / "toolathlon-mini"

# A task name becomes a folder (tasks/finalpool/<task>/, <out>/<task>/), file names (<task>.cassette.json)
# and an argument of task-api, so it is one path component of plain characters, never `.` or `..`, and
# never starts like an option (`-`) or a hidden file (`.`). Toolathlon's are like k8s-mysql.
_TASK_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,199}")


def task_name_problem(name: object) -> str | None:
    """Why `name` cannot be a task name, or None: the one check for every name taken from a file or folder
    name, a recording or a report."""
    if not isinstance(name, str):
        return f"a task name is a string, not {type(name).__name__}"
    if _TASK_NAME.fullmatch(name) is None:
        return (f"{name[:100]!r} is not a usable task name: one path component of letters, digits, '-', '_' "
                "and '.', not starting with '-' or '.', at most 200 characters")
    return None


def check_task_name(name: str) -> str:
    """`name`, or bad_task if it cannot be a task name (see task_name_problem)."""
    problem = task_name_problem(name)
    if problem is not None:
        raise InfraError(Kind.BAD_TASK, problem)
    return name


@dataclass(frozen=True)
class TaskInfo:
    id: str
    servers: list[str]
    local_tools: list[str]
    has_preprocess: bool
    has_groundtruth: bool
    error: str | None = None  # why the task cannot run (its task_config.json is broken); the others can

    def to_json(self) -> dict:
        out = {"id": self.id, "servers": self.servers, "local_tools": self.local_tools,
               "has_preprocess": self.has_preprocess, "has_groundtruth": self.has_groundtruth}
        if self.error:
            out["error"] = self.error
        return out


def resolve_source(raw: str | None) -> Path:
    value = raw or os.environ.get("TOOLATHLON_ROOT")
    if not value:
        raise InfraError(Kind.BAD_SOURCE, "no task source: pass --source DIR (a Toolathlon root such as "
                         "fixtures/toolathlon-mini) or set TOOLATHLON_ROOT")
    path = Path(value).expanduser().absolute()
    if not (path / "tasks" / taskdef.SPLIT).is_dir():
        raise InfraError(Kind.BAD_SOURCE, f"{path} is not a Toolathlon root: it has no tasks/{taskdef.SPLIT}/ "
                         "(give the folder that holds configs/ and tasks/)")
    return path


def catalogue(source: Path) -> list[TaskInfo]:
    """Every task of the source; one whose task_config.json is broken is listed with its error, and
    the others stay usable (it fails alone, as `bad_task`, if it is run)."""
    out = []
    names = taskdef.list_tasks(source)
    for name in names:
        bad_name = task_name_problem(name)
        if bad_name is not None:  # a folder's name, so one component; but it would be an argv, a file name…
            out.append(TaskInfo(name, [], [], False, False, f"bad_task: {bad_name}"))
            continue
        try:
            t = taskdef.load_task(source, name)
        except InfraError as exc:
            folder = source / "tasks" / taskdef.SPLIT / name
            out.append(TaskInfo(name, [], [], (folder / "preprocess" / "main.py").is_file(),
                                (folder / "groundtruth_workspace").is_dir(), f"{exc.kind}: {exc.message}"))
            continue
        out.append(TaskInfo(name, t.servers, t.local_tools, t.has_preprocess, t.groundtruth is not None))
    return out


def select(source: Path, wanted: list[str], all_tasks: bool) -> list[str]:
    """The tasks to run. One whose folder name cannot be a task name is never run: `decathlon tasks` lists
    it with why, --all leaves it out, naming it is an error."""
    known = [t.id for t in catalogue(source) if task_name_problem(t.id) is None]
    if all_tasks:
        return known
    chosen = []
    for raw in wanted:
        name = taskdef.normalise_id(raw)
        if name not in known:
            check_task_name(name)  # a bad name is named as such, whether or not a folder has it
            raise InfraError(Kind.UNKNOWN_TASK, taskdef.unknown_task_message(raw, known, source))
        chosen.append(name)
    return chosen


IMPORT_REPORT = "import-report.json"


def replay_only(source: Path) -> str | None:
    """Why `source` cannot serve a live policy (None: it can). An import of recorded runs holds each task's
    recorded answers, not its preprocess, evaluator or servers: it replays those runs, and grades only them."""
    if not (source / IMPORT_REPORT).is_file():
        return None
    return (f"{source} is an import of recorded runs: it holds each task's recorded answers, not its preprocess, "
            "evaluator or MCP servers, so it only replays them (--policy replay; `decathlon report` reads their "
            "verdicts). To run or train a live policy, use a Toolathlon checkout as the source (--source CHECKOUT "
            "or TOOLATHLON_ROOT; `decathlon tasks --source CHECKOUT` says which of its tasks run and are graded here)")
