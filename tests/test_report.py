"""`decathlon report` and `decathlon run --repeats`: Pass@k numbers, pooled repeats, recorded runs, bad input,
and conflict groups serialising live episodes."""
from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import pytest

from browser import report_page
from conftest import REPO
from decathlon.training import conflicts
from decathlon.errors import InfraError
from decathlon.reports.report import build_report, pass_at_k, pass_hat_k, pass_rates, trajectory
from recorded_runs import REQUIRED, TASKS, TRAJECTORIES, HOW, import_runs

MINI = REPO / "fixtures" / "toolathlon-mini"
CLI = [sys.executable, "-m", "decathlon"]
LAUNCH = "2026-03-02 09:00:00"


def _cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout)


def _result(task: str, passed: bool | None, repeat: int = 1, infra: bool = False, policy: str = "oracle",
            source: str = "pack", turns: int = 4, calls: int = 3) -> dict:
    return {"task": task, "repeat": repeat, "reward": 1.0 if passed else 0.0, "pass": None if infra else passed,
            "metrics": {}, "infra_error": {"kind": "preprocess_failed", "message": "x", "phase": "setup"} if infra
            else None, "failure": None, "timings": {"setup": 1.0, "agent": 2.0, "evaluate": 0.5},
            "turns": turns, "tool_calls": calls, "status": "success",
            "run": {"source": f"/x/{source}", "source_name": source, "policy": policy, "backend": "local",
                    "mode": "live"}}


def _write_run(folder: Path, rows: list[dict], repeats: int = 1) -> Path:
    for r in rows:
        sub = folder / r["task"] / (f"repeat-{r['repeat']}" if repeats > 1 else "")
        sub.mkdir(parents=True, exist_ok=True)
        (sub / "result.json").write_text(json.dumps(r), encoding="utf-8")
    return folder


# ------------------------------------------------------------------------------------------ estimators

