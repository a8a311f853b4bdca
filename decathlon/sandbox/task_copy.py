"""A private Toolathlon root per episode, for the task's own scripts (preprocess, evaluator, templates).

Toolathlon runs them from the root, and they write into their task folder (regenerated ground truth,
`files/folder_id.txt`, extracted tarballs, temp folders) and read `configs/…` relative to the cwd.
Run against the user's checkout, two episodes of one task would see each other's writes and the
checkout would change. So each episode gets its own root in the grader's home:

- `tasks/finalpool/<task>/` and `configs/`: copied (written to by the scripts; small);
- every other top-level entry (`utils/`, `local_servers/`, …): a symlink to the checkout, read only
  by the scripts (they run with PYTHONDONTWRITEBYTECODE: nothing is written beside the sources);
- `configs/global_configs.py` and `configs/token_key_session.py`, which a fresh checkout lacks (they
  are git-ignored): the files the user names (DECATHLON_GLOBAL_CONFIGS, DECATHLON_TOKEN_KEY_SESSION),
  else the checkout's `*_example.py`. Never written into the checkout.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from decathlon.errors import InfraError, Kind
from decathlon.sandbox.taskdef import SPLIT, TaskDef

CONFIG_MODULES = {"global_configs.py": "DECATHLON_GLOBAL_CONFIGS", "token_key_session.py": "DECATHLON_TOKEN_KEY_SESSION"}
COPIED = ("configs", "tasks")


def _copy_config_modules(configs: Path) -> dict[str, str]:
    """Where each config module came from, for the session record."""
    origin = {}
    for name, variable in sorted(CONFIG_MODULES.items()):
        named = os.environ.get(variable)
        target = configs / name
        if named:
            path = Path(named)
            if not path.is_file():
                raise InfraError(Kind.BAD_CONFIG, f"{variable}={named}: no such file (it names the {name} to use)")
            shutil.copyfile(path, target)
            origin[name] = variable
        elif target.is_file():
            origin[name] = "checkout"
        elif (configs / name.replace(".py", "_example.py")).is_file():
            shutil.copyfile(configs / name.replace(".py", "_example.py"), target)
            origin[name] = "example"
    return origin


def make(task: TaskDef, dest: Path) -> tuple[TaskDef, dict[str, str]]:
    """The episode's root at `dest`, and the task as seen from it."""
    source = task.source
    if dest.exists():  # an earlier episode's, in a reused home
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for entry in sorted(source.iterdir()):
        if entry.name in COPIED or entry.name.startswith(".git"):
            continue
        (dest / entry.name).symlink_to(entry)
    tasks = dest / "tasks" / SPLIT
    tasks.mkdir(parents=True)
    # Loose files of tasks/ and tasks/finalpool/ (an __init__.py, say) keep their import meaning.
    for folder, copy in ((source / "tasks", dest / "tasks"), (source / "tasks" / SPLIT, tasks)):
        for f in sorted(folder.iterdir()):
            if f.is_file():
                shutil.copy2(f, copy / f.name)
    try:
        shutil.copytree(task.dir, tasks / task.name, symlinks=True)
        if (source / "configs").is_dir():
            shutil.copytree(source / "configs", dest / "configs", symlinks=True)
        else:
            (dest / "configs").mkdir()
    except OSError as exc:
        raise InfraError(Kind.TASK_COPY_FAILED, f"could not copy task {task.name} for this episode: {exc}") from None
    origin = _copy_config_modules(dest / "configs")
    return TaskDef(name=task.name, source=dest, config=task.config), origin
