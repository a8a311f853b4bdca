"""Deterministic train/test splits of a source's tasks, shared by the CLI and the verifiers taskset.

A task's place comes from sha256(seed NUL name) alone, so the split is the same on every machine, in
every Python, whatever order the tasks are listed in. The first round(n * ratio) tasks of that ranking
are train, the rest test; the split is a function of the whole task set, so give it every task of the
source and narrow to named tasks afterwards (`apply_split_and_curriculum`'s `named`).
"""
from __future__ import annotations

import argparse
import hashlib
import math
from pathlib import Path
from typing import Protocol

from decathlon.training.curriculum import load_pass_rates, order_by_difficulty
from decathlon.errors import InfraError, Kind

# 80 train / 28 test of Toolathlon's 108 tasks.
DEFAULT_RATIO = 80 / 108
DEFAULT_SEED = "decathlon"
SPLITS = ("all", "train", "test")


class SplitOptions(Protocol):
    """What the split needs: the CLI's parsed flags and the taskset config both have these."""

    split: str
    split_ratio: float
    split_seed: str
    curriculum: Path | None


def ratio_problem(ratio: float) -> str | None:
    """Why `ratio` cannot be a train share, or None if it can."""
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or math.isnan(ratio) or not 0 < ratio < 1:
        return (f"the split ratio must be strictly between 0 and 1 (the share of tasks in the train split, "
                f"default {DEFAULT_RATIO:.4f} = 80/108), not {ratio!r}")
    return None


def _rank(name: str, seed: str) -> str:
    return hashlib.sha256(f"{seed}\0{name}".encode()).hexdigest()


def split_tasks(names: list[str], split: str, ratio: float = DEFAULT_RATIO, seed: str = DEFAULT_SEED) -> list[str]:
    """The tasks of `names` in `split` ("train", "test" or "all"), sorted by name."""
    if split not in SPLITS:
        raise InfraError(Kind.USAGE, f"unknown split {split!r}: use one of {', '.join(SPLITS)}")
    problem = ratio_problem(ratio)
    if problem:
        raise InfraError(Kind.USAGE, f"{problem}: pass e.g. --split-ratio 0.8")
    unique = sorted(set(names))
    if split == "all":
        return unique
    ranked = sorted(unique, key=lambda name: (_rank(name, str(seed)), name))
    n_train = round(len(ranked) * ratio)
    if len(ranked) >= 2:  # both splits non-empty: a split with nothing to evaluate is never what was meant
        n_train = min(max(n_train, 1), len(ranked) - 1)
    chosen = ranked[:n_train] if split == "train" else ranked[n_train:]
    return sorted(chosen)


def add_split_arguments(parser: argparse.ArgumentParser) -> None:
    """--split, --split-ratio, --split-seed and --curriculum, the same on every subcommand."""
    parser.add_argument("--split", choices=SPLITS, default="all",
                        help="only the train or the test tasks of the deterministic split (default: all)")
    parser.add_argument("--split-ratio", type=float, default=DEFAULT_RATIO, metavar="FLOAT",
                        help="the share of tasks in the train split, in (0, 1) (default 80/108: 80 train, 28 test "
                        "of the 108 Toolathlon tasks)")
    parser.add_argument("--split-seed", default=DEFAULT_SEED, metavar="STR",
                        help=f"the seed of the split (default {DEFAULT_SEED!r}); another seed, another split")
    parser.add_argument("--curriculum", type=Path, metavar="FILE|DIR",
                        help="order the tasks easiest first by earlier pass rates: `decathlon report --json` "
                        "output, a {task: rate} JSON object, a CSV with columns task,pass_rate, or a results folder")


def apply_split_and_curriculum(names: list[str], ns: SplitOptions, named: list[str] | None = None) -> list[str]:
    """The tasks to run: `names` (every task of the source: the split is defined over them) cut to
    `ns.split`; if `named` is given, only those of them, in `named`'s order; then, with a curriculum,
    easiest first."""
    chosen = split_tasks(names, ns.split, ns.split_ratio, ns.split_seed)
    if named is not None:
        inside = set(chosen)
        chosen = [name for name in named if name in inside]
    if ns.curriculum is not None:
        chosen = order_by_difficulty(chosen, load_pass_rates(Path(ns.curriculum)))
    return chosen
