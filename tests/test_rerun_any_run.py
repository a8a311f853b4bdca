"""Reruns of any model's runs (issue 31, item 6), without a sandbox: the launch time an import reads from a run's own
outputs (decathlon/recordings/launch_evidence.py) and its override, masked identifiers translated to the episode's
own (decathlon/recordings/id_translation.py), and the frozen clock reaching the agent's own processes
(decathlon/sandbox/clock.py, python-execute). The episodes themselves: tests/test_rerun_dates.py."""
from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from datetime import datetime

import pytest

from conftest import REPO
from decathlon.errors import InfraError
from decathlon.recordings.id_translation import IdTranslator, unmask
from decathlon.recordings.importer import IMPORT_LAUNCH_TIME, import_dir
from decathlon.recordings.launch_evidence import infer, parse_override
from decathlon.sandbox.clock import AgentClock, frozen_env, libfaketime
from decathlon.tape.store import load

RUNS = REPO / "fixtures" / "recorded-runs"
TASK = "bq-daily-leaderboard"


def run_of(*steps: tuple[str, dict | str, str]) -> list[dict]:
    """A recorded conversation: (tool, arguments, what it answered) per call."""
    messages: list[dict] = [{"role": "user", "content": "do it"}]
    for i, (tool, args, shown) in enumerate(steps):
        raw = args if isinstance(args, str) else json.dumps(args)
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": tool, "arguments": raw}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": shown})
    return messages


def text(t: str) -> str:
    return json.dumps({"type": "text", "text": t, "annotations": None})


def py(code: str, stdout: str) -> tuple[str, dict, str]:
    return ("local-python-execute", {"code": code},
            f"=== STDOUT ===\n{stdout}\n=== EXECUTION INFO ===\nReturn code: 0\nExecution time: 0.01 seconds")


DEFAULT = "2025-10-17 00:00:00"


# ------------------------------------------------------------------ the launch time, read from the run's outputs

def test_the_evaluators_own_launch_time_comes_first_even_printed_letter_by_letter():
    calls = run_of(("terminal-run_command", {"command": "date"}, text("Sat Oct 18 09:00:00 UTC 2025\n")))
    got = infer(calls, "Checking...\nLaunch time from command line: 2 0 2 5 - 1 0 - 2 1   1 3 : 0 7 : 4 8   T u e s d a y",
                DEFAULT)
    assert (got.launch_time, got.source) == ("2025-10-21 13:07:48 Tuesday", "evaluator")
    assert got.also == {"date": "2025-10-18"}  # the disagreement is in the report
    got = infer([], "['--launch_time', '2025-10-17 23:24:01 Friday']", DEFAULT)
    assert got.launch_time == "2025-10-17 23:24:01 Friday" and got.evidence[0].call is None


def test_a_shell_date_is_read_but_not_a_date_it_was_given():
    got = infer(run_of(("terminal-run_command", {"command": "cd /w && date"}, text("Fri Oct 17 23:24:01 UTC 2025\n"))),
                None, DEFAULT)
    assert (got.launch_time, got.source, got.evidence[0].call) == ("2025-10-17 23:24:01 Friday", "date", 1)
    got = infer(run_of(("terminal-run_command", {"command": "date +%Y-%m-%d"}, text("2025-10-20\n"))), None, DEFAULT)
    assert got.launch_time == "2025-10-20 00:00:00 Monday"  # the day alone: its midnight, before any call
    given = run_of(("terminal-run_command", {"command": "date -d '2024-01-01'"}, text("Mon Jan  1 00:00:00 UTC 2024")))
    assert infer(given, None, DEFAULT).source == "default"


def test_agent_code_that_reads_the_clock_counts_where_it_labels_what_it_printed():
    got = infer(run_of(py("from datetime import datetime\nprint('Today:', datetime.now().date())", "Today: 2025-10-19"),
                       py("from datetime import datetime\nprint(f\"Campaign Date: {datetime.now():%B %d, %Y at %H:%M:%S}\")",
                          "Campaign Date: October 19, 2025 at 23:34:57")), None, DEFAULT)
    assert (got.launch_time, got.source) == ("2025-10-19 23:34:57 Sunday", "date")
    assert [e.call for e in got.evidence] == [2] and got.note.startswith("2 reading(s)")  # both read that day
    # A date the code was given, or one it guessed, is not the clock.
    hard = run_of(py("now = datetime(2025, 10, 17)\nprint('Today:', now)", "Today: 2025-10-17 00:00:00"),
                  py("x = datetime.now()\nprint('Current date (estimated): 2025-10-16')", "Current date (estimated): 2025-10-16"),
                  py("x = datetime.now()\nprint(rows)", "Order 12 placed 2025-10-03, paid 2025-10-04"))
    assert infer(hard, None, DEFAULT).source == "default"


