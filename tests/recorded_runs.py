"""The recorded Toolathlon runs the suites replay: where they are, and their import (once per session).

The runs are third-party data read at run time from $DECATHLON_TRAJECTORIES (default:
../shared/data/toolathlon/trajectories/claude-4.5-sonnet beside the checkout), never committed.
Without them these tests skip, saying how to get them — except where DECATHLON_REQUIRE_TRAJECTORIES=1
(`.ci/run` sets it), where their absence fails.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import REPO
from decathlon.recordings.importer import import_dir

TRAJECTORIES = Path(os.environ.get("DECATHLON_TRAJECTORIES")
                    or REPO.parent / "shared" / "data" / "toolathlon" / "trajectories" / "claude-4.5-sonnet")
REQUIRED = os.environ.get("DECATHLON_REQUIRE_TRAJECTORIES") == "1"
HOW = (f"no recorded Toolathlon runs at {TRAJECTORIES}: set DECATHLON_TRAJECTORIES to a folder of <task>.json runs "
       "(the Toolathlon-Trajectories dataset by hkust-nlp, CC-BY-4.0; this workplace has them in "
       "shared/data/toolathlon/trajectories/claude-4.5-sonnet)")
TASKS = sorted(p.stem for p in TRAJECTORIES.glob("*.json")) if TRAJECTORIES.is_dir() else []


def require_runs() -> None:
    """The recorded runs are here: else the test skips, saying how to get them, or fails where CI requires them."""
    if not TASKS:
        pytest.fail(HOW) if REQUIRED else pytest.skip(HOW)


def import_runs(tmp_path_factory) -> Path:
    """Every recorded run imported as a task source (cassettes, trajectories, recorded verdicts)."""
    require_runs()
    out = tmp_path_factory.mktemp("imported")
    import_dir(TRAJECTORIES, out)
    return out
