"""The Cloud Logging emulator against Cloud Logging's own recorded answers (decathlon.emulators.fidelity.gcplogging):
every recorded run's `google-cloud-logging_*` calls replayed in order through the real google-cloud-mcp tools on a
fresh emulator seeded with what the run showed, each answer compared with the recorded one. The runs are read where
they lie, never copied. The rebuild rules are also checked on runs of our own making."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fidelity_gaps import assert_only_known_gaps, replayed
from recorded_runs import require_runs
from saas_venv import SERVERS, require

from decathlon.emulators.fidelity import gcplogging, known_gaps
from decathlon.emulators.fidelity.recorded import Exchange


def _servers() -> None:
    require(SERVERS / "saas" / "bin" / "python", "`python ci/install_servers.py` builds the SaaS virtualenv")
    require(SERVERS / "google-cloud" / "bin" / "python", "`python ci/install_servers.py` installs google-cloud-mcp")


@pytest.fixture(scope="module")
def cases() -> list[gcplogging.Case]:
    require_runs()
    _servers()
    return replayed("gcplogging", gcplogging.replay, servers=SERVERS)


def test_sinks_writes_and_reads_of_the_shared_project_are_cloud_loggings(cases: list[gcplogging.Case]) -> None:
    """The authors' project's sinks list as Cloud Logging listed them (its own by name, then _Required, _Default);
    the runs' writes and new sink answer as it did; reads of a named log give its entries, the run's own writes
    standing where Cloud Logging had them."""
    judged = [c for c in cases if c.verdict != "cannot-rebuild"]
    tools = {c.exchange.tool.removeprefix(gcplogging.PREFIX) for c in judged}
    assert {"list_log_sinks", "write_log", "read_logs", "create_log_sink"} <= tools, tools
    entries = [c for c in judged if c.how.startswith("entries")]
    assert len(entries) >= 4, [c.exchange.name for c in entries]
    wrong = {c.exchange.name: c.diff() for c in judged
             if c.verdict != "agreed" and c.exchange.name not in known_gaps.GCPLOGGING}
    assert not wrong, wrong


def test_no_replayed_call_disagrees_but_the_known_gaps(cases: list[gcplogging.Case]) -> None:
    assert_only_known_gaps(cases, known_gaps.GCPLOGGING)


# ---- the rebuild rules, on runs of our own making --------------------------------------------------------------

P = gcplogging.PREFIX
PROJECT = "t********n"  # as the recorder masks the authors' project
SINKS = (f"Found 3 log sinks:\n- orders_sink\n  Destination: logging.googleapis.com/projects/{PROJECT}/locations/"
         f"global/buckets/orders-b1\n  Filter: severity=\"ERROR\"\n- _Required\n  Destination: logging.googleapis.com/"
         f"projects/{PROJECT}/locations/global/buckets/_Required\n  Filter: LOG_ID(\"x\")\n- _Default\n  Destination: "
         f"logging.googleapis.com/projects/{PROJECT}/locations/global/buckets/_Default\n  Filter: NOT LOG_ID(\"x\")\n")
PINNED = {"log_filter": f'logName="projects/{PROJECT}/logs/orders-b1"', "max_entries": 5}
WROTE = "Successfully wrote log entry to 'orders-b1' with severity 'ERROR'"


def _entries(*lines: tuple[str, str]) -> str:
    return f"Found {len(lines)} log entries:\n" + "".join(f"[{t}+00:00] {s}: No message\n" for t, s in lines)


BEFORE = ("2025-10-21T09:00:00.000001", "ERROR")
OLDER = ("2025-10-21T08:00:00.000002", "WARNING")
OWN = ("2025-10-21T13:00:00.000003", "ERROR")
# google-cloud-logging adds a diagnostic entry (a JSON payload, no severity: the server prints "None: No message")
# to the first batch a process writes, at the same time; Cloud Logging keeps it.
DIAGNOSTIC = (OWN[0], "None")


def _run(*calls: tuple[str, dict[str, Any], str]) -> list[Exchange]:
    return [Exchange("t", i, P + tool, args, answer) for i, (tool, args, answer) in enumerate(calls)]


def _calls() -> list[Exchange]:
    return _run(("list_log_sinks", {}, SINKS),
                ("read_logs", PINNED, _entries(BEFORE, OLDER)),
                ("write_log", {"log_name": "orders-b1", "message": "late", "severity": "ERROR"}, WROTE),
                ("write_log", {"log_name": "other", "message": "x"},
                 "Access denied: Log 'other' is not in allowed log buckets list"),
                ("read_logs", PINNED, _entries(OWN, DIAGNOSTIC, BEFORE, OLDER)),
                ("read_logs", {"max_entries": 5}, "No log entries found matching the filter criteria"),
                ("list_logs", {}, "Access restricted to 1 log bucket(s):\n\nLog Bucket: orders-b1\n"))


def test_the_newest_times_of_a_log_are_the_runs_own_writes_and_the_rest_are_seeded() -> None:
    seen = gcplogging.rebuild(_calls())
    assert seen.own == {OWN[0] + "+00:00"}
    assert [(e.log, e.timestamp, e.severity) for _, e in sorted(seen.entries.items())] == [
        ("orders-b1", OLDER[0] + "+00:00", "WARNING"), ("orders-b1", BEFORE[0] + "+00:00", "ERROR")]
    assert seen.allowed == ["orders-b1"]
    assert [s["name"] for s in seen.sinks] == ["orders_sink", "_Required", "_Default"]
    assert seen.buckets == ["orders-b1"]  # the built-in buckets are the emulator's own


def test_what_the_run_does_not_show_cannot_be_rebuilt() -> None:
    calls = _calls()
    seen = gcplogging.rebuild(calls)
    verdicts = {c.exchange.index: (c.verdict, c.how) for c in (gcplogging.judge(ex, "", seen) for ex in calls)}
    assert verdicts[3] == ("cannot-rebuild", gcplogging.BY_ALLOW_LIST)
    assert verdicts[5] == ("cannot-rebuild", gcplogging.UNPINNED)
    assert verdicts[6][0] == "cannot-rebuild" and "another build" in verdicts[6][1]


def test_a_sink_the_run_made_itself_is_not_seeded() -> None:
    made = ("create_log_sink", {"sink_name": "orders_sink", "destination": "d"},
            "Successfully created log sink 'orders_sink' to destination 'd'")
    assert [s["name"] for s in gcplogging.rebuild(_run(made, ("list_log_sinks", {}, SINKS))).sinks] == \
        ["_Required", "_Default"]


def test_a_read_is_judged_line_by_line_with_the_replays_own_times_for_the_runs() -> None:
    calls = _calls()
    seen = gcplogging.rebuild(calls)
    read = calls[4]
    now = ("2026-11-28T15:00:00.000009", "ERROR")
    diagnostic = (now[0], "None")
    assert gcplogging.judge(read, _entries(now, diagnostic, BEFORE, OLDER), seen).verdict == "agreed"
    assert gcplogging.judge(read, _entries(OWN, DIAGNOSTIC, BEFORE, OLDER), seen).verdict == "agreed"
    assert gcplogging.judge(read, _entries(BEFORE, diagnostic, now, OLDER), seen).verdict == "disagreed"  # moved
    assert gcplogging.judge(read, _entries((now[0], "INFO"), diagnostic, BEFORE, OLDER), seen).verdict == "disagreed"
    assert gcplogging.judge(read, _entries(now, BEFORE, OLDER), seen).verdict == "disagreed"
    assert gcplogging.judge(calls[2], WROTE.replace("ERROR", "INFO"), seen).verdict == "disagreed"


def _write_run(folder: Path, calls: list[tuple[str, dict[str, Any], str]]) -> Path:
    messages: list[dict[str, Any]] = []
    for i, (tool, args, answer) in enumerate(calls):
        messages.append({"role": "assistant", "tool_calls": [
            {"id": f"c{i}", "function": {"name": P + tool, "arguments": json.dumps(args)}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": answer})
    path = folder / "logging-task.json"
    path.write_text(json.dumps({"pass": True, "messages": messages}))
    return path


def test_a_run_of_our_own_replays_through_the_real_server_and_agrees(tmp_path: Path) -> None:
    """End to end: the seed (sinks, bucket, entries with their times) written through the API, the run's calls
    through google-cloud-mcp's own tools; a recorded answer the emulator does not give disagrees."""
    _servers()
    calls = [(e.tool.removeprefix(P), e.arguments, e.answer) for e in _calls()]
    got = gcplogging.replay_runs([_write_run(tmp_path, calls)], servers=SERVERS)
    assert [c.verdict for c in got] == ["agreed", "agreed", "agreed", "cannot-rebuild", "agreed", "cannot-rebuild",
                                        "cannot-rebuild"], [c.diff() for c in got]
    calls[4] = (calls[4][0], calls[4][1], _entries(OWN, DIAGNOSTIC, OLDER, BEFORE))
    again = gcplogging.replay_runs([_write_run(tmp_path, calls)], servers=SERVERS)
    assert again[4].verdict == "disagreed"