def test_a_query_that_selects_the_current_date_counts_not_one_that_filters_on_it():
    got = infer(run_of(("snowflake-read_query", {"query": "SELECT CURRENT_DATE() as TODAY"},
                        text("type: data\ndata:\n- TODAY: '2025-10-23'\n"))), None, DEFAULT)
    assert (got.launch_time, got.source) == ("2025-10-23 00:00:00 Thursday", "sql")
    bq = run_of(("google-cloud-bigquery_run_query", {"query": "SELECT CURRENT_DATE() AS today"},
                 text("Row 1: {'today': datetime.date(2026, 3, 2)}")))
    assert infer(bq, None, DEFAULT).launch_time.startswith("2026-03-02")
    filtered = run_of(("snowflake-read_query", {"query": "SELECT ID, CREATED_AT FROM T WHERE CREATED_AT < CURRENT_TIMESTAMP()"},
                       text("- ID: 1\n  CREATED_AT: '2025-10-14 10:00:00'\n- ID: 2\n  CREATED_AT: '2025-10-15 11:00:00'")))
    assert infer(filtered, None, DEFAULT).source == "default"


def test_creation_times_count_from_what_the_run_created_and_read_back_never_from_other_reads():
    made = run_of(("canvas-canvas_create_conversation", {"subject": "hi"},
                   text('[{"id": 1, "created_at": "2025-10-17T23:02:30Z", "messages": '
                        '[{"created_at": "2025-10-17T23:02:31Z"}, {"created_at": "2025-09-01T08:00:00Z"}]}]')))
    got = infer(made, None, DEFAULT)
    # the old message beside the new one is outside the window of the run's own objects
    assert (got.launch_time, got.source) == ("2025-10-17 23:02:30 Friday", "created")
    read_back = run_of(
        ("google-cloud-bigquery_run_query", {"query": "CREATE OR REPLACE TABLE `g.leaderboard_20251017` AS SELECT 1 AS x"},
         text("Query executed successfully.")),
        ("google-cloud-bigquery_run_query", {"query": "SELECT table_name, creation_time AS created_at FROM x"},
         text("Row 1: {'table_name': 'leaderboard_20251017', 'created_at': datetime.datetime(2025, 10, 17, 22, 59, 14, "
              "481000, tzinfo=datetime.timezone.utc)}\nRow 2: {'table_name': 'scores', 'created_at': "
              "datetime.datetime(2025, 10, 1, 8, 0, tzinfo=datetime.timezone.utc)}")))
    got = infer(read_back, None, DEFAULT)
    assert (got.launch_time, got.evidence[0].call) == ("2025-10-17 22:59:14 Friday", 2)
    only_reads = run_of(("notion-API-post-search", {"query": "x"}, text('{"created_time": "2025-10-15T10:00:00.000Z"}')),
                        ("github-get_issue", {"issue": 3}, text('{"created_at": "2025-10-16T10:00:00Z"}')))
    assert infer(only_reads, None, DEFAULT).source == "default"


def test_a_more_explicit_kind_wins_and_an_offset_is_converted_to_utc():
    calls = run_of(("canvas-canvas_create_quiz", {"title": "q"}, text('{"created_at": "2025-10-18T01:00:00+02:00"}')),
                   ("snowflake-read_query", {"query": "SELECT CURRENT_TIMESTAMP() AS NOW_TS"},
                    text("- NOW_TS: 2025-10-17 23:10:00")))
    got = infer(calls, None, DEFAULT)
    # sql before created; the time of day: the earliest shown that day, the creation at 23:00 UTC
    assert (got.launch_time, got.source) == ("2025-10-17 23:00:00 Friday", "sql")


def test_without_evidence_the_default_stands_and_the_report_says_so():
    got = infer(run_of(("filesystem-read_file", {"path": "/w/a.csv"}, text("2024-01-05,Purchase,12.00"))), None, DEFAULT)
    assert (got.launch_time, got.source, got.evidence) == ("2025-10-17 00:00:00 Friday", "default", [])
    assert "no date" in got.note


