"""When was a recorded run launched? Read from what its own outputs show, most explicit first.

A recorded run carries no launch time, yet re-executing it against a task's real preprocess and evaluator
only reproduces its verdict at the day it was made: a run that built `leaderboard_20251016` on the 16th fails
an evaluator told it is the 17th. The run's outputs say when it ran; in order of trust:

1. `evaluator`: the recorded evaluator's own output names the launch time it was given (`Launch time: …`);
2. `date`: the agent read the clock: a shell `date`, or code that calls `datetime.now()` and prints it
   under a label (`Today: 2025-10-17`);
3. `sql`: a query selected CURRENT_DATE() / CURRENT_TIMESTAMP() (and the answer shows which column);
4. `created`: creation timestamps in the answers of calls that created something.

Every such reading was taken at or after the launch, so each is an upper bound: the day is the earliest
reading of the most trusted kind found, and the time of day the earliest reading with a time on that day
(from any kind), else midnight — a launch before the first tool call. Creation timestamps are read only
from calls that create (a read of old objects says nothing of when the run was made), and only those within
CREATED_WINDOW of the latest (an answer can carry older objects beside the new one). Without any of these the
run says nothing of its day, and the caller's default stands, said so. Times are taken as shown, an explicit
UTC offset converted to UTC.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Iterator

from decathlon.recordings.id_translation import unwrap
from decathlon.sandbox import launch_time as lt
from decathlon.tape import nesting

KINDS = ("evaluator", "date", "sql", "created")  # most explicit first
CREATED_WINDOW = timedelta(hours=3)  # a run's own objects are made within its few hours
_EXCERPT = 160
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                       "dec"), 1)}
_MONTH_NAMES = ("January|February|March|April|May|June|July|August|September|October|November|December")

# The shapes a date or time is shown in: ISO 8601 (and SQL's `2025-10-17 23:24:01`), Python's repr of a
# datetime / date (BigQuery's client rows), `date`'s default output, and `October 17, 2025 at 23:34:57`.
_ISO = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?"
                  r"(?:\s?(Z|UTC|[+-]\d{2}:?\d{2}))?)?(?![\d])")
_PY_DATETIME = re.compile(r"datetime\.datetime\((\d{4}),\s*(\d{1,2}),\s*(\d{1,2})(?:,\s*(\d{1,2}),\s*(\d{1,2})"
                          r"(?:,\s*(\d{1,2}))?)?(?:,\s*\d+)?(,\s*tzinfo=[\w.]*utc)?")
_PY_DATE = re.compile(r"datetime\.date\((\d{4}),\s*(\d{1,2}),\s*(\d{1,2})\)")
_UNIX_DATE = re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(\d{1,2}) "
                        r"(\d{2}):(\d{2}):(\d{2})(?: ([A-Z]{2,5}|[+-]\d{4}))? (\d{4})\b")
_LONG = re.compile(rf"\b({_MONTH_NAMES}) (\d{{1,2}}), (\d{{4}})(?:,? (?:at )?(\d{{1,2}}):(\d{{2}})(?::(\d{{2}}))?)?")

_EVALUATOR_LABEL = re.compile(r"launch[ _-]?time", re.IGNORECASE)
# `date`, `date +%F`, `$(date -u)`: the shell's clock; `date -d …` shows a date it was given, not now.
_SHELL_DATE = re.compile(r"(?:^|[\s;&|(`$])date(?P<args>(?:[ \t]+[^\s;&|)`]+)*)[ \t]*(?=$|[;&|)`\n])", re.MULTILINE)
_CLOCK_CALL = re.compile(r"\b(?:datetime\.(?:now|today|utcnow)|date\.today|Timestamp\.(?:now|today)|"
                         r"time\.(?:time|localtime|strftime|ctime))\s*\(|(?<![\w.])(?:now|today|utcnow)\(\)")
_CLOCK_LABEL = re.compile(r"^\W*(?:today(?:'s date)?|now|current (?:date|time|datetime)|date today|run (?:date|time)|"
                          r"(?:report )?generated(?: at| on)?|execution (?:date|time)|campaign date)\b", re.IGNORECASE)
# Between a label and the time it labels: punctuation, a parenthesised zone, `is`.
_LABEL_GAP = re.compile(r"^(?:\s*\([^)\n]{0,20}\))?[\s:=\-]*(?:is\s+|was\s+)?$", re.IGNORECASE)
_SQL_CLOCK = re.compile(r"\b(CURRENT_DATE|CURRENT_TIMESTAMP|CURRENT_DATETIME|LOCALTIMESTAMP|SYSDATE|SYSTIMESTAMP|"
                        r"GETDATE|NOW)\b(\s*\(\s*\))?", re.IGNORECASE)
_SQL_ALIAS = re.compile(r"\s*(?:AS\s+)?[`\"']?([A-Za-z_]\w*)[`\"']?", re.IGNORECASE)
_SQL_WORDS = frozenset({"from", "where", "and", "or", "as", "union", "order", "group", "limit", "then", "else", "end"})
_CREATED_LABEL = re.compile(r"[\"']?(?:date_created(?:_gmt)?|created(?:_at|At|_time|Time|_on|On|_date|Date)?|"
                            r"creation(?:_time|Time|_date|Date|Timestamp)?|time_?[cC]reated)[\"']?\s*[:=]\s*[\"']?",
                            re.IGNORECASE)
_CREATING_TOOL = re.compile(r"(?:^|[-_.])(?:create|insert|add|send|post|upload|submit|new|copy|write|put|make|enroll|"
                            r"publish|append|schedule|book)(?:[-_.]|$)|(?:create|insert|add|send|post|upload|submit)[A-Z_]",
                            re.IGNORECASE)
_CREATING_SQL = re.compile(r"^\s*(?:--[^\n]*\n\s*)*(?:CREATE|INSERT|MERGE)\b", re.IGNORECASE)
_READING_TOOL = re.compile(r"(?:^|[-_.])(?:search|query|list|get|retrieve|read|fetch|find|describe|show)(?:[-_.]|$)",
                           re.IGNORECASE)
_CREATED_OBJECT = re.compile(r"\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?(?:TABLE|VIEW|SCHEMA|DATABASE|"
                             r"MATERIALIZED\s+VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?[`\"]?([\w.\-]+)", re.IGNORECASE)
_SQL_KEYS = ("query", "sql", "statement")
_NAME_KEYS = ("name", "title", "table_id", "dataset_id", "bucket_name", "sink_name", "filename", "subject")


@dataclass(frozen=True)
class Evidence:
    """One reading of the run's clock: what kind, when, at which of its tool calls, and the text it is read from."""
    kind: str
    at: str  # "YYYY-MM-DD HH:MM:SS", or "YYYY-MM-DD" where only the day is shown
    call: int | None  # the tool call's number in the run, from 1; None for the evaluator's output
    tool: str | None
    shown: str

    @property
    def has_time(self) -> bool:
        return len(self.at) > 10

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "at": self.at, "call": self.call, "tool": self.tool, "shown": self.shown}


