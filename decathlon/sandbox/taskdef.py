"""A Toolathlon task folder, read as the contract describes (tasks/finalpool/<name>/)."""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path

from decathlon.errors import InfraError, Kind

SPLIT = "finalpool"


@dataclass(frozen=True)
class TaskDef:
    name: str
    source: Path  # the Toolathlon root (holds configs/ and tasks/)
    config: dict = field(repr=False)

    @property
    def dir(self) -> Path:
        return self.source / "tasks" / SPLIT / self.name

    @property
    def servers(self) -> list[str]:
        return list(self.config.get("needed_mcp_servers") or [])

    @property
    def local_tools(self) -> list[str]:
        return list(self.config.get("needed_local_tools") or [])

    @property
    def initial_workspace(self) -> Path | None:
        path = self.dir / "initial_workspace"
        return path if path.is_dir() else None

    @property
    def has_preprocess(self) -> bool:
        return (self.dir / "preprocess" / "main.py").is_file()

    @property
    def evaluator(self) -> Path:
        return self.dir / "evaluation" / "main.py"

    @property
    def groundtruth(self) -> Path | None:
        path = self.dir / "groundtruth_workspace"
        return path if path.is_dir() else None

    def module(self, part: str) -> str:
        """The module Toolathlon runs with `-m` from the root (hyphens are fine for importlib)."""
        return f"tasks.{SPLIT}.{self.name}.{part}.main"

    def read_doc(self, name: str) -> str:
        path = self.dir / "docs" / name
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise InfraError(Kind.BAD_TASK, f"task {self.name} has no docs/{name}") from exc


def normalise_id(task_id: str) -> str:
    """Accept `name`, `finalpool/name` and Toolathlon's `finalpool-name`."""
    for prefix in (f"{SPLIT}/", f"{SPLIT}-"):
        if task_id.startswith(prefix):
            return task_id[len(prefix):]
    return task_id


def list_tasks(source: Path) -> list[str]:
    root = source / "tasks" / SPLIT
    if not root.is_dir():
        raise InfraError(Kind.BAD_SOURCE, f"{source} is not a Toolathlon root: it has no tasks/{SPLIT}/ "
                         "(give the folder that holds configs/ and tasks/)")
    return sorted(p.parent.name for p in root.glob("*/task_config.json"))


def unknown_task_message(task_id: str, known: list[str], source: Path | None = None) -> str:
    close = difflib.get_close_matches(task_id, known, n=5, cutoff=0.5)
    hint = f"; did you mean: {', '.join(close)}?" if close else f"; {len(known)} tasks are known"
    where = f"{source}" if source is not None else "this source"
    listing = f"; `decathlon tasks --source {source}` lists them" if source is not None else ""
    return f"no task {task_id!r} in {where}{hint}{listing}"


def load_task(source: Path, task_id: str) -> TaskDef:
    name = normalise_id(task_id)
    known = list_tasks(source)
    if name not in known:
        raise InfraError(Kind.UNKNOWN_TASK, unknown_task_message(task_id, known, source))
    path = source / "tasks" / SPLIT / name / "task_config.json"
    config = read_config(path)
    return TaskDef(name=name, source=source, config=config)


def read_config(path: Path) -> dict:
    """A task_config.json, or `bad_task` saying what is wrong with it."""
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise InfraError(Kind.BAD_TASK, f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except RecursionError:
        raise InfraError(Kind.BAD_TASK, f"{path}: nested too deeply") from None
    except ValueError as exc:
        raise InfraError(Kind.BAD_TASK, f"{path}: not valid JSON ({exc})") from None
    except OSError as exc:
        raise InfraError(Kind.BAD_TASK, f"{path}: unreadable ({exc.strerror})") from None
    if not isinstance(config, dict):
        raise InfraError(Kind.BAD_TASK, f"{path}: must hold a JSON object, not {type(config).__name__}")
    for key in ("needed_mcp_servers", "needed_local_tools"):
        if not isinstance(config.get(key), list):
            raise InfraError(Kind.BAD_TASK, f"{path}: `{key}` must be a list")
        if not all(isinstance(v, str) for v in config[key]):
            raise InfraError(Kind.BAD_TASK, f"{path}: `{key}` must list names (strings)")
    return config
