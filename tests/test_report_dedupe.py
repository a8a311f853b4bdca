"""`decathlon report` counts each episode once: a folder named twice (D D, D D/, a link to D), or recorded
runs beside their own import, gives the figures of the folder alone, and says what it did not count again."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _report(*args: str, cwd: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "decathlon", "report", *args, "--json"], capture_output=True,
                          text=True, cwd=cwd, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _figures(report: dict) -> list[tuple]:
    return [(r["label"], r["passed"], r["graded"], r["k"], r["pass@1"]["mean"], len(r["pass@1"]["per_repeat"]))
            for r in report["runs"]]


@pytest.fixture
def run_folder(tmp_path: Path) -> Path:
    """A `decathlon run --out D` folder of two tasks, one passed."""
    d = tmp_path / "D"
    for task, passed in (("alpha", True), ("beta", False)):
        (d / task).mkdir(parents=True)
        (d / task / "result.json").write_text(json.dumps({
            "task": task, "repeat": 1, "reward": float(passed), "pass": passed, "metrics": {}, "infra_error": None,
            "failure": None, "timings": {"setup": 0.1}, "turns": 2, "tool_calls": 1, "status": "success",
            "run": {"source": "/src/mini", "source_name": "mini", "policy": "oracle", "backend": "local", "mode": "live"}}))
    return d


@pytest.mark.parametrize("again", ["D", "D/", "link", "./D"])
def test_a_folder_named_twice_is_counted_once(run_folder: Path, again: str):
    (run_folder.parent / "link").symlink_to(run_folder)
    alone = _report("D", cwd=run_folder.parent)
    twice = _report("D", again, cwd=run_folder.parent)
    assert _figures(twice) == _figures(alone)
    assert _figures(alone)[0][1:4] == (1, 2, 1)  # 1/2 over one repeat: Pass@1, no Pass@2
    assert len(twice["duplicates"]) == 1 and "counted once" in twice["duplicates"][0]


def test_recorded_runs_beside_their_import_are_counted_once(tmp_path: Path):
    rec = tmp_path / "rec"
    rec.mkdir()
    for task, passed in (("alpha", True), ("beta", False)):
        (rec / f"{task}.json").write_text(json.dumps({"pass": passed, "messages": [
            {"role": "user", "content": "do it"}, {"role": "assistant", "content": "done"}]}))
    proc = subprocess.run([sys.executable, "-m", "decathlon", "cassettes", "import-trajectories", "rec", "--out", "imp"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    alone = _report("rec", cwd=tmp_path)
    for pair in (("rec", "imp"), ("imp", "rec")):
        both = _report(*pair, cwd=tmp_path)
        assert _figures(both) == _figures(alone), pair
        assert len(both["duplicates"]) == 1, both["duplicates"]
