"""What every recorded-run fidelity test shares: the replay of the recorded runs (skipped, saying why, where they are
not here) with its summary printed, and the check it ends with: no replayed call disagrees but the listed known gaps,
a listed gap that agrees again comes off the list, and every call set aside says why."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from recorded_runs import TRAJECTORIES, require_runs

from decathlon.emulators.fidelity import report


def replayed(emulator: str, replay: Callable[..., list[Any]], **options: Any) -> list[Any]:
    require_runs()
    cases = replay(TRAJECTORIES, **options)
    print("\n" + report.summary(emulator, cases))
    return cases


def assert_only_known_gaps(cases: list[Any], gaps: dict[str, str]) -> None:
    disagreed = {c.exchange.name: c.diff() or c.how for c in cases if c.verdict == "disagreed"}
    unknown = {k: v for k, v in disagreed.items() if k not in gaps}
    assert not unknown, "\n\n".join(f"{k}\n{v}" for k, v in unknown.items())
    healed = sorted(set(gaps) - set(disagreed))
    assert not healed, f"listed as known gaps but agree now (take them off the list): {healed}"
    unexplained = [c.exchange.name for c in cases if c.verdict == "cannot-rebuild" and not c.how]
    assert not unexplained, unexplained