@dataclass(frozen=True)
class LaunchInference:
    """The launch time chosen for a run and why: `source` is a kind of evidence, `override` or `default`."""
    launch_time: str  # "YYYY-MM-DD HH:MM:SS Weekday"
    source: str
    evidence: list[Evidence] = field(default_factory=list)
    note: str = ""
    # The earliest day each other kind showed, where it did: a disagreement is visible in the report.
    also: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"launch_time": self.launch_time, "from": self.source, "evidence": [e.to_json() for e in self.evidence],
                "note": self.note, "also": dict(self.also)}


@dataclass(frozen=True)
class _Instant:
    when: datetime
    has_time: bool
    start: int
    end: int

    def stamp(self) -> str:
        return self.when.strftime("%Y-%m-%d %H:%M:%S" if self.has_time else "%Y-%m-%d")


@dataclass(frozen=True)
class _Call:
    number: int
    tool: str
    arguments: Any  # the parsed JSON arguments, or the raw text
    shown: str  # the answer's text as the model saw it


def _utc(when: datetime, offset: str | None) -> datetime:
    if not offset or offset.upper() in ("Z", "UTC"):
        return when
    sign = 1 if offset[0] == "+" else -1
    digits = offset[1:].replace(":", "")
    return when - sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))


def _make(y: str, mo: str | int, d: str, h: str | None, mi: str | None, s: str | None) -> tuple[datetime, bool] | None:
    try:
        when = datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0))
    except ValueError:
        return None
    # Outside these years a "date" is a version number, an id or data about the past, not this run's clock.
    return (when, h is not None) if 2000 <= when.year <= 2100 else None


