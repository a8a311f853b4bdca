"""Seed packs from the host (`decathlon run --seeds DIR`): DIR is a library of them, one folder per task
(`DIR/<task>/<emulator>/…`, each emulator's pack in its snapshot format: decathlon.emulators.kit.state). A task
with a folder there gets it in its sandbox, in the episode's state folder (root's alone: the agent never reads it),
and `task-api setup --seeds` loads each pack into its emulator before the preprocess runs (decathlon/sandbox/seeds.py).
A task without a folder starts as it would without --seeds.

The library is checked once, before any sandbox: a task folder that names no emulator, a symlink, or a pack over the
bounds below is said at the start, not as one infra error per episode."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from decathlon.backends.base import Sandbox
from decathlon.errors import InfraError, Kind
from decathlon.sandbox import seeds as sandbox_seeds

IN_SANDBOX = "state/seeds"  # relative to the episode's home, as setup reads it
MAX_FILES = 10_000
MAX_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Pack:
    """One task's seeds: its emulators' folders and every file under them, relative to the task's folder."""

    task: str
    folder: Path
    emulators: list[str]
    files: list[str]
    size: int


def _pack(folder: Path, task: str) -> Pack:
    emulators = sandbox_seeds.emulators(folder)  # the names are the registry's, said as setup would say them
    files: list[str] = []
    size = 0
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            raise InfraError(Kind.SEED_FAILED, f"--seeds: {folder / rel} is a symlink; a seed pack holds plain files")
        if path.is_dir():
            continue
        if not path.is_file():
            raise InfraError(Kind.SEED_FAILED, f"--seeds: {folder / rel} is not a plain file")
        if "/" not in rel:
            raise InfraError(Kind.SEED_FAILED, f"--seeds: {folder / rel} lies beside the emulators' folders; each "
                             f"file belongs in one (DIR/{task}/<emulator>/…)")
        files.append(rel)
        size += path.stat().st_size
        if len(files) > MAX_FILES or size > MAX_BYTES:
            raise InfraError(Kind.SEED_FAILED, f"--seeds: {folder} holds more than {MAX_FILES} files or "
                             f"{MAX_BYTES // 2**20} MiB; a seed pack is a task's starting state, not a data set")
    return Pack(task, folder, emulators, files, size)


def library(root: Path, tasks: list[str]) -> dict[str, Pack]:
    """The packs of `tasks` that `root` holds, each checked; tasks without a folder are not in the answer."""
    if not root.is_dir():
        raise InfraError(Kind.SEED_FAILED, f"--seeds {root}: not a folder (a library of seed packs: "
                         "DIR/<task>/<emulator>/…)")
    wanted = set(tasks)
    strays = sorted(p.name for p in root.iterdir() if p.is_dir() and p.name not in wanted)
    packs = {t: _pack(root / t, t) for t in sorted(wanted) if (root / t).is_dir()}
    if not packs:
        named = f" (it has folders for {', '.join(strays[:5])}, which this run does not run)" if strays else ""
        raise InfraError(Kind.SEED_FAILED, f"--seeds {root}: no folder for any task of this run{named}")
    return packs


async def upload(sandbox: Sandbox, pack: Pack, episode_id: str) -> str:
    """The task's packs into the sandbox, in a folder of this episode's own (a pooled sandbox's home may hold an
    earlier episode's); the path `task-api setup --seeds` takes."""
    where = f"{IN_SANDBOX}/{episode_id}"
    for rel in pack.files:
        await sandbox.put_file(f"{where}/{rel}", (pack.folder / rel).read_bytes())
    return where
