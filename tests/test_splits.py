"""Deterministic train/test splits and the difficulty curriculum: the functions, the CLI, the taskset."""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from conftest import MINI, REPO
from decathlon.training.curriculum import load_pass_rates, order_by_difficulty
from decathlon.errors import InfraError
from decathlon.training.splits import DEFAULT_RATIO, add_split_arguments, apply_split_and_curriculum, split_tasks

NAMES = [f"task-{i:03d}" for i in range(108)]
# sha256 of "\n".join(train) for NAMES with the default ratio and seed: a change of the algorithm (or of
# anything a machine could vary) moves every training set made so far, so it has to show here first.
TRAIN_DIGEST = "4d8dbd0c1b192df0b9848f809daedef3e952197ac5e7cf9f503886e6ac7fa97e"
MINI_TASKS = {"contacts-dedupe", "csv-sales-summary", "excel-grade-report", "git-release-notes", "project-deadlines"}


# ------------------------------------------------------------------------------------------- the split

def test_train_and_test_partition_the_tasks_80_28() -> None:
    train, test = split_tasks(NAMES, "train"), split_tasks(NAMES, "test")
    assert (len(train), len(test)) == (80, 28)
    assert not set(train) & set(test) and set(train) | set(test) == set(NAMES)
    assert train == sorted(train) and test == sorted(test)
    assert split_tasks(NAMES, "all") == NAMES


def test_the_split_is_pinned() -> None:
    assert hashlib.sha256("\n".join(split_tasks(NAMES, "train")).encode()).hexdigest() == TRAIN_DIGEST


@pytest.mark.parametrize("seed", range(5))
def test_the_split_does_not_depend_on_task_order(seed: int) -> None:
    shuffled = list(NAMES)
    random.Random(seed).shuffle(shuffled)
    for split in ("train", "test"):
        assert split_tasks(shuffled, split) == split_tasks(NAMES, split)


def test_ratio_and_seed_choose_the_split() -> None:
    assert len(split_tasks(NAMES, "train", 0.5)) == 54
    assert split_tasks(NAMES, "train", seed="other") != split_tasks(NAMES, "train")
    # Both sides stay non-empty however small the ratio or the task list.
    assert len(split_tasks(NAMES, "test", 0.999)) == 1 and len(split_tasks(NAMES, "train", 0.001)) == 1
    assert split_tasks(["only"], "train") == ["only"] and split_tasks(["only"], "test") == []
    assert split_tasks([], "train") == [] == split_tasks([], "test")
    assert DEFAULT_RATIO == 80 / 108


@pytest.mark.parametrize("ratio", [0, 1, -0.1, 1.5, float("nan")])
def test_a_ratio_outside_0_1_is_a_usage_error(ratio: float) -> None:
    with pytest.raises(InfraError) as exc:
        split_tasks(NAMES, "train", ratio)
    assert exc.value.kind == "usage" and "strictly between 0 and 1" in exc.value.message
    assert "--split-ratio" in exc.value.message


def test_an_unknown_split_is_a_usage_error() -> None:
    with pytest.raises(InfraError) as exc:
        split_tasks(NAMES, "dev")
    assert exc.value.kind == "usage" and "'dev'" in exc.value.message and "train" in exc.value.message


def test_apply_split_keeps_named_tasks_of_the_split_in_their_order() -> None:
    parser = argparse.ArgumentParser()
    add_split_arguments(parser)
    ns = parser.parse_args(["--split", "test"])
    test = split_tasks(NAMES, "test")
    named = [test[3], split_tasks(NAMES, "train")[0], test[1]]
    assert apply_split_and_curriculum(NAMES, ns, named) == [test[3], test[1]]
    assert apply_split_and_curriculum(NAMES, ns) == test


# --------------------------------------------------------------------------------------- the curriculum

