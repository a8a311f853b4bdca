"""The differential's report: per emulator, how many replayed calls agreed (and how they were judged), disagreed
(each with its diff) or could not be rebuilt (each with why)."""
from __future__ import annotations

from collections import Counter
from typing import Any, Protocol


class Judged(Protocol):
    verdict: str
    how: str

    @property
    def exchange(self) -> Any: ...

    def diff(self) -> str: ...


def summary(emulator: str, cases: list[Any]) -> str:
    verdicts = Counter(c.verdict for c in cases)
    hows = Counter(c.how for c in cases if c.verdict == "agreed")
    by = ", ".join(f"{n} by {how}" for how, n in sorted(hows.items()))
    return (f"{emulator}: {len(cases)} recorded calls; agreed {verdicts['agreed']} ({by or 'none'}), "
            f"disagreed {verdicts['disagreed']}, cannot rebuild {verdicts['cannot-rebuild']}")


def text(emulator: str, cases: list[Any], *, verbose: bool = False) -> str:
    lines = [summary(emulator, cases)]
    for c in cases:
        if c.verdict == "disagreed":
            lines.append(f"\nDISAGREED {c.exchange.name} ({c.how})\n{c.diff()}")
    for c in cases:
        if c.verdict == "cannot-rebuild":
            lines.append(f"cannot rebuild {c.exchange.name}: {c.how}")
    if verbose:
        lines.extend(f"agreed {c.exchange.name} ({c.how})" for c in cases if c.verdict == "agreed")
    return "\n".join(lines)