def instants(text: str) -> list[_Instant]:
    """Every date or time shown in `text`, in order of position."""
    found: list[_Instant] = []
    for m in _ISO.finditer(text):
        made = _make(m[1], m[2], m[3], m[4], m[5], m[6])
        if made:
            found.append(_Instant(_utc(made[0], m[7]), made[1], m.start(), m.end()))
    for m in _PY_DATETIME.finditer(text):
        made = _make(m[1], m[2], m[3], m[4], m[5], m[6])
        if made:
            found.append(_Instant(made[0], made[1], m.start(), m.end()))
    for m in _PY_DATE.finditer(text):
        made = _make(m[1], m[2], m[3], None, None, None)
        if made:
            found.append(_Instant(made[0], False, m.start(), m.end()))
    for m in _UNIX_DATE.finditer(text):
        zone = m[6] if m[6] and m[6][0] in "+-" else None
        made = _make(m[7], _MONTHS[m[1].lower()], m[2], m[3], m[4], m[5])
        if made:
            found.append(_Instant(_utc(made[0], zone), True, m.start(), m.end()))
    for m in _LONG.finditer(text):
        made = _make(m[3], _MONTHS[m[1][:3].lower()], m[2], m[4], m[5], m[6])
        if made:
            found.append(_Instant(made[0], made[1], m.start(), m.end()))
    found.sort(key=lambda i: (i.start, -i.end))
    out: list[_Instant] = []
    for i in found:  # one reading per place: `datetime.datetime(…)` is not also a date inside it
        if not out or i.start >= out[-1].end:
            out.append(i)
    return out