def test_an_override_is_checked_like_a_launch_time():
    assert parse_override("t=2026-03-02 09:00:00") == ("t", "2026-03-02 09:00:00 Monday")
    with pytest.raises(ValueError):
        parse_override("2026-03-02")
    with pytest.raises(InfraError):
        parse_override("t=yesterday")


# ------------------------------------------------------------------ the import: our own runs made on two days

@pytest.mark.parametrize("day,at", [("2026-03-02", "2026-03-02 09:00:10 Monday"), ("2026-03-05", "2026-03-05 14:30:13 Thursday")])
def test_each_days_run_is_imported_at_its_own_day_and_says_from_what(day, at, tmp_path):
    report = import_dir(RUNS / day, tmp_path / "imp")
    launch = report["tasks"][TASK]["launch"]
    assert (launch["launch_time"], launch["from"]) == (at, "date")
    assert launch["evidence"][0]["tool"] == "local-python-execute" and launch["evidence"][0]["shown"].startswith("Now: ")
    assert launch["also"] == {"sql": day}  # CURRENT_DATE() said the same day
    meta = load(tmp_path / "imp" / "cassettes" / f"{TASK}.cassette.json")["meta"]
    assert meta["launch_time"] == at and meta["launch_evidence"]["from"] == "date"
    on_disk = json.loads((tmp_path / "imp" / "import-report.json").read_text())
    assert on_disk["tasks"][TASK]["launch"] == launch


def test_the_launch_time_is_overridden_per_task_from_the_command_line_or_a_file(tmp_path):
    def imported(*args: str) -> dict:
        out = tmp_path / f"imp{len(list(tmp_path.iterdir()))}"
        proc = subprocess.run([sys.executable, "-m", "decathlon", "cassettes", "import-trajectories",
                               str(RUNS / "2026-03-05"), "--out", str(out), *args],
                              capture_output=True, text=True, cwd=REPO, timeout=120)
        assert proc.returncode == 0, proc.stderr
        summary = json.loads(proc.stdout.splitlines()[-1])
        return {**summary, "launch": json.loads((out / "import-report.json").read_text())["tasks"][TASK]["launch"]}

    got = imported("--launch-time", f"{TASK}=2026-03-02 09:00:00")
    assert (got["launch"]["launch_time"], got["launch"]["from"]) == ("2026-03-02 09:00:00 Monday", "override")
    assert got["launch_time_from"] == {"override": 1} and got["launch_days"] == {"2026-03-02": 1}
    times = tmp_path / "times.json"
    times.write_text(json.dumps({TASK: "2026-03-04"}))
    assert imported("--launch-times", str(times))["launch"]["launch_time"] == "2026-03-04 00:00:00 Wednesday"
    with pytest.raises(InfraError, match="no run of"):
        import_dir(RUNS / "2026-03-05", tmp_path / "never", {"other-task": "2026-03-02"})
    assert not (tmp_path / "never").exists()


