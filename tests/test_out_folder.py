"""`decathlon run --out DIR` over a folder that holds a run: refused unless --resume or --overwrite; an
interrupted run's report states its missing episodes, and --resume completes it to the figures of an
uninterrupted run."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import LAUNCH, MINI, REPO

TASKS = ["csv-sales-summary", "contacts-dedupe"]


def decathlon(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "decathlon", *args], capture_output=True, text=True, timeout=600,
                          cwd=REPO)


def run(out: Path, *extra: str, policy: str = "oracle") -> subprocess.CompletedProcess:
    return decathlon("run", *TASKS, "--source", str(MINI), "--policy", policy, "--repeats", "2",
                     "--launch-time", LAUNCH, "--out", str(out), *extra)


def figures(out: Path) -> tuple[list, list]:
    proc = decathlon("report", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    runs = json.loads(proc.stdout)["runs"]
    return ([(r["label"], r["passed"], r["graded"], r["k"], r["pass@1"], r["pass@k"], r["pass^k"]) for r in runs],
            [m for r in runs for m in r["missing"]])


def test_an_interrupted_run_is_reported_short_and_resume_completes_it(tmp_path: Path):
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert run(whole).returncode == 0
    assert run(cut).returncode == 0
    # Killed before two episodes ended: they left no result.
    for lost in (cut / "contacts-dedupe" / "repeat-2", cut / "csv-sales-summary" / "repeat-1"):
        (lost / "result.json").unlink()
    short, missing = figures(cut)
    assert sorted(m.split(": ")[-1] for m in missing) == ["contacts-dedupe #2", "csv-sales-summary #1"]
    said = decathlon("report", str(cut))
    assert "2 of 4 planned episodes have no result" in " ".join(said.stdout.split()), said.stdout
    assert short != figures(whole)[0]

    again = run(cut)  # the same command again: refused, naming the ways on
    assert again.returncode != 0 and "--resume" in again.stderr and "--overwrite" in again.stderr, again.stderr

    resumed = decathlon("run", "--resume", "--out", str(cut), "--source", str(MINI), "--policy", "oracle")
    assert resumed.returncode == 0, resumed.stderr
    assert "2 of 4 planned episodes are done" in resumed.stderr
    assert figures(cut) == (figures(whole)[0], [])


def test_resume_refuses_another_run_and_overwrite_replaces(tmp_path: Path):
    out = tmp_path / "D"
    assert run(out).returncode == 0
    other = decathlon("run", "--resume", "--out", str(out), "--source", str(MINI), "--policy", "null")
    assert other.returncode != 0 and "policy 'oracle' (now 'null')" in other.stderr, other.stderr
    replaced = run(out, "--overwrite", policy="null")
    assert replaced.returncode == 0, replaced.stderr
    (only,), missing = figures(out)  # one run, not a mixed folder
    assert "null" in only[0] and missing == []