def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_report_json_averages_pass_at_1_over_runs(tmp_path: Path) -> None:
    report = {"note": "...", "runs": [
        {"label": "a", "pass@1": {"mean": 0.5}, "tasks": [{"task": "x", "pass@1": 1.0}, {"task": "y", "pass@1": 0.0},
                                                          {"task": "z", "pass@1": None}]},
        {"label": "b", "tasks": [{"task": "x", "pass@1": 0.5}, {"task": "z", "pass@1": None}]}]}
    assert load_pass_rates(_write(tmp_path / "r.json", json.dumps(report))) == {"x": 0.75, "y": 0.0}


def test_plain_json_and_csv_rates(tmp_path: Path) -> None:
    assert load_pass_rates(_write(tmp_path / "r.json", '{"x": 1, "y": 0.25}')) == {"x": 1.0, "y": 0.25}
    assert load_pass_rates(_write(tmp_path / "r.CSV", "task,pass_rate,note\nx,0.5,hi\ny,1,\n")) == {"x": 0.5, "y": 1.0}


def test_a_results_folder_is_read_by_the_report(tmp_path: Path) -> None:
    recorded = tmp_path / "recorded"
    recorded.mkdir()
    for task, passed in (("x", True), ("y", False)):
        _write(recorded / f"{task}.json", json.dumps({"pass": passed, "messages": []}))
    assert load_pass_rates(recorded) == {"x": 1.0, "y": 0.0}
    run = tmp_path / "run"
    for task, passed, infra in (("x", True, None), ("y", False, None), ("z", None, {"kind": "k", "message": "m"})):
        (run / task).mkdir(parents=True)
        _write(run / task / "result.json", json.dumps({"task": task, "reward": float(bool(passed)), "pass": passed,
                                                       "infra_error": infra}))
    assert load_pass_rates(run) == {"x": 1.0, "y": 0.0}  # infra errors are no evidence


@pytest.mark.parametrize("name,text,cause", [
    ("r.yaml", "x: 1\n", "unknown format '.yaml'"),
    ("r", "{}", "unknown format '(no extension)'"),
    ("r.json", "{not json", "not readable JSON"),
    ("r.json", "[1, 2]", "JSON of another shape"),
    ("r.json", '{"x": "high"}', "JSON of another shape"),
    ("r.json", '{"x": 1.5}', "not a number in [0, 1]"),
    ("r.json", '{"x": NaN}', "not a number in [0, 1]"),
    ("r.json", "{}", "rates no task"),
    ("r.json", '{"runs": [{"tasks": [{"task": "x"}]}, {"label": "no tasks"}]}', "without a \"tasks\" list"),
    ("r.json", '{"runs": [{"tasks": [{"task": "x", "pass@1": "1"}]}]}', "numeric or null \"pass@1\""),
    ("r.csv", "name,rate\nx,1\n", "lacks the columns task and pass_rate"),
    ("r.csv", "task,pass_rate\nx,high\n", "line 2: pass_rate 'high' is not a number"),
    ("r.csv", "task,pass_rate\nx,1\nx,0\n", "appears twice"),
    ("r.csv", "task,pass_rate\nx,-0.5\n", "not a number in [0, 1]"),
])
def test_a_bad_curriculum_is_a_usage_error_naming_file_and_formats(tmp_path: Path, name: str, text: str,
                                                                   cause: str) -> None:
    path = _write(tmp_path / name, text)
    with pytest.raises(InfraError) as exc:
        load_pass_rates(path)
    assert exc.value.kind == "usage" and str(path) in exc.value.message and cause in exc.value.message
    assert "`decathlon report --json` output" in exc.value.message and "task,pass_rate" in exc.value.message


def test_a_missing_path_or_empty_folder_is_a_usage_error(tmp_path: Path) -> None:
    for path in (tmp_path / "nowhere.json", tmp_path):
        with pytest.raises(InfraError) as exc:
            load_pass_rates(path)
        assert exc.value.kind == "usage" and str(path) in exc.value.message


def test_order_easiest_first_ties_by_name_unrated_last() -> None:
    rates = {"b": 0.5, "a": 0.5, "c": 1.0, "d": 0.0, "elsewhere": 1.0}
    assert order_by_difficulty(["z", "d", "a", "y", "b", "c"], rates) == ["c", "a", "b", "d", "y", "z"]
    assert order_by_difficulty([], rates) == []