def _brute(n: int, c: int, k: int, every: bool) -> float:
    """Over every k-subset of n episodes (c of them passing): the share where any (or every) one passes."""
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(combinations(outcomes, k))
    return sum((all if every else any)(s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n,c,k", [(3, 0, 3), (3, 3, 3), (5, 2, 3), (10, 7, 3), (6, 1, 1), (4, 2, 2)])
def test_pass_at_k_and_pass_hat_k_are_the_unbiased_estimators(n: int, c: int, k: int) -> None:
    assert math.isclose(pass_at_k(n, c, k), _brute(n, c, k, every=False))
    assert math.isclose(pass_hat_k(n, c, k), _brute(n, c, k, every=True))


def test_fewer_episodes_than_k_have_no_estimate() -> None:
    assert pass_at_k(2, 1, 3) is None and pass_hat_k(2, 2, 3) is None


# ------------------------------------------------------------------------------------------ the report

def test_repeats_infra_errors_and_the_overall_numbers(tmp_path: Path) -> None:
    rows = [_result("a", True, 1), _result("a", True, 2), _result("a", False, 3),
            _result("b", False, 1), _result("b", None, 2), _result("b", True, 3, infra=True)]
    run = build_report([_write_run(tmp_path / "r", rows, repeats=3)])["runs"][0]
    a, b = run["tasks"]
    assert (a["pass@1"], a["graded"], a["infra_errors"]) == (pytest.approx(2 / 3), 3, 0)
    assert a["pass@k"] == 1.0 and a["pass^k"] == 0.0
    # b: one infra error, excluded from every rate; a turn-capped run (pass null) counts as not passed
    assert (b["pass@1"], b["graded"], b["infra_errors"], b["pass@k"]) == (0.0, 2, 1, None)
    assert run["k"] == 3 and run["tasks_short_of_k"] == 1
    assert run["pass@1"]["per_repeat"] == [0.5, 0.5, 0.0]  # repeat 3: only a was graded, and failed
    assert run["pass@1"]["mean"] == pytest.approx(1 / 3)
    assert run["pass@1"]["std"] == pytest.approx(0.288675, abs=1e-6)
    assert (run["passed"], run["graded"], run["infra_errors"], run["episodes"]) == (2, 5, 1, 6)
    assert run["pass@k"] == 1.0  # over the tasks with k graded episodes: a alone
    assert run["timings"]["setup"] == {"median": 1.0, "mean": 1.0}
    assert "excluded from every rate" in build_report([tmp_path / "r"])["note"]


def test_a_metric_is_averaged_over_the_episodes_that_report_it_not_diluted_by_the_others(tmp_path: Path) -> None:
    """Issue 23, item 10: one task defines row_accuracy, four do not; every task passes."""
    rows = [{**_result("a", True), "metrics": {"row_accuracy": 1.0}}] + [_result(t, True) for t in "bcde"]
    run = build_report([_write_run(tmp_path / "r", rows)])["runs"][0]
    assert run["metrics"] == {"row_accuracy": {"mean": 1.0, "episodes": 1, "of": 5}}
    assert run["tasks"][0]["metrics"] == {"row_accuracy": 1.0} and run["tasks"][1]["metrics"] == {}
    text = _cli("report", str(tmp_path / "r"), "--summary").stdout
    assert "metrics row_accuracy 1.00 (1 of 5 episodes)" in text


def test_folders_of_one_run_pool_as_repeats_and_other_runs_stand_beside(tmp_path: Path) -> None:
    one = _write_run(tmp_path / "one", [_result("a", True), _result("b", False)])
    two = _write_run(tmp_path / "two", [_result("a", False), _result("b", False)])
    other = _write_run(tmp_path / "null", [_result("a", False, policy="null"), _result("b", False, policy="null")])
    rep = build_report([one, two, other])
    pooled, null = rep["runs"]
    assert pooled["k"] == 2 and pooled["pass@1"]["per_repeat"] == [0.5, 0.0] and pooled["pass@k"] == 0.5
    assert [r["repeat"] for r in pooled["tasks"][0]["runs"]] == [1, 2]
    assert null["policy"] == "null" and null["pass@1"]["mean"] == 0.0


def test_a_folder_mixing_runs_of_different_sources_is_refused_naming_both(tmp_path: Path) -> None:
    folder = _write_run(tmp_path / "mixed", [_result("a", True, source="pack"), _result("b", True, source="other")])
    with pytest.raises(InfraError) as err:
        build_report([folder])
    assert err.value.kind == "mixed_results"
    assert "source pack" in err.value.message and "source other" in err.value.message
    assert "own --out folder" in err.value.message


def test_an_empty_folder_and_a_missing_one_say_what_a_report_reads(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for path, kind in ((tmp_path / "empty", "no_results"), (tmp_path / "absent", "usage")):
        with pytest.raises(InfraError) as err:
            build_report([path])
        assert err.value.kind == kind and "result.json" in err.value.message


def test_a_truncated_result_file_is_named_and_skip_broken_reports_without_it(tmp_path: Path) -> None:
    folder = _write_run(tmp_path / "r", [_result("a", True), _result("b", True)])
    text = (folder / "b" / "result.json").read_text()
    (folder / "b" / "result.json").write_text(text[: len(text) // 2])
    with pytest.raises(InfraError) as err:
        build_report([folder])
    assert err.value.kind == "bad_results" and "b/result.json" in err.value.message
    assert "--skip-broken" in err.value.message
    run = build_report([folder], skip_broken=True)["runs"][0]
    assert [t["task"] for t in run["tasks"]] == ["a"] and len(run["skipped"]) == 1
    (folder / "run.json").write_text('{"source": ')  # the run's description, cut short, is named too
    with pytest.raises(InfraError) as err:
        build_report([folder])
    assert "run.json" in err.value.message and "2 result file(s)" in err.value.message


def test_the_cli_reports_bad_input_as_an_error_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    p = _cli("report", str(tmp_path / "empty"))
    assert p.returncode == 2 and "holds no results" in p.stderr and "Traceback" not in p.stderr


def test_recorded_runs_report_like_the_recorded_verdicts(tmp_path_factory) -> None:
    if not TASKS:
        pytest.fail(HOW) if REQUIRED else pytest.skip(HOW)
    verdicts = {p.stem: json.loads(p.read_bytes()).get("pass") for p in TRAJECTORIES.glob("*.json")}
    passed = sum(1 for v in verdicts.values() if v is True)
    for folder in (TRAJECTORIES, import_runs(tmp_path_factory)):
        run = build_report([folder])["runs"][0]
        assert run["kind"] == "recorded" and run["graded"] == len(verdicts) and run["passed"] == passed
        assert run["pass@1"]["mean"] == pytest.approx(passed / len(verdicts), abs=1e-6)
        assert {t["task"]: t["passed"] == 1 for t in run["tasks"]} == {k: v is True for k, v in verdicts.items()}
    assert pass_rates([TRAJECTORIES]) == {k: 1.0 if v is True else 0.0 for k, v in sorted(verdicts.items())}
    first = sorted(TRAJECTORIES.glob("*.json"))[0]
    assert trajectory(str(first))["messages"] == json.loads(first.read_bytes())["messages"]


def test_report_over_the_recorded_claude_runs_prints_pass_at_1(tmp_path: Path) -> None:
    if not TASKS:
        pytest.fail(HOW) if REQUIRED else pytest.skip(HOW)
    p = _cli("report", str(TRAJECTORIES), "--summary")
    assert p.returncode == 0, p.stderr
    passed = sum(1 for f in TRAJECTORIES.glob("*.json") if json.loads(f.read_bytes()).get("pass") is True)
    assert f"Pass@1 {passed / len(TASKS):.2f} ({passed}/{len(TASKS)})" in p.stdout
    assert "excluded from every rate" in p.stdout


# ------------------------------------------------------------------------------ runs with repeats (CLI)

@pytest.mark.slow
@pytest.mark.parametrize("policy,rate", [("oracle", "1.00"), ("null", "0.00")])
def test_mini_pack_with_three_repeats_reports_pass_at_1_pass_at_3_and_pass_hat_3(tmp_path: Path, policy: str,
                                                                                rate: str) -> None:
    out = tmp_path / "run"
    p = _cli("run", "--all", "--source", str(MINI), "--policy", policy, "--repeats", "3", "--out", str(out),
             "--launch-time", LAUNCH, "--json")
    assert p.returncode == 0, p.stderr[-3000:]
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert sorted((r["task"], r["repeat"]) for r in rows) == sorted((t, i) for t in {r["task"] for r in rows}
                                                                   for i in (1, 2, 3))
    assert len({r["task"] for r in rows}) == 5
    assert all((out / r["task"] / f"repeat-{r['repeat']}" / "result.json").is_file() for r in rows)
    rep = _cli("report", str(out))
    assert rep.returncode == 0, rep.stderr
    assert f"Pass@1 {rate} ± 0.00 (" in rep.stdout and f"Pass@3 {rate}, Pass^3 {rate}" in rep.stdout
    data = json.loads(_cli("report", str(out), "--json").stdout)["runs"][0]
    assert data["k"] == 3 and data["episodes"] == 15 and data["infra_errors"] == 0
    assert data["pass@1"]["per_repeat"] == [float(rate)] * 3
    # the same numbers on the results page, in a real browser
    page_file = tmp_path / "page.html"
    assert _cli("report", str(out), "--html", str(page_file), "--summary").returncode == 0
    problems: list[str] = []
    with report_page(page_file.as_uri(), problems) as page:
        shown = page.locator('#overall tr[data-run="0"] td[data-metric="pass@1"]').inner_text()
        assert shown.startswith(f"{float(rate) * 100:.1f}% ± 0.0"), shown
        assert page.locator("tr.task").count() == 5
    assert not problems, problems


def test_repeats_below_one_are_a_usage_error() -> None:
    p = _cli("run", "--all", "--source", str(MINI), "--repeats", "0")
    assert p.returncode == 2 and "--repeats" in p.stderr


# ---------------------------------------------------------------------------------------- conflicts

def test_conflict_groups_are_read_in_the_checkouts_format_and_joined_where_they_share_a_task(tmp_path: Path) -> None:
    pack = REPO / "fixtures" / "toolathlon-conventions"
    groups = conflicts.load_groups(pack)
    assert groups and len(set(groups.values())) == 1 and set(groups) <= {p.name for p in
                                                                           (pack / "tasks/finalpool").iterdir()}
    root = tmp_path / "tasks" / "finalpool"
    root.mkdir(parents=True)
    (root / "task_conflict.json").write_text(json.dumps({"conflict_groups": [["a", "b"], ["c", "d"], ["b", "e"]]}))
    assert conflicts.load_groups(tmp_path) == {"a": "a,b,e", "b": "a,b,e", "c": "c,d", "d": "c,d", "e": "a,b,e"}
    (root / "task_conflict.json").write_text(json.dumps({"conflict_groups": "a,b"}))
    with pytest.raises(InfraError) as err:
        conflicts.load_groups(tmp_path)
    assert err.value.kind == "bad_source" and "conflict_groups" in err.value.message


@pytest.mark.slow
def test_two_tasks_of_one_conflict_group_never_overlap_with_real_saas(tmp_path: Path) -> None:
    source = tmp_path / "pack"
    shutil.copytree(MINI, source, symlinks=True)
    group = ["contacts-dedupe", "csv-sales-summary"]
    (source / "tasks" / "finalpool" / "task_conflict.json").write_text(json.dumps({"conflict_groups": [group]}))
    out = tmp_path / "run"
    p = _cli("run", "--all", "--source", str(source), "--policy", "oracle", "--repeats", "2", "--concurrency", "4",
             "--out", str(out), "--launch-time", LAUNCH, "--json", "--saas", "real")
    assert p.returncode == 0, p.stderr[-3000:]
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    results = [json.loads(f.read_text()) for f in sorted(out.glob("*/repeat-*/result.json"))]
    assert len(results) == len(rows) == 10
    held = sorted((r["started"], r["finished"], r["task"]) for r in results if r["task"] in group)
    assert len(held) == 4
    for (s1, f1, t1), (s2, f2, t2) in zip(held, held[1:]):
        assert f1 <= s2, f"{t1} [{s1}, {f1}] overlaps {t2} [{s2}, {f2}]"
    assert all(r.get("conflict_group") == ",".join(group) for r in results if r["task"] in group)
    assert not any("conflict_group" in r for r in results if r["task"] not in group)
    rep = json.loads(_cli("report", str(out), "--json").stdout)["runs"][0]
    assert rep["conflicts"] and rep["conflicts"][0]["group"] == ",".join(group)
    assert rep["conflicts"][0]["waited_episodes"] >= 1
    text = _cli("report", str(out), "--summary").stdout
    assert "conflict group contacts-dedupe + csv-sales-summary" in text


def test_emulated_saas_holds_no_conflict_group(tmp_path: Path) -> None:
    """Each episode has its own emulated accounts: the checkout's conflict groups guard shared real ones only."""
    source = tmp_path / "pack"
    shutil.copytree(MINI, source, symlinks=True)
    group = ["contacts-dedupe", "csv-sales-summary"]
    (source / "tasks" / "finalpool" / "task_conflict.json").write_text(json.dumps({"conflict_groups": [group]}))
    p = _cli("run", *group, "--source", str(source), "--policy", "oracle", "--concurrency", "2", "--launch-time",
             LAUNCH, "--json")
    assert p.returncode == 0, p.stderr[-3000:]
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert sorted(r["task"] for r in rows) == sorted(group)
    assert not any("conflict_group" in r for r in rows)


def test_replay_needs_no_conflict_lock(tmp_path: Path) -> None:
    async def check() -> None:
        groups = {"a": "a,b", "b": "a,b"}
        async with conflicts.hold(groups, "a", live=False) as one:
            async with conflicts.hold(groups, "b", live=False) as two:  # would deadlock if it locked
                assert one.group is None and two.group is None
        async with conflicts.hold(groups, "a", live=True) as held:
            assert held.group == "a,b" and held.waited == 0.0
    import asyncio
    asyncio.run(asyncio.wait_for(check(), 5))


def test_verifiers_rollouts_of_one_conflict_group_hold_their_sandboxes_one_at_a_time(tmp_path: Path) -> None:
    """With real SaaS accounts, the taskset's episodes take the group at acquire and give it back at release,
    whatever path."""
    import asyncio

    from decathlon.training.vf_episode import Episode

    source = tmp_path / "pack"
    shutil.copytree(MINI, source, symlinks=True)
    group = ["contacts-dedupe", "csv-sales-summary"]
    (source / "tasks" / "finalpool" / "task_conflict.json").write_text(json.dumps({"conflict_groups": [group]}))
    log: list[tuple[str, str]] = []

    async def rollout(task: str, hold_for: float) -> None:
        ep = Episode(task, source, "local", 10, saas="real")
        await ep.acquire(f"vf-{task}")
        log.append(("in", task))
        await asyncio.sleep(hold_for)
        log.append(("out", task))
        await ep.release()
        await ep.release()  # idempotent: the group is not given back twice

    async def main() -> None:
        await asyncio.gather(rollout(group[0], 0.5), rollout(group[1], 0.0), rollout("project-deadlines", 0.0))

    asyncio.run(asyncio.wait_for(main(), 120))
    inside = [(what, task) for what, task in log if task in group]
    assert inside == [("in", group[0]), ("out", group[0]), ("in", group[1]), ("out", group[1])]
    # a task outside the group did not wait for it
    assert log.index(("in", "project-deadlines")) < log.index(("out", group[0]))


# --------------------------------------------------------------- the real checkout (TOOLATHLON_ROOT; never in CI)

@pytest.mark.checkout
def test_the_checkouts_conflict_groups_and_its_split() -> None:
    import os
    root = os.environ.get("TOOLATHLON_ROOT")
    if not root:
        pytest.fail("set TOOLATHLON_ROOT to an unmodified Toolathlon checkout to run the checkout tests")
    groups = conflicts.load_groups(Path(root))
    assert len(set(groups.values())) == 3 and len(groups) == 6
    assert groups["woocommerce-product-recall"] == "woocommerce-customer-survey,woocommerce-product-recall"
    sizes = []
    for split in ("train", "test"):
        p = _cli("tasks", "--source", root, "--split", split, "--json")
        assert p.returncode == 0, p.stderr
        sizes.append({t["id"] for t in json.loads(p.stdout)})
    train, test = sizes
    assert (len(train), len(test)) == (80, 28) and not train & test
    # the manifest's 108 tasks split alike: a checkout and an import of it train on the same tasks
    manifest = json.loads(_cli("tasks", "--source", "toolathlon-manifest", "--split", "train", "--json").stdout)
    assert {t["id"] for t in manifest} == train
