"""What a task starts from that lived in an account at a vendor (a public template spreadsheet its preprocess copies
from the authors' Drive), whether a library of seed packs holds it, and capturing it from a live account.

Read from the task's own preprocess code, whatever checkout it is given, through each emulated vendor's `seeds`
(decathlon.emulators.vendor.SeedSource): nothing of a particular checkout is written here. A library is the one
`decathlon run --seeds LIB` takes (decathlon.core.seeds): `LIB/<task>/<emulator>/…` in the emulator's snapshot
format, here the files a resource needs, each the vendor's own answer to a read-only request, as captured.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from decathlon.emulators import registry
from decathlon.emulators.vendor import SeedSource, Vendor
from decathlon.errors import InfraError, Kind
from decathlon.sandbox import taskdef

_SCANNED_LIMIT = 2 * 1024 * 1024  # per file: task scripts are small


@dataclass(frozen=True)
class Need:
    """One resource a task starts from, where its code names it."""

    task: str
    emulator: str
    source: SeedSource
    resource: str  # the resource's id at the vendor
    file: str  # relative to the checkout's root
    line: int

    def paths(self) -> tuple[str, ...]:
        """The pack's files that hold it, relative to the task's folder of the library."""
        return tuple(f"{self.emulator}/{p}" for p in self.source.paths(self.resource))

    def label(self) -> str:
        return f"the {self.source.kind} {self.resource} ({self.file}:{self.line})"


@dataclass(frozen=True)
class Found:
    need: Need
    missing: tuple[str, ...]  # the pack files the library lacks

    @property
    def present(self) -> bool:
        return not self.missing


def _sources(vendors: tuple[Vendor, ...] | None) -> list[tuple[str, SeedSource, re.Pattern[str]]]:
    return [(v.name, s, re.compile(s.pattern)) for v in (vendors or registry.vendors()) for s in v.seeds]


def needs(root: Path, task: str, vendors: tuple[Vendor, ...] | None = None) -> list[Need]:
    """The resources `task`'s preprocess names, each once (where it is first named), in the order of the files."""
    preprocess = root / "tasks" / taskdef.SPLIT / task / "preprocess"
    sources = _sources(vendors)
    found: dict[tuple[str, str, str], Need] = {}
    for path in sorted(preprocess.rglob("*.py")) if sources and preprocess.is_dir() else []:
        try:
            if not path.is_file() or path.stat().st_size > _SCANNED_LIMIT:
                continue
            text = path.read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        for emulator, source, pattern in sources:
            for m in pattern.finditer(text):
                key = (emulator, source.kind, m.group(1))
                found.setdefault(key, Need(task, emulator, source, m.group(1), path.relative_to(root).as_posix(),
                                           text.count("\n", 0, m.start()) + 1))
    return list(found.values())


def check(pack: Path | None, wanted: list[Need]) -> list[Found]:
    """Each need of one task against its pack (`LIB/<task>`, or setup's copy of it; None: no pack, all missing)."""
    return [Found(need, tuple(p for p in need.paths() if pack is None or not (pack / p).is_file())) for need in wanted]


def capture_command(task: str, library: Path | None) -> str:
    return f"decathlon seeds capture --source CHECKOUT --task {task} --out {library or 'LIB'} --token-file TOKEN"


def require(task: str, pack: Path | None, wanted: list[Need]) -> None:
    """Setup's check, before anything starts: a need no pack brings ends the episode with seed_missing, naming it
    and the command that captures it."""
    missing = [f for f in check(pack, wanted) if not f.present]
    if not missing:
        return
    where = f"its seed pack lacks {', '.join(missing[0].missing)}" if pack is not None else \
        "no seed pack was given for it (run --seeds LIB, with LIB/<task>/…)"
    names = "; ".join(f.need.label() for f in missing)
    raise InfraError(Kind.SEED_MISSING, f"{task} starts from what lived in the task authors' account and is in no "
                     f"checkout: {names}; {where}. Capture it once where the network and an account are: "
                     f"{capture_command(task, None)} (then run with --seeds LIB)")