def _excerpt(text: str, start: int, end: int) -> str:
    """What a reading was read from: the span, with a little of what comes before it (what it is the time of)."""
    left = max(0, start - 40, end - _EXCERPT)
    return " ".join(text[left:max(end, left + _EXCERPT // 2)].split())


def _calls(messages: list[dict]) -> Iterator[_Call]:
    results = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    number = 0
    for m in messages:
        for call in m.get("tool_calls") or []:
            number += 1
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict) or call.get("id") not in results:
                continue
            raw = fn.get("arguments") or ""
            try:
                args: Any = nesting.loads(raw) if raw.strip() else {}
            except ValueError:  # not JSON, or too deep: read as the text it is
                args = raw
            yield _Call(number, str(fn.get("name") or ""), args, unwrap(results[call.get("id")]))


def _strings(args: Any, keys: tuple[str, ...]) -> list[str]:
    if isinstance(args, str):
        return [args]
    if isinstance(args, dict):
        return [v for k, v in args.items() if isinstance(v, str) and k.lower() in keys]
    return []


def _evaluator(failure: str | None) -> list[Evidence]:
    """The evaluator printed the launch time it was given (`Launch time: …`, `launch_time', '…'`); one of
    Toolathlon's prints it character by character (`2 0 2 5 - 1 0 - 2 1`)."""
    text = failure or ""
    for m in _EVALUATOR_LABEL.finditer(text):
        window = text[m.end(): m.end() + 160]
        spread = re.sub(r" {2,}", " ", re.sub(r"(?<=\S) (?=\S)", "", window))
        for candidate in (window, spread):
            first = next((i for i in instants(candidate) if i.start <= 40), None)
            if first is not None:
                shown = _excerpt(text, m.start(), min(len(text), m.end() + first.end))
                return [Evidence("evaluator", first.stamp(), None, None, shown)]
    return []


def _clock_reads(calls: list[_Call]) -> list[Evidence]:
    out = []
    for c in calls:
        for command in _strings(c.arguments, ("command", "cmd", "script", "commands")):
            m = _SHELL_DATE.search(command)
            if m and not re.search(r"(?:^|\s)(?:-d|--date|-r|--reference|-f|--file)\b", m["args"] or ""):
                first = next(iter(instants(c.shown)), None)
                if first is not None:
                    out.append(Evidence("date", first.stamp(), c.number, c.tool, _excerpt(c.shown, first.start, first.end)))
                    break
        code = " ".join(_strings(c.arguments, ("code", "source", "script")))
        if code and _CLOCK_CALL.search(code):
            out += _labelled_now(c)
    return out


def _labelled_now(c: _Call) -> list[Evidence]:
    """Lines of the output that print the clock the code read: `Today: 2025-10-17`, or a time alone on its line."""
    stdout = c.shown.split("=== STDERR ===")[0].split("=== EXECUTION INFO ===")[0]
    out: list[Evidence] = []
    for line in stdout.splitlines():
        if "estimat" in line.lower():
            continue  # "Current date (estimated)": the agent's guess, not the clock
        label = _CLOCK_LABEL.match(line)
        rest = line[label.end():] if label else line
        found = instants(rest)
        if not found:
            continue
        labelled = label is not None and _LABEL_GAP.match(rest[:found[0].start]) is not None
        alone = label is None and rest.strip() == rest[found[0].start:found[0].end].strip()
        if labelled or alone:
            out.append(Evidence("date", found[0].stamp(), c.number, c.tool, " ".join(line.split())[:_EXCERPT]))
    return out[:4]


def _sql_clock(calls: list[_Call]) -> list[Evidence]:
    out = []
    for c in calls:
        for query in _strings(c.arguments, _SQL_KEYS):
            found = _sql_reading(query, c.shown)
            if found is not None:
                out.append(Evidence("sql", found.stamp(), c.number, c.tool,
                                    _excerpt(c.shown, found.start, found.end)))
                break
    return out


def _sql_reading(query: str, shown: str) -> _Instant | None:
    """The clock a query selected, as its answer shows it: under its alias, or as the one day the answer holds."""
    select = re.search(r"\bSELECT\b(.*?)(?:\bFROM\b|$)", query, re.IGNORECASE | re.DOTALL)
    if select is None:
        return None
    for m in _SQL_CLOCK.finditer(select[1]):
        if m[1].upper() in ("GETDATE", "NOW") and not m[2]:
            continue  # a column named now, not the function
        alias = _SQL_ALIAS.match(select[1], m.end())
        name = alias[1] if alias and alias[1].lower() not in _SQL_WORDS else None
        if name:
            labelled = re.search(rf"[\"']?{re.escape(name)}[\"']?\s*[:=]\s*[\"']?", shown, re.IGNORECASE)
            if labelled:
                found = instants(shown[labelled.end():labelled.end() + 60])
                if found and found[0].start == 0:
                    return _Instant(found[0].when, found[0].has_time, labelled.end(), labelled.end() + found[0].end)
        found = instants(shown)
        if found and len({i.when.date() for i in found}) == 1:
            return found[0]
    return None


def _creating(c: _Call) -> bool:
    if any(_CREATING_SQL.match(q) for q in _strings(c.arguments, _SQL_KEYS)):
        return True
    name = c.tool.split("-", 1)[-1]
    return not _READING_TOOL.search(name) and _CREATING_TOOL.search(name) is not None


def _made_names(c: _Call) -> set[str]:
    """The names of what a creating call made: a CREATE statement's object, a `name` or `title` argument."""
    names = {m[1].rsplit(".", 1)[-1] for q in _strings(c.arguments, _SQL_KEYS) for m in _CREATED_OBJECT.finditer(q)}
    names |= {v for v in _strings(c.arguments, _NAME_KEYS) if 4 <= len(v) <= 80 and "\n" not in v}
    return names


def _created(calls: list[_Call]) -> list[Evidence]:
    """Creation times in the answers of calls that created something, and in later answers where they name what
    an earlier call of the run created (`leaderboard_20251017 … created_at`)."""
    read = []
    made: set[str] = set()
    for c in calls:
        creating = _creating(c)
        for m in _CREATED_LABEL.finditer(c.shown):
            found = instants(c.shown[m.end():m.end() + 80])
            if not (found and found[0].start == 0 and found[0].has_time):
                continue
            if not creating and not _names_one_of(c.shown, m.start(), made):
                continue
            i = found[0]
            read.append((i.when, Evidence("created", i.stamp(), c.number, c.tool,
                                          _excerpt(c.shown, m.start(), m.end() + i.end))))
        if creating:
            made |= _made_names(c)
    if not read:
        return []
    latest = max(w for w, _ in read)
    return [e for w, e in read if w >= latest - CREATED_WINDOW]


def _names_one_of(text: str, at: int, names: set[str]) -> bool:
    """Whether the record a creation time at `at` belongs to names one of `names`: its own line, or the stretch
    since the previous creation time (a JSON object spread over lines)."""
    if not names:
        return False
    end = text.find("\n", at)
    line = text[text.rfind("\n", 0, at) + 1: end if end >= 0 else len(text)]
    stretch = text[max(0, at - 400):at]
    previous = list(_CREATED_LABEL.finditer(stretch))
    if previous:
        stretch = stretch[previous[-1].end():]
    pattern = re.compile("|".join(rf"(?<![\w-]){re.escape(n)}(?![\w-])" for n in sorted(names)))
    return pattern.search(line) is not None or pattern.search(stretch) is not None


def evidence(messages: list[dict], failure: str | None = None) -> dict[str, list[Evidence]]:
    """Every reading of the run's clock, by kind."""
    calls = list(_calls(messages))
    return {"evaluator": _evaluator(failure), "date": _clock_reads(calls), "sql": _sql_clock(calls),
            "created": _created(calls)}


def _earliest(found: list[Evidence]) -> Evidence:
    return min(found, key=lambda e: (e.at[:10], e.at if e.has_time else e.at + " 99"))


def infer(messages: list[dict], failure: str | None, default: str) -> LaunchInference:
    """The launch time a run's own outputs show (see the module's doc), or `default`, said so."""
    by_kind = evidence(messages, failure)
    chosen = next((k for k in KINDS if by_kind[k]), None)
    also = {k: _earliest(v).at[:10] for k, v in by_kind.items() if v and k != chosen}
    if chosen is None:
        return LaunchInference(lt.resolve(default), "default", [], "no date or time in the run's outputs: the default")
    first = _earliest(by_kind[chosen])
    day = first.at[:10]
    if chosen == "evaluator":
        return LaunchInference(lt.resolve(first.at), chosen, [first], "the evaluator's own launch time", also)
    # The earliest time shown that day, of any kind: each was read after the launch.
    timed = sorted((e for found in by_kind.values() for e in found if e.has_time and e.at[:10] == day), key=lambda e: e.at)
    used = [first] + [e for e in timed[:1] if e is not first]
    if timed:
        note = f"{len(by_kind[chosen])} reading(s); the day from the earliest, the time the earliest shown that day"
        return LaunchInference(lt.resolve(timed[0].at), chosen, used, note, also)
    note = f"{len(by_kind[chosen])} reading(s) showing the day only: launched at its midnight"
    return LaunchInference(lt.resolve(day + " 00:00:00"), chosen, used, note, also)


def parse_override(raw: str) -> tuple[str, str]:
    """`TASK=YYYY-MM-DD[ HH:MM:SS]` → (task, launch time); the time checked as `--launch-time` checks it."""
    task, sep, when = raw.partition("=")
    if not sep or not task.strip():
        raise ValueError(f"{raw!r}: give TASK=\"YYYY-MM-DD HH:MM:SS\"")
    return task.strip(), lt.resolve(when.strip())