# ------------------------------------------------------------------------------------------------ the CLI

def _tasks(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "decathlon", "tasks", "--source", str(MINI), *args],
                          capture_output=True, text=True, timeout=120, cwd=REPO)


def test_cli_split_partitions_the_mini_tasks() -> None:
    ids = {}
    for split in ("train", "test"):
        proc = _tasks("--split", split, "--json")
        assert proc.returncode == 0, proc.stderr
        ids[split] = [t["id"] for t in json.loads(proc.stdout)]
    assert (len(ids["train"]), len(ids["test"])) == (4, 1)
    assert not set(ids["train"]) & set(ids["test"]) and set(ids["train"]) | set(ids["test"]) == MINI_TASKS
    assert ids["test"] == split_tasks(sorted(MINI_TASKS), "test")
    table = _tasks("--split", "test")
    assert table.returncode == 0 and "1 tasks (test split)" in table.stdout and ids["test"][0] in table.stdout


def test_cli_curriculum_orders_the_listing(tmp_path: Path) -> None:
    rates = _write(tmp_path / "rates.csv", "task,pass_rate\ngit-release-notes,1\ncsv-sales-summary,0.5\n")
    proc = _tasks("--curriculum", str(rates), "--json")
    assert proc.returncode == 0, proc.stderr
    assert [t["id"] for t in json.loads(proc.stdout)] == ["git-release-notes", "csv-sales-summary", "contacts-dedupe",
                                                          "excel-grade-report", "project-deadlines"]


def test_cli_bad_ratio_and_curriculum_are_clear_errors(tmp_path: Path) -> None:
    proc = _tasks("--split", "train", "--split-ratio", "1.5")
    assert proc.returncode == 2 and "strictly between 0 and 1" in proc.stderr and "Traceback" not in proc.stderr
    proc = _tasks("--curriculum", str(_write(tmp_path / "rates.txt", "x 1")))
    assert proc.returncode == 2 and "unknown format '.txt'" in proc.stderr and "Traceback" not in proc.stderr


# ---------------------------------------------------------------------------------------- the taskset

def _taskset_tasks(**config: object) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the local backend's isolation warning (also on import)
        from decathlon.training.env import DecathlonTaskset, DecathlonTasksetConfig
        return [task.data.task for task in DecathlonTaskset(DecathlonTasksetConfig(**config))]


def test_taskset_loads_each_split_and_they_partition() -> None:
    train, test = _taskset_tasks(split="train"), _taskset_tasks(split="test")
    assert train == split_tasks(sorted(MINI_TASKS), "train") and test == split_tasks(sorted(MINI_TASKS), "test")
    assert not set(train) & set(test) and set(train) | set(test) == MINI_TASKS == set(_taskset_tasks())
    assert _taskset_tasks(split="train", tasks=[test[0], train[1], train[0]]) == [train[1], train[0]]
    assert len(_taskset_tasks(split="train", split_ratio=0.5, split_seed=3)) == 2


def test_taskset_curriculum_is_the_dataset_order(tmp_path: Path) -> None:
    rates = _write(tmp_path / "rates.json", '{"project-deadlines": 0.9, "excel-grade-report": 0.1}')
    assert _taskset_tasks(curriculum=str(rates)) == ["project-deadlines", "excel-grade-report", "contacts-dedupe",
                                                     "csv-sales-summary", "git-release-notes"]


def test_taskset_bad_knobs_are_clear_errors(tmp_path: Path) -> None:
    from pydantic import ValidationError
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from decathlon.training.env import DecathlonTasksetConfig
    for ratio in (0, 1, -0.1, 1.5):
        with pytest.raises(ValidationError, match="strictly between 0 and 1"):
            DecathlonTasksetConfig(split_ratio=ratio)
    with pytest.raises(ValidationError, match="'all', 'train' or 'test'"):
        DecathlonTasksetConfig(split="dev")
    with pytest.raises(ValueError, match=r"--env.taskset.curriculum: .*unknown format '\.yaml'"):
        _taskset_tasks(curriculum=str(_write(tmp_path / "rates.yaml", "x: 1")))
