"""The Cloud Logging emulator against Cloud Logging's own recorded answers: each recorded run's `google-cloud-logging_*`
calls replayed in order through the real google-cloud-mcp tools (its own virtualenv, in-process: gcmcp_driver.py, as
for BigQuery) on a fresh Logging emulator of its own, seeded with what the run showed of the project it met, and each
answer compared with the one the model was shown.

The project the runs met is the benchmark authors' shared one (masked `t********n` by the recorder): its sinks and
buckets were made by other tasks' set-ups, and its logs hold entries of earlier runs. The task did not create them, but
they are the state the run met and the run's answers show them whole, so they are rebuilt and judged like any other:
- sinks: the run's first `list_log_sinks` (name, destination, filter of every sink, the project's built-in _Required
  and _Default among them), but for those the run creates itself;
- buckets: those a sink routes to (`logging.googleapis.com/projects/P/locations/global/buckets/B`; the built-in ones
  are the emulator's own), with the default 30 days' retention, so the run's own sinks to them are accepted;
- entries: the lines `[timestamp] SEVERITY: message` of the `read_logs` answers whose filter names their log
  (`logName="…/logs/L"`), but for the run's own writes, written through the API with their timestamps and severities.
  The server prints a text entry as "No message" (its payload is never shown), so a seeded entry's text is empty.
  The run's own writes are the newest k times of all the log's reads taken together (a read right after a write may
  not show it yet), k being the run's successful `write_log` calls to that log. The server's library
  (google-cloud-logging) adds a diagnostic entry, with no severity (printed "None: No message"), to the first batch
  its process writes, at the same time: it shares that own time;
- the server's configuration: its allowed-log list (the buckets a `list_logs` answer names) and its clock: the
  server's `read_logs` looks back 24 hours from `datetime.utcnow()`, which the driver sets to just after the latest
  time the run showed.

How an answer is judged (the project's id is masked on both sides):
- `read_logs`: the same header and the same lines, severity and message exactly; a line's time exactly where the
  emulated entry is a seeded one, while an entry the replay itself wrote (its time is the emulator's clock, now) stands
  for one of the run's own writes and must face one of their times;
- everything else by text (`list_log_sinks` in Cloud Logging's order: the project's own sinks by name, then
  _Required, _Default).
"Cannot rebuild", with why: a refusal by the server's allowed-log list (the run's configuration, not Cloud Logging's
answer: not replayed, as in the BigQuery tier); `list_logs` (the runs' server was another build of google-cloud-mcp:
its list_logs lists the allowed buckets and the sinks routed to them, the pinned 1.0.0's lists log names); a read no
logName pins (the server reads the project's newest entries, then keeps its allowed logs' ones: the answer hangs on
other logs' entries, which the run never sees); a read showing a JSON payload (printed as a Python repr).
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from decathlon.emulators.fidelity.bigquery import MASKED_PROJECT, PROJECT
from decathlon.emulators.fidelity.emulator import Emulator, drive, servers_dir
from decathlon.emulators.fidelity.recorded import Case as BaseCase, Exchange, exchanges

PREFIX = "google-cloud-logging_"
REFUSED = re.compile(r"^Access denied: .* is not in allowed log buckets list$")
WROTE = re.compile(r"^Successfully wrote log entry to '(.+)' with severity '(\w+)'$")
LINE = re.compile(r"^\[(\d{4}-\d\d-\d\dT[\d:.]+\+00:00)\] (\w+): (.*)$")
LOG_NAME = re.compile(r'logName\s*=\s*"projects/[^/"]+/logs/([^"]+)"')
ALLOWED = re.compile(r"^Log Bucket: (\S+)$", re.M)
SINK = re.compile(r"^- (.+)\n  Destination: (.*)\n  Filter: (.*)$", re.M)
BUCKET = re.compile(r"^logging\.googleapis\.com/projects/[^/]+/locations/global/buckets/([^/]+)$")
NOT_REPLAYED = {"list_logs": "the runs' server was another build of google-cloud-mcp: its list_logs lists the allowed "
                             "buckets and the sinks routed to them, the pinned 1.0.0's lists log names"}
UNPINNED = ("the server reads the project's newest entries, then keeps those of its allowed logs: a read no logName "
            "pins hangs on the other logs' entries, which the run never sees")
BY_ALLOW_LIST = "answered by the server's allowed-log list (the run's configuration), not by Cloud Logging"


class Case(BaseCase):
    def lines(self, text: str) -> list[str]:
        return masked(text).splitlines()


def masked(text: str) -> str:
    return MASKED_PROJECT.sub("<project>", text).replace(PROJECT, "<project>").strip()


def tool_of(ex: Exchange) -> str:
    return ex.tool.removeprefix(PREFIX)


def replayed(ex: Exchange) -> bool:
    return tool_of(ex) not in NOT_REPLAYED and not REFUSED.match(ex.answer)


@dataclass
class Entry:
    log: str
    timestamp: str  # as the server prints it (isoformat, +00:00)
    severity: str


@dataclass
class Seen:
    """What the run's answers showed of the project it met."""

    allowed: list[str] = field(default_factory=list)
    sinks: list[dict[str, str]] = field(default_factory=list)
    buckets: list[str] = field(default_factory=list)
    entries: dict[str, Entry] = field(default_factory=dict)  # by timestamp
    own: set[str] = field(default_factory=set)  # timestamps of the run's own writes
    unknown: dict[int, str] = field(default_factory=dict)  # call index → why its entries cannot be rebuilt

    def seed(self) -> dict[str, Any]:
        return {"buckets": [{"id": b, "retention_days": 30} for b in self.buckets],
                "sinks": [{"name": k["name"], "destination": MASKED_PROJECT.sub(PROJECT, k["destination"]),
                           "filter": MASKED_PROJECT.sub(PROJECT, k["filter"])} for k in self.sinks],
                "entries": [{"log": e.log, "timestamp": e.timestamp, "severity": e.severity}
                            for _, e in sorted(self.entries.items())]}