def test_a_run_without_evidence_is_imported_at_the_default_and_named(tmp_path):
    src = tmp_path / "runs"
    src.mkdir()
    (src / "quiet.json").write_text(json.dumps({"pass": False, "messages": run_of(
        ("filesystem-read_file", {"path": "/workspace/dumps/workspace/a.txt"}, text("hello")))}))
    proc = subprocess.run([sys.executable, "-m", "decathlon", "cassettes", "import-trajectories", str(src), "--out",
                           str(tmp_path / "imp")], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "quiet" in proc.stderr and IMPORT_LAUNCH_TIME in proc.stderr
    launch = json.loads((tmp_path / "imp" / "import-report.json").read_text())["tasks"]["quiet"]["launch"]
    assert (launch["launch_time"], launch["from"]) == (IMPORT_LAUNCH_TIME, "default")


# ------------------------------------------------------------------ masked identifiers

LISTED = text("Found 1 datasets:\n- woocommerce_crm (Project: t********n)")
LISTED_LIVE = text("Found 1 datasets:\n- woocommerce_crm (Project: decathlon-emulated)")
QUERY = json.dumps({"query": "SELECT * FROM `t********n.woocommerce_crm.new_customers` LIMIT 10"})


def test_a_mask_is_learnt_from_the_live_answer_in_its_place():
    ids = IdTranslator.for_recording([LISTED], [QUERY])
    assert ids.translate_arguments(QUERY) == QUERY  # nothing seen live yet: left as it is
    ids.learn(LISTED, LISTED_LIVE, "google-cloud-bigquery_list_datasets")
    assert json.loads(ids.translate_arguments(QUERY))["query"] == \
        "SELECT * FROM `decathlon-emulated.woocommerce_crm.new_customers` LIMIT 10"


def test_a_mask_stands_for_what_the_recordings_own_outputs_show_unmasked():
    info = text("Dataset Information for 'fixture_games':\nFull Name: toolathlon:fixture_games\nLocation: US")
    live = text("Dataset Information for 'fixture_games':\nFull Name: decathlon-emulated:fixture_games\nLocation: US")
    ids = IdTranslator.for_recording([info], [QUERY])
    assert ids.unmasked == {"t********n": "toolathlon"}
    ids.learn(info, live)
    assert "`decathlon-emulated.woocommerce_crm" in ids.translate_arguments(QUERY)
    # two values of that shape: which one it stands for cannot be told
    assert unmask([info, "Project: tablespoon"], ["t********n"]) == {}


def test_a_replay_translates_no_mask_and_task_data_masked_to_digits_is_no_mask():
    ids = IdTranslator.for_recording([LISTED], [QUERY])
    ids.learn(LISTED, LISTED)  # a replay: the live answer is the recorded one
    assert not ids.active and ids.translate_arguments(QUERY) == QUERY
    card = text("card: ****-2841 phone: 138****1234")
    ids = IdTranslator.for_recording([card])
    ids.learn(card, text("card: 4111-2841 phone: 13800001234"))
    assert ids.aliases == {}


def test_a_mask_seen_with_two_live_values_is_not_translated():
    ids = IdTranslator()
    ids.learn(text("Owner: a*****z\n"), text("Owner: alice_z\n"))
    ids.learn(text("Owner: a*****z\n"), text("Owner: andrez\n"))
    assert ids.translate_arguments(json.dumps({"who": "a*****z"})) == json.dumps({"who": "a*****z"})


# ------------------------------------------------------------------ the agent's own processes read the frozen clock

def test_the_agent_clock_ticks_on_from_the_launch_time():
    clock = AgentClock.start({"FAKETIME": "@2026-03-02 09:00:00", "LD_PRELOAD": "lib", "FAKETIME_DONT_RESET": "1"})
    assert clock is not None and AgentClock.start({}) is None
    assert clock.now_env(clock.origin + 3725)["FAKETIME"] == "@2026-03-02 10:02:05"
    assert AgentClock.from_json(json.loads(json.dumps(clock.to_json()))) == clock
    assert AgentClock.from_json(None) is None


def test_python_execute_sees_the_frozen_clock(tmp_path):
    try:
        libfaketime()
    except InfraError as exc:
        pytest.skip(exc.message)
    from decathlon.sandbox.local_tools.base import Context
    from decathlon.sandbox.local_tools.python_exec import PYTHON_EXECUTE
    code = "from datetime import datetime\nprint(datetime.now().date())"
    frozen = Context(tmp_path, clock=AgentClock.start(frozen_env("2026-03-02 09:00:00")))
    out = asyncio.run(PYTHON_EXECUTE.run({"code": code}, frozen))
    assert "2026-03-02" in out.text, out.text
    free = asyncio.run(PYTHON_EXECUTE.run({"code": code}, Context(tmp_path)))
    assert datetime.now().date().isoformat() in free.text, free.text


def test_the_recorded_runs_are_ours_and_unchanged_by_the_import(tmp_path):
    """The runs in fixtures/recorded-runs are our own fixture task's (fixtures/recorded-runs/make.py made them); an
    import keeps each answer as the exact text the model was shown."""
    for day in ("2026-03-02", "2026-03-05"):
        run = json.loads((RUNS / day / f"{TASK}.json").read_text())
        out = tmp_path / day
        import_dir(RUNS / day, out)
        kept = json.loads((out / "cassettes" / f"{TASK}.trajectory.json").read_text())["messages"]
        assert [m.get("content") for m in kept] == [m.get("content") for m in run["messages"]]
        shutil.rmtree(out)