def read_lines(text: str) -> list[tuple[str, str, str]]:
    """A read_logs answer's entry lines: (timestamp, severity, message)."""
    return [(m.group(1), m.group(2), m.group(3)) for m in map(LINE.match, text.splitlines()) if m]


def rebuild(calls: list[Exchange]) -> Seen:
    seen = Seen()
    for ex in calls:
        seen.allowed += [b for b in ALLOWED.findall(ex.answer) if b not in seen.allowed] \
            if tool_of(ex) == "list_logs" else []
    written: dict[str, int] = {}  # log → the run's successful writes to it
    created: set[str] = set()
    for ex in calls:
        tool = tool_of(ex)
        if tool == "write_log" and (m := WROTE.match(ex.answer)):
            written[m.group(1)] = written.get(m.group(1), 0) + 1
        elif tool == "create_log_sink" and ex.answer.startswith("Successfully created"):
            created.add(str(ex.arguments.get("sink_name")))
        elif tool == "list_log_sinks" and not seen.sinks:
            seen.sinks = [{"name": n, "destination": d, "filter": "" if f == "None" else f}
                          for n, d, f in SINK.findall(ex.answer) if n not in created]
        elif tool == "read_logs" and not LOG_NAME.search(str(ex.arguments.get("log_filter") or "")):
            seen.unknown[ex.index] = UNPINNED
    _see_reads(seen, calls, written)
    for sink in seen.sinks:
        m = BUCKET.match(sink["destination"])
        if m and m.group(1) not in seen.buckets and not m.group(1).startswith("_"):  # _Default, _Required: built in
            seen.buckets.append(m.group(1))
    return seen


def _see_reads(seen: Seen, calls: list[Exchange], written: dict[str, int]) -> None:
    """Entries of the logs the reads name: of all the times a log's reads showed, the newest k are the run's own
    writes (k: its successful writes to that log), the rest were there before it began."""
    shown: dict[str, dict[str, tuple[str, str]]] = {}
    for ex in calls:
        if tool_of(ex) != "read_logs" or not (lines := read_lines(ex.answer)):
            continue
        named = LOG_NAME.search(str(ex.arguments.get("log_filter") or ""))
        if named is None:
            continue
        for timestamp, severity, message in lines:
            shown.setdefault(named.group(1), {})[timestamp] = (severity, message)
            if message != "No message":
                seen.unknown[ex.index] = "an entry with a JSON payload, which the server prints only as a Python repr"
    for log, entries in sorted(shown.items()):
        for i, timestamp in enumerate(sorted(entries, reverse=True)):
            if i < written.get(log, 0):
                seen.own.add(timestamp)
            elif entries[timestamp][1] == "No message":
                seen.entries.setdefault(timestamp, Entry(log, timestamp, entries[timestamp][0]))


def judge(ex: Exchange, answer: str | None, seen: Seen) -> Case:
    tool = tool_of(ex)
    if REFUSED.match(ex.answer):
        return Case(ex, "cannot-rebuild", BY_ALLOW_LIST, ex.answer)
    if tool in NOT_REPLAYED or answer is None:
        return Case(ex, "cannot-rebuild", NOT_REPLAYED.get(tool, f"{tool} is not replayed"), ex.answer)
    if ex.index in seen.unknown:
        return Case(ex, "cannot-rebuild", seen.unknown[ex.index], ex.answer, answer)
    real, ours = masked(ex.answer), masked(answer)
    if tool != "read_logs" or real == ours:
        return Case(ex, "agreed" if real == ours else "disagreed", "text", ex.answer, answer)
    ok = _same_read(real, ours, seen)
    return Case(ex, "agreed" if ok else "disagreed", "entries (the replay's own times for the run's)", ex.answer,
                answer)


def _same_read(real: str, ours: str, seen: Seen) -> bool:
    """The same lines, a replay's own entry (not seeded) facing one of the run's own writes, at any time."""
    a, b = real.splitlines(), ours.splitlines()
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        mx, my = LINE.match(x), LINE.match(y)
        if not (mx and my):
            if x != y:
                return False
        elif mx.group(2, 3) != my.group(2, 3):
            return False
        elif my.group(1) in seen.entries:
            if mx.group(1) != my.group(1):
                return False
        elif mx.group(1) not in seen.own:
            return False
    return True


def _latest(calls: list[Exchange]) -> str:
    times = [t for ex in calls for t, _, _ in read_lines(ex.answer)]
    latest = max(times, default="2025-01-01T00:00:00+00:00")
    moment = dt.datetime.fromisoformat(latest).replace(tzinfo=None) + dt.timedelta(minutes=1)
    return moment.isoformat()


class LoggingEmulator(Emulator):
    """The fidelity kit's emulator process; Logging's ready line names its gRPC port only."""

    def _ready(self, seconds: float) -> str:
        line = super()._ready(seconds)
        m = re.fullmatch(r"ready gcplogging (\{.*\})", line)
        if m:
            ports = json.loads(m.group(1))
            return f"ready gcplogging {json.dumps({'http': ports.get('grpc'), **ports})}"
        return line


def replay_runs(paths: list[Path], *, servers: Path | None = None, timeout: float = 600) -> list[Case]:
    """The runs' Logging calls, each run on a fresh emulator of its own (all started at once, then one driver process
    through them in order), each call judged against its recorded answer."""
    servers = servers or servers_dir()
    saas, gcmcp = servers / "saas" / "bin" / "python", servers / "google-cloud" / "bin" / "python"
    todo = [(calls, rebuild(calls)) for calls in (exchanges(p, PREFIX) for p in paths) if calls]
    if not todo:
        return []
    with tempfile.TemporaryDirectory(prefix="fidelity-logging-") as root, ExitStack() as stack:
        emulators = []
        for i in range(len(todo)):
            (Path(root) / str(i)).mkdir()
            emulators.append(LoggingEmulator("gcplogging", Path(root) / str(i), saas))
            stack.callback(emulators[-1].stop)
        job = {"project": PROJECT, "runs": [
            {"logging": {"emulator": f"127.0.0.1:{emu.ports['grpc']}", "now": _latest(calls), "allowed": seen.allowed,
                         "seed": seen.seed()},
             "calls": [{"tool": c.tool if replayed(c) else "(not replayed)",
                        "arguments": json.loads(MASKED_PROJECT.sub(PROJECT, json.dumps(c.arguments)))} for c in calls]}
            for emu, (calls, seen) in zip(emulators, todo)]}
        replies = drive("google-cloud-mcp's driver", Path(__file__).with_name("gcmcp_driver.py"), gcmcp, job,
                        len(todo), timeout, {**os.environ})
    return [judge(ex, reply.get("answer"), seen) for (calls, seen), answers in zip(todo, replies)
            for ex, reply in zip(calls, answers)]


def replay(runs: Path, **kwargs: Any) -> list[Case]:
    return replay_runs(sorted(runs.glob("*.json")), **kwargs)
