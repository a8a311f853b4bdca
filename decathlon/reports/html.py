"""The results page: `decathlon report DIR… --html OUT` as one self-contained HTML file.

`render_html(report, trajectory)` takes the JSON `decathlon report --json` prints and a function giving an
episode's conversation (`trajectory(ref) -> {"messages", "evaluator_output"}`), and returns the page:
inline CSS and JS only, nothing fetched (a Content-Security-Policy forbids it too).

What is on it: per run the overall numbers (Pass@1 mean ± std over repeats, Pass@k and Pass^k with their k,
passed/graded, infra errors counted apart, average turns and tool calls, phase-timing medians), the conflict
groups that serialised work, a comparison of Pass@1 per task when there are several runs, and per run a task
table whose rows expand to each episode: its verdict, timings and dense metrics, its messages, tool calls
with their arguments pretty-printed, tool outputs (long ones folded) and the evaluator's output.

The tables are plain HTML, so the first paint needs no script. Episodes are embedded as JSON
(`<script type="application/json">`, one block per trajectory, parsed only when opened) and drawn on expand.
Everything in them was written by an agent and is hostile: the JSON is escaped so no `<` survives into the
block, and the page's script puts text into the page only through `textContent`, never as markup. The
inline script is allowed by its hash alone, so any markup that did slip through could not run.

To stay small (a 108-task run of long trajectories is ~20 MB of JSON), every text is cut to a cap chosen so
the whole page fits `max_bytes`: the head and tail are kept, and the cut says how many characters are
omitted and where the full text is (the episode's ref). If the smallest cap is not enough, the middle
messages of the longest conversations are left out, then whole trajectories, each time saying so.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from typing import Any, Callable

from decathlon.tape import nesting

PHASES = ("acquire", "setup", "agent", "evaluate", "release")
MAX_BYTES = 4_500_000  # the whole page; under the 5 MB the issue asks for, with room to spare
# characters kept of one text: the largest that fits is used (found by bisection: sizes only grow with it)
CAPS = (8000, 6400, 5000, 4000, 3200, 2500, 2000, 1600, 1300, 1000, 800, 650, 500, 400, 320, 250, 200, 150)
WINDOWS = (200, 120, 80, 48, 24, 12, 6)  # messages kept of one conversation, once the caps are exhausted
EVAL_CAP_MIN = 3000  # the evaluator's output is one text per episode and the verdict's reason: keep more
ERROR_CAP = 4000  # an infra error's or failure's message
ROLES = ("system", "user", "assistant", "tool")

_Text = tuple  # (head, omitted, tail): a text cut in the middle; (s, 0, "") when whole


# ----------------------------------------------------------------------------------------- text helpers

# Terminal escapes (colours, cursor moves, titles) in what evaluators and tools print: the page shows their text, not
# `[32m` litter. CSI sequences, OSC ones (ended by BEL or ST), and the two-character escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]")


def strip_ansi(s: str) -> str:
    return _ANSI.sub("", s) if ("\x1b" in s or "\x9b" in s) else s


def _esc(x: object) -> str:
    return html.escape(strip_ansi("" if x is None else str(x)), quote=True)


def _finite(x: object) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(x) else None


def _pct(x: object) -> str:
    v = _finite(x)
    return "—" if v is None else f"{v * 100:.1f}%"


def _num(x: object, digits: int = 1) -> str:
    v = _finite(x)
    return "—" if v is None else f"{v:.{digits}f}"


def _secs(x: object) -> str:
    v = _finite(x)
    if v is None:
        return "—"
    return f"{v:.2f}" if v < 10 else f"{v:.1f}" if v < 1000 else f"{v:.0f}"


def _value_attr(x: object) -> str:
    v = _finite(x)
    return "" if v is None else f' data-value="{v!r}"'


def _grade(x: object) -> str:
    """A colour class for a rate: g4 all passed … g0 none."""
    v = _finite(x)
    if v is None:
        return "gn"
    return "g4" if v >= 1 else "g3" if v >= 2 / 3 else "g2" if v >= 1 / 3 else "g1" if v > 0 else "g0"


def _clean(obj: Any, cap: int = ERROR_CAP) -> Any:
    """A JSON-safe copy of an episode record: non-finite numbers as text, long strings cut."""
    if isinstance(obj, dict):
        return {str(k): _clean(v, cap) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v, cap) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if obj is None or isinstance(obj, (bool, int, float)):
        return obj
    s = strip_ansi(str(obj))
    return _emit(_cut((s, 0, ""), cap)) if len(s) > cap else s


def _cut(t: _Text, cap: int) -> _Text:
    """The text with at most `cap` characters shown: two thirds from its head, one third from its tail."""
    head, omitted, tail = t
    if len(head) + len(tail) <= cap:
        return t
    keep_head = cap * 2 // 3
    keep_tail = cap - keep_head
    if omitted == 0:
        s = head + tail
        return (s[:keep_head], len(s) - cap, s[len(s) - keep_tail:] if keep_tail else "")
    keep_tail = min(keep_tail, len(tail))
    new_head, new_tail = head[:keep_head], tail[len(tail) - keep_tail:] if keep_tail else ""
    return (new_head, omitted + len(head) - len(new_head) + len(tail) - len(new_tail), new_tail)


def _emit(t: _Text) -> str | list:
    return t[0] if t[1] == 0 else [t[0], t[1], t[2]]


def _content_text(content: Any) -> str:
    """A message's content as text: a string, or the text of its parts (other parts named, never loaded)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                out.append(part["text"])
            elif isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict):
                out.append(f"[{str(part.get('type') or 'unknown')} part, not shown]")
            else:
                out.append(json.dumps(part, ensure_ascii=False, default=str))
        return "\n".join(out)
    return json.dumps(content, ensure_ascii=False, default=str)


def _mcp_text(s: str) -> tuple[str, int] | None:
    """A tool output that is only MCP text content (`{"type": "text", "text": …}`, one or several, or a
    list of them) as its text and the number of items; None when it is anything else."""
    if not s.lstrip().startswith(("{", "[")):
        return None
    texts: list[str] = []
    i = 0
    try:
        while True:
            while i < len(s) and s[i] in " \t\r\n,":
                i += 1
            if i >= len(s):
                break
            value, i = nesting.raw_decode(s, i)
            for item in value if isinstance(value, list) else [value]:
                if not (isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str)
                        and set(item) <= {"type", "text", "annotations", "_meta", "meta"}):
                    return None
                texts.append(item["text"])
    except ValueError:  # not JSON, or nested too deeply to be content items (nesting.TooDeep)
        return None
    return ("\n".join(texts), len(texts)) if texts else None


def _pretty_args(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            parsed = nesting.loads(arguments)
        except ValueError:  # not JSON, or too deep to pretty-print: shown as the model wrote it
            return arguments
        if not isinstance(parsed, (dict, list)):
            return arguments
        arguments = parsed
    try:
        return json.dumps(arguments, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(arguments)


# --------------------------------------------------------------------------------- trajectories, compact

def _compact(traj: Any, first_cap: int) -> dict:
    """A trajectory in the page's own short form, every text already cut to the largest cap."""
    def text(s: str) -> _Text:
        return _cut((strip_ansi(s), 0, ""), first_cap)

    if not isinstance(traj, dict):
        return {"m": [], "e": None, "err": f"the trajectory is not an object ({type(traj).__name__})"}
    messages = traj.get("messages")
    messages = messages if isinstance(messages, list) else []
    names: dict[str, str] = {}
    out: list[dict] = []
    for m in messages:
        if not isinstance(m, dict):
            out.append({"r": "?", "c": text(_content_text(m))})
            continue
        role = str(m.get("role") or "?")
        entry: dict = {"r": role}
        content = _content_text(m.get("content"))
        if content and role == "tool":
            unwrapped = _mcp_text(content)
            if unwrapped is not None:
                content, entry["u"] = unwrapped
        if content:
            entry["c"] = text(content)
        calls = []
        raw_calls = m.get("tool_calls")
        for call in raw_calls if isinstance(raw_calls, list) else []:
            if not isinstance(call, dict):
                continue
            fn = call.get("function")
            if not isinstance(fn, dict):
                fn = {}
            name = str(fn.get("name") or "?")
            call_id = str(call.get("id") or "")
            if call_id:
                names[call_id] = name
            calls.append({"n": name, "id": call_id, "a": text(_pretty_args(fn.get("arguments")))})
        if calls:
            entry["tc"] = calls
        if role == "tool" or m.get("tool_call_id"):
            call_id = str(m.get("tool_call_id") or "")
            entry["id"] = call_id
            entry["n"] = names.get(call_id) or str(m.get("name") or "")
        out.append(entry)
    ev = traj.get("evaluator_output")
    return {"m": out, "e": text(ev if isinstance(ev, str) else _content_text(ev)) if ev else None}


def _emit_traj(ct: dict, cap: int, window: int | None) -> dict:
    msgs = ct["m"]
    if window is not None and len(msgs) > window:
        first = window // 2
        msgs = msgs[:first] + [{"skip": len(msgs) - window}] + msgs[len(msgs) - (window - first):]
    out = []
    for m in msgs:
        if "skip" in m:
            out.append(m)
            continue
        e = {k: v for k, v in m.items() if k not in ("c", "tc")}
        if "c" in m:
            e["c"] = _emit(_cut(m["c"], cap))
        if "tc" in m:
            e["tc"] = [{"n": c["n"], "id": c["id"], "a": _emit(_cut(c["a"], cap))} for c in m["tc"]]
        out.append(e)
    doc: dict = {"m": out, "e": None if ct["e"] is None else _emit(_cut(ct["e"], max(cap, EVAL_CAP_MIN)))}
    if ct.get("err"):
        doc["err"] = ct["err"]
    return doc


def _cut_anything(ct: dict, cap: int) -> bool:
    texts = [m.get("c") for m in ct["m"]] + [c["a"] for m in ct["m"] for c in m.get("tc", [])] + [ct["e"]]
    return any(t is not None and (t[1] > 0 or len(t[0]) + len(t[2]) > cap) for t in texts)


def _script_json(obj: Any) -> str:
    """JSON that cannot end its <script> block: no `<`, `>` or `&` survives (all are \\u escapes in strings)."""
    s = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _nbytes(s: str) -> int:
    return len(s.encode("utf-8", "replace"))


def _fit(compacts: list[dict | None], budget: int) -> tuple[list[str | None], str]:
    """The trajectories' JSON blocks at the largest cap that fits the budget, and a sentence saying what was cut."""
    levels = [(c, None) for c in CAPS] + [(CAPS[-1], w) for w in WINDOWS]  # ever smaller pages

    def at(level: int) -> tuple[list[str | None], int]:
        cap, window = levels[level]
        blocks = [None if ct is None else _script_json(_emit_traj(ct, cap, window)) for ct in compacts]
        return blocks, sum(_nbytes(b) for b in blocks if b is not None)

    lo, hi, best = 0, len(levels) - 1, None  # the first level that fits, by bisection
    while lo <= hi:
        mid = (lo + hi) // 2
        blocks, size = at(mid)
        if size <= budget:
            best, hi = (mid, blocks), mid - 1
        else:
            lo = mid + 1
    if best is not None:
        level, blocks = best
        cap, window = levels[level]
        how = ("No text needed cutting" if level == 0 and not any(_cut_anything(ct, cap) for ct in compacts if ct)
               else f"Texts longer than {cap:,} characters are cut in the middle to keep this page small")
        if window is not None:
            how += f"; of conversations longer than {window} messages only the first and last are kept"
        return blocks, how + "."
    blocks, _ = at(len(levels) - 1)
    # still too big: as many whole trajectories as fit, in order; the rest are left out, and say so
    kept: list[str | None] = []
    used = 0
    for b in blocks:
        if b is not None and used + _nbytes(b) <= budget:
            kept.append(b)
            used += _nbytes(b)
        else:
            kept.append(None if b is None else "")
    return kept, (f"Texts longer than {CAPS[-1]:,} characters are cut, conversations longer than {WINDOWS[-1]} "
                  "messages shortened, and some trajectories left out, to keep this page small.")


# ------------------------------------------------------------------------------------------- the page

def _phases(report: dict) -> list[str]:
    seen: list[str] = []
    for run in report.get("runs") or []:
        for p in (run.get("timings") or {}):
            if p not in seen:
                seen.append(p)
    return [p for p in PHASES if p in seen] + [p for p in seen if p not in PHASES]


def _pass1(run: dict) -> tuple[object, object, list]:
    p = run.get("pass@1")
    if isinstance(p, dict):
        return p.get("mean"), p.get("std"), p.get("per_repeat") or []
    return p, None, []


def _overall(report: dict, phases: list[str]) -> str:
    head = ("<tr><th>Run</th><th>k</th><th>Pass@1</th><th>Pass@k</th><th>Pass^k</th><th>Passed / graded</th>"
            "<th>Infra errors<br><small>(not in rates)</small></th><th>Episodes</th><th>Avg turns</th>"
            "<th>Avg tool calls</th>" + "".join(f"<th>{_esc(p)}<br><small>median s</small></th>" for p in phases)
            + "</tr>")
    rows = []
    for i, run in enumerate(report.get("runs") or []):
        mean, std, per = _pass1(run)
        k = run.get("k")
        std_f = _finite(std)
        std_s = f' <span class="std">± {std_f * 100:.1f}</span>' if std_f is not None else ""
        per_s = (f' title="per repeat: {_esc(", ".join(_pct(x) for x in per))}"' if per else "")
        timings = run.get("timings") or {}
        cells = [
            f'<td class="label"><a href="#run-{i}">{_esc(run.get("label"))}</a></td>',
            f'<td data-metric="k"{_value_attr(k)}>{_esc(k)}</td>',
            f'<td data-metric="pass@1" class="{_grade(mean)}"{_value_attr(mean)}{per_s}>{_pct(mean)}{std_s}</td>',
            f'<td data-metric="pass@k" class="{_grade(run.get("pass@k"))}"{_value_attr(run.get("pass@k"))}>'
            f'{_pct(run.get("pass@k"))}<sub>k={_esc(k)}</sub></td>',
            f'<td data-metric="pass^k" class="{_grade(run.get("pass^k"))}"{_value_attr(run.get("pass^k"))}>'
            f'{_pct(run.get("pass^k"))}<sub>k={_esc(k)}</sub></td>',
            f'<td data-metric="passed">{_esc(run.get("passed"))} / {_esc(run.get("graded"))}</td>',
            f'<td data-metric="infra_errors"{_value_attr(run.get("infra_errors"))}'
            f'{" class=warn" if run.get("infra_errors") else ""}>{_esc(run.get("infra_errors"))}</td>',
            f'<td data-metric="episodes">{_esc(run.get("episodes"))}</td>',
            f'<td data-metric="avg_turns"{_value_attr(run.get("avg_turns"))}>{_num(run.get("avg_turns"))}</td>',
            f'<td data-metric="avg_tool_calls"{_value_attr(run.get("avg_tool_calls"))}>'
            f'{_num(run.get("avg_tool_calls"))}</td>',
        ]
        for p in phases:
            med = (timings.get(p) or {}).get("median") if isinstance(timings.get(p), dict) else timings.get(p)
            cells.append(f'<td data-metric="timing:{_esc(p)}"{_value_attr(med)}>{_secs(med)}</td>')
        rows.append(f'<tr data-run="{i}">' + "".join(cells) + "</tr>")
    return (f'<table id="overall" class="num"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
            f'<p class="note" id="note">{_esc(report.get("note") or "")}</p>')


def _compare(report: dict) -> str:
    runs = report.get("runs") or []
    if len(runs) < 2:
        return ""
    order: list[str] = []
    by_run: list[dict[str, dict]] = []
    for run in runs:
        tasks = {}
        for t in run.get("tasks") or []:
            name = str(t.get("task"))
            tasks[name] = t
            if name not in order:
                order.append(name)
        by_run.append(tasks)
    shared = [name for name in order if sum(1 for tasks in by_run if name in tasks) >= 2]
    alone = len(order) - len(shared)
    if not shared:
        return ('<section id="compare"><h2>Pass@1 per task, run by run</h2>'
                '<p class="note">These runs have no task in common.</p></section>')
    head = "<tr><th>Task</th>" + "".join(f"<th>{_esc(r.get('label'))}</th>" for r in runs) + "</tr>"
    rows = []
    for name in shared:
        cells = []
        for i, tasks in enumerate(by_run):
            t = tasks.get(name)
            if t is None:
                cells.append('<td class="gn">not run</td>')
            else:
                cells.append(f'<td data-run="{i}" data-metric="pass@1" class="{_grade(t.get("pass@1"))}"'
                             f'{_value_attr(t.get("pass@1"))}>{_pct(t.get("pass@1"))} '
                             f'<small>{_esc(t.get("passed"))}/{_esc(t.get("graded"))}</small></td>')
        rows.append(f'<tr data-task="{_esc(name)}"><td class="label">{_esc(name)}</td>{"".join(cells)}</tr>')
    note = f'<p class="note">{alone} task(s) run in only one of these runs are not listed.</p>' if alone else ""
    return ('<section id="compare"><h2>Pass@1 per task, run by run</h2>'
            f'<table class="num sortable"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>{note}</section>')


def _squares(t: dict) -> str:
    out = []
    for ep in t.get("runs") or []:
        if ep.get("infra_error"):
            cls, mark, what = "sq-i", "I", "infra error (not graded)"
        elif ep.get("pass") is True:
            cls, mark, what = "sq-p", "✓", "passed"
        elif ep.get("pass") is False:
            cls, mark, what = "sq-f", "✗", "failed"
        else:
            cls, mark, what = "sq-n", "–", "not passed (no verdict)"
        title = f"repeat {ep.get('repeat')}: {what}" + (f" ({ep.get('status')})" if ep.get("status") else "")
        out.append(f'<span class="sq {cls}" title="{_esc(title)}">{mark}</span>')
    return "".join(out)


def _run_section(i: int, run: dict, phases: list[str]) -> str:
    k = run.get("k")
    show_k = isinstance(k, int) and k > 1
    meta = []
    for key in ("kind", "source", "policy", "backend", "mode"):
        if run.get(key) not in (None, ""):
            meta.append(f"<span><b>{key}</b> {_esc(run.get(key))}</span>")
    meta.append(f"<span><b>k</b> {_esc(k)}</span>")
    folders = run.get("folders") or []
    if folders:
        meta.append(f"<span><b>folders</b> {_esc(', '.join(str(f) for f in folders))}</span>")
    parts = [f'<section class="run" id="run-{i}" data-run="{i}"><h2>{_esc(run.get("label"))}</h2>',
             f'<p class="meta">{" ".join(meta)}</p>']
    mean, std, per = _pass1(run)
    if len(per) > 1:
        parts.append('<p class="meta perrep">Pass@1 per repeat: '
                     + ", ".join(f'<span data-metric="pass@1:repeat" data-repeat="{j + 1}"{_value_attr(x)}>'
                                 f"{_pct(x)}</span>" for j, x in enumerate(per)) + "</p>")
    if run.get("tasks_short_of_k"):
        parts.append(f'<p class="meta warn">{_esc(run["tasks_short_of_k"])} task(s) have fewer than {_esc(k)} '
                     "graded episodes (infra errors) and are left out of Pass@k and Pass^k.</p>")
    timings = run.get("timings") or {}
    if timings:
        parts.append('<table class="num timings"><thead><tr><th>Phase (s)</th><th>median</th><th>mean</th>'
                     "</tr></thead><tbody>")
        for p in phases:
            v = timings.get(p)
            if isinstance(v, dict):
                parts.append(f'<tr><td class="label">{_esc(p)}</td><td{_value_attr(v.get("median"))}>'
                             f'{_secs(v.get("median"))}</td><td>{_secs(v.get("mean"))}</td></tr>')
        parts.append("</tbody></table>")
    conflicts = run.get("conflicts") or []
    if conflicts:
        parts.append('<h3>Conflict groups that serialised work</h3><table class="num conflicts"><thead><tr>'
                     "<th>Group</th><th>Episodes that waited</th><th>Wait (s)</th></tr></thead><tbody>")
        for c in conflicts:
            group = c.get("group")
            group = " · ".join(str(g) for g in group) if isinstance(group, list) else str(group or "")
            parts.append(f'<tr><td class="label">{_esc(group)}</td><td>{_esc(c.get("waited_episodes"))}</td>'
                         f'<td>{_secs(c.get("wait_seconds"))}</td></tr>')
        parts.append("</tbody></table>")
    for s in run.get("skipped") or []:
        parts.append(f'<p class="meta warn">skipped: {_esc(s)}</p>')
    # the task table
    kk = _esc(k)
    head = ['<th data-sort="text">Task</th>', "<th>Repeats</th>", '<th data-sort="num">Passed / graded</th>',
            '<th data-sort="num">Pass@1</th>']
    if show_k:
        head += [f'<th data-sort="num">Pass@{kk}</th>', f'<th data-sort="num">Pass^{kk}</th>']
    head += ['<th data-sort="num">Infra errors</th>', '<th data-sort="num">Avg turns</th>',
             '<th data-sort="num">Avg tool calls</th>']
    head += [f'<th data-sort="num">{_esc(p)} <small>s</small></th>' for p in phases]
    rows = []
    for j, t in enumerate(run.get("tasks") or []):
        tt = t.get("timings") or {}
        cells = [f'<td class="label"><button type="button" class="tg" aria-expanded="false">'
                 f'{_esc(t.get("task"))}</button></td>',
                 f'<td class="sqs">{_squares(t)}</td>',
                 f'<td data-metric="passed"{_value_attr(t.get("passed"))}>{_esc(t.get("passed"))} / '
                 f'{_esc(t.get("graded"))}</td>',
                 f'<td data-metric="pass@1" class="{_grade(t.get("pass@1"))}"{_value_attr(t.get("pass@1"))}>'
                 f'{_pct(t.get("pass@1"))}</td>']
        if show_k:
            for key in ("pass@k", "pass^k"):
                cells.append(f'<td data-metric="{key}" class="{_grade(t.get(key))}"{_value_attr(t.get(key))}>'
                             f"{_pct(t.get(key))}</td>")
        infra = t.get("infra_errors")
        cells += [f'<td data-metric="infra_errors"{_value_attr(infra)}{" class=warn" if infra else ""}>'
                  f"{_esc(infra)}</td>",
                  f'<td data-metric="avg_turns"{_value_attr(t.get("avg_turns"))}>{_num(t.get("avg_turns"))}</td>',
                  f'<td data-metric="avg_tool_calls"{_value_attr(t.get("avg_tool_calls"))}>'
                  f'{_num(t.get("avg_tool_calls"))}</td>']
        cells += [f'<td data-metric="timing:{_esc(p)}"{_value_attr(tt.get(p))}>{_secs(tt.get(p))}</td>'
                  for p in phases]
        pass1 = _finite(t.get("pass@1"))
        failing = "1" if (pass1 is None or pass1 < 1) else "0"
        rows.append(f'<tr class="task" data-run="{i}" data-t="{j}" data-task="{_esc(t.get("task"))}" '
                    f'data-failing="{failing}">' + "".join(cells) + "</tr>")
    parts.append(f'<h3>Tasks <small>({len(rows)}; click one for its episodes)</small></h3>'
                 f'<p class="tools"><input type="search" class="filter" placeholder="filter tasks" '
                 f'aria-label="filter tasks"> <label><input type="checkbox" class="failing"> '
                 f'not all passed</label></p>'
                 f'<table class="num tasks sortable" id="run-{i}-tasks"><thead><tr>{"".join(head)}</tr></thead>'
                 f'<tbody>{"".join(rows)}</tbody></table></section>')
    return "".join(parts)


CSS = """
:root{--fg:#1b1f24;--mut:#5b636e;--bd:#d5dae0;--bg2:#f4f6f8;--acc:#0b5cad}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);margin:0;padding:18px 26px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:26px 0 4px;border-bottom:2px solid var(--bd)}
h3{font-size:15px;margin:16px 0 6px}small{color:var(--mut);font-weight:normal}
table{border-collapse:collapse;margin:6px 0}table.tasks{min-width:min(100%,1200px)}
th,td{border:1px solid var(--bd);padding:3px 8px;vertical-align:top}
th{background:var(--bg2);font-weight:600;text-align:center}
table.num td{text-align:right;white-space:nowrap}table.num td.label{text-align:left;white-space:normal}
th[data-sort]{cursor:pointer}th[data-sort]:hover{background:#e6ebf0}
.note,.meta{color:var(--mut);margin:4px 0}.meta span{margin-right:14px}.meta.perrep span{margin:0}.warn{color:#9a4b00}
td.warn{background:#fff1de}
.std{color:var(--mut)}sub{color:var(--mut);margin-left:2px}
.g4{background:#d8f1dc}.g3{background:#e8f5d5}.g2{background:#fbf1cf}.g1{background:#fbe1d2}.g0{background:#f8d5d5}
.gn{color:var(--mut)}
button.tg{font:inherit;border:0;background:none;color:var(--acc);cursor:pointer;padding:0;text-align:left}
button.tg::before{content:"▸ ";color:var(--mut)}button.tg[aria-expanded=true]::before{content:"▾ "}
.sq{display:inline-block;width:17px;height:17px;line-height:17px;margin:0 1px;text-align:center;
 border-radius:3px;font-size:11px;color:#fff}
.sq-p{background:#2e8540}.sq-f{background:#c0392b}.sq-n{background:#b7791f}.sq-i{background:#6b5b95}
tr.detail>td{background:#fbfcfd;text-align:left;white-space:normal;padding:8px 12px;max-width:0}
details.ep{border:1px solid var(--bd);border-radius:4px;margin:6px 0;background:#fff}
details.ep>summary{cursor:pointer;padding:5px 8px;background:var(--bg2)}
.ep-body{padding:8px 12px}
.facts span{margin-right:14px}.facts b{color:var(--mut);font-weight:600}
.err{border-left:4px solid #6b5b95;background:#f3f0fa;padding:4px 8px;margin:6px 0}
.err.failure{border-color:#c0392b;background:#fbeeee}
table.kv td{text-align:left;white-space:normal}
pre{margin:2px 0;padding:6px 8px;background:var(--bg2);border-radius:3px;white-space:pre-wrap;
 overflow-wrap:anywhere;font:12.5px/1.4 ui-monospace,"DejaVu Sans Mono",Menlo,monospace;max-height:40em;overflow:auto}
.msg{margin:8px 0;padding-left:10px;border-left:4px solid var(--bd)}
.msg .who{font-size:12px;color:var(--mut)}.msg .who .role{font-weight:600;text-transform:uppercase;letter-spacing:.03em}
.msg .who .fn{font-family:ui-monospace,"DejaVu Sans Mono",monospace;color:#6b3fa0}
.role-system{border-color:#9aa5b1}.role-user{border-color:#0b5cad}.role-assistant{border-color:#2e8540}
.role-tool{border-color:#b7791f}.role-other{border-color:#6b5b95}
.call{margin:4px 0}.call .fn{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-weight:600;color:#6b3fa0}
.cut{display:inline-block;margin:4px 0;padding:1px 6px;background:#fff3c4;color:#6a4a00;font-style:italic;
 font-family:system-ui,sans-serif;border-radius:3px}
details.fold>summary{cursor:pointer;color:var(--mut);font-size:12.5px}
.skip{color:var(--mut);font-style:italic}
.tools{margin:4px 0}.tools input[type=search]{padding:3px 6px;width:260px}
footer{margin-top:30px;color:var(--mut);font-size:12px}
"""

JS = r"""
(function(){
"use strict";
var D=null,T={},ROLES={system:1,user:1,assistant:1,tool:1};
function data(){if(D===null){D=JSON.parse(document.getElementById("report-data").textContent);}return D;}
function traj(i){if(!(i in T)){var el=document.getElementById("traj-"+i);T[i]=el?JSON.parse(el.textContent):null;}return T[i];}
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;if(text!=null)e.textContent=String(text);return e;}
function n(x){return Number(x).toLocaleString("en");}
function tlen(v){return typeof v==="string"?v.length:v[0].length+v[1]+v[2].length;}
function fill(e,v,ref){
 if(typeof v==="string"){e.textContent=v;return e;}
 e.appendChild(document.createTextNode(v[0]));
 e.appendChild(el("span","cut","… "+n(v[1])+" characters omitted"+(ref?"; the full text is in "+ref:"")+" …"));
 e.appendChild(document.createTextNode(v[2]));return e;}
function first(v){var s=typeof v==="string"?v:v[0];s=s.replace(/^\s+/,"");var i=s.indexOf("\n");if(i>=0)s=s.slice(0,i);return s.length>110?s.slice(0,110)+"…":s;}
function lines(v){var s=typeof v==="string"?v:v[0]+v[2],c=0;for(var i=0;i<s.length&&c<=200;i++)if(s.charCodeAt(i)===10)c++;return c;}
function block(label,v,cls,ref,fold,foldLines){
 var pre=fill(el("pre",cls),v,ref),len=tlen(v);
 if(len>(fold||800)||lines(v)>(foldLines||15)){var d=el("details","fold");
  d.appendChild(el("summary",null,(label?label+" · ":"")+n(len)+" characters · "+first(v)));d.appendChild(pre);return d;}
 return pre;}
function fmt(x,d){return typeof x==="number"?x.toFixed(d):(x==null?"—":String(x));}
function fmtm(x){return typeof x==="number"&&Number.isInteger(x)?String(x):fmt(x,3);}
function verdict(ep){if(ep.infra_error)return"infra error";if(ep.pass===true)return"passed";if(ep.pass===false)return"failed";return"not passed (no verdict)";}
function errbox(what,e,cls){var b=el("div","err"+(cls?" "+cls:""));
 b.appendChild(el("b",null,what+": "));b.appendChild(document.createTextNode([e.kind,e.phase].filter(Boolean).join(" · ")));
 if(e.message!=null)b.appendChild(block(null,e.message,"errmsg",null));return b;}
function kv(obj,cls){var t=el("table","kv "+cls),tb=el("tbody");
 Object.keys(obj).forEach(function(k){var tr=el("tr");tr.appendChild(el("td",null,k));
  var td=el("td",null,fmtm(obj[k]));td.setAttribute("data-metric-name",k);tr.appendChild(td);tb.appendChild(tr);});
 t.appendChild(tb);return t;}
function message(m,ref){
 if(m.skip!=null)return el("p","skip","… "+n(m.skip)+" messages left out to keep this page small; the full conversation is in "+(ref||"the run folder")+" …");
 var role=String(m.r),d=el("div","msg role-"+(ROLES[role]?role:"other"));
 var who=el("div","who");who.appendChild(el("span","role",role));
 if(m.n)who.appendChild(el("span","fn"," "+m.n));
 if(m.id)who.appendChild(el("small",null," "+m.id));
 if(m.u)who.appendChild(el("small",null," · text of "+m.u+" MCP content item"+(m.u>1?"s":"")));
 d.appendChild(who);
 if(m.c!=null)d.appendChild(role==="tool"?block("output",m.c,"out",ref):block(m.r,m.c,"txt",ref,3000,60));
 (m.tc||[]).forEach(function(c){var w=el("div","call");w.appendChild(el("span","fn","→ "+c.n));
  if(c.id)w.appendChild(el("small",null," "+c.id));w.appendChild(block(null,c.a,"args",ref,2000,40));d.appendChild(w);});
 return d;}
function body(ep){
 var b=el("div","ep-body"),f=el("p","facts");
 [["verdict",verdict(ep)],["status",ep.status],["reward",fmt(ep.reward,2)],["turns",ep.turns],["tool calls",ep.tool_calls],
  ["conflict wait",ep.conflict_wait?fmt(ep.conflict_wait,1)+" s":null],["ref",ep.ref]].forEach(function(p){
  if(p[1]==null||p[1]==="")return;var s=el("span");s.appendChild(el("b",null,p[0]+" "));s.appendChild(document.createTextNode(String(p[1])));f.appendChild(s);});
 b.appendChild(f);
 if(ep.infra_error)b.appendChild(errbox("Infra error (counted apart, not graded)",ep.infra_error,""));
 if(ep.failure)b.appendChild(errbox("Failure (scored 0)",ep.failure,"failure"));
 if(ep.timings&&Object.keys(ep.timings).length){var tm=el("p","facts timings");tm.appendChild(el("b",null,"timings (s) "));
  Object.keys(ep.timings).forEach(function(k){var s=el("span",null,k+" ");s.appendChild(el("code",null,fmt(ep.timings[k],2)));s.setAttribute("data-phase",k);tm.appendChild(s);});b.appendChild(tm);}
 if(ep.metrics&&Object.keys(ep.metrics).length){b.appendChild(el("h4",null,"Dense metrics"));b.appendChild(kv(ep.metrics,"metrics"));}
 var t=ep.x==null?null:traj(ep.x);
 if(ep.x==null){b.appendChild(el("p","skip",ep.ref?"No trajectory was read for this episode.":"No trajectory available for this episode."));return b;}
 if(t===null){b.appendChild(el("p","skip","This trajectory was left out to keep the page small; it is in "+ep.ref+"."));return b;}
 if(t.err)b.appendChild(el("p","skip",t.err));
 b.appendChild(el("h4",null,"Conversation ("+t.m.length+" entries)"));
 var box=el("div","msgs");t.m.forEach(function(m){box.appendChild(message(m,ep.ref));});b.appendChild(box);
 b.appendChild(el("h4",null,"Evaluator output"));
 b.appendChild(t.e==null?el("p","skip","none"):block("evaluator output",t.e,"evalout",ep.ref,3000,60));
 return b;}
function episode(ep){
 var d=el("details","ep");d.setAttribute("data-repeat",ep.repeat);
 d.appendChild(el("summary",null,"repeat "+ep.repeat+" · "+verdict(ep)+" · reward "+fmt(ep.reward,2)+" · "+ep.turns+" turns · "+ep.tool_calls+" tool calls"+(ep.timings&&ep.timings.agent!=null?" · agent "+fmt(ep.timings.agent,1)+" s":"")));
 d.addEventListener("toggle",function(){if(d.open&&!d.hasAttribute("data-drawn")){d.setAttribute("data-drawn","");d.appendChild(body(ep));}});
 return d;}
function toggle(b){
 var tr=b.closest("tr"),nx=tr.nextElementSibling,open=b.getAttribute("aria-expanded")==="true";
 if(open){if(nx&&nx.classList.contains("detail"))nx.hidden=true;b.setAttribute("aria-expanded","false");return;}
 if(!nx||!nx.classList.contains("detail")){
  nx=el("tr","detail");var td=el("td");td.colSpan=tr.cells.length;
  var eps=data().runs[+tr.getAttribute("data-run")][+tr.getAttribute("data-t")]||[];
  if(!eps.length)td.appendChild(el("p","skip","No episodes."));
  eps.forEach(function(ep){td.appendChild(episode(ep));});
  nx.appendChild(td);tr.after(nx);
  if(eps.length===1){var d=td.querySelector("details.ep");d.setAttribute("data-drawn","");d.appendChild(body(eps[0]));d.open=true;}}
 nx.hidden=false;b.setAttribute("aria-expanded","true");}
function key(td){if(!td||td.classList.contains("gn"))return null;var v=td.getAttribute("data-value");return v!=null?parseFloat(v):td.textContent.trim().toLowerCase();}
function sort(th){
 var table=th.closest("table"),tb=table.tBodies[0],i=th.cellIndex,dir=th.getAttribute("data-dir")==="asc"?"desc":"asc";
 th.setAttribute("data-dir",dir);
 var rows=[].slice.call(tb.rows).filter(function(r){return!r.classList.contains("detail");}).map(function(r){
  var d=r.nextElementSibling;return[r,d&&d.classList.contains("detail")?d:null,key(r.cells[i])];});
 rows.sort(function(a,b){var x=a[2],y=b[2];if(x===y)return 0;if(x===null||x==="—")return 1;if(y===null||y==="—")return-1;
  var c=x<y?-1:1;return dir==="asc"?c:-c;});
 rows.forEach(function(r){tb.appendChild(r[0]);if(r[1])tb.appendChild(r[1]);});}
function filter(sec){
 var q=sec.querySelector("input.filter").value.trim().toLowerCase(),f=sec.querySelector("input.failing").checked;
 sec.querySelectorAll("tr.task").forEach(function(tr){
  var show=(!q||tr.getAttribute("data-task").toLowerCase().indexOf(q)>=0)&&(!f||tr.getAttribute("data-failing")==="1");
  tr.hidden=!show;var d=tr.nextElementSibling;
  if(d&&d.classList.contains("detail"))d.hidden=!show||tr.querySelector("button.tg").getAttribute("aria-expanded")!=="true";});}
document.addEventListener("click",function(ev){
 var b=ev.target.closest("button.tg");if(b){toggle(b);return;}
 var th=ev.target.closest("table.sortable th");if(th&&(th.hasAttribute("data-sort")||th.closest("#compare")))sort(th);});
document.addEventListener("input",function(ev){var s=ev.target.closest("section.run");if(s&&ev.target.matches("input.filter,input.failing"))filter(s);});
window.__reportReadyAt=performance.now();window.__reportReady=true;document.documentElement.setAttribute("data-ready","1");
})();
"""  # noqa: E501 - compact JavaScript, a statement or a function a line, as the page ships it


def _csp(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    # nothing may be fetched or connected to; only this page's own script runs (by hash), styles inline
    return ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
            f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'")


def render_html(report: dict, trajectory: Callable[[str], dict], *, max_bytes: int = MAX_BYTES,
                title: str | None = None) -> str:
    """The results page of `report` (the JSON `decathlon report --json` prints), one self-contained HTML
    document. `trajectory(ref)` gives an episode's messages and evaluator output; it is called once per
    episode that has a ref, and what it raises is shown on the page in place of the conversation."""
    runs = report.get("runs") or []
    phases = _phases(report)
    # the episodes, and their trajectories in compact form (every text cut to the largest cap)
    episodes: list[list[list[dict]]] = []
    compacts: list[dict | None] = []
    for run in runs:
        per_task = []
        for t in run.get("tasks") or []:
            eps = []
            for ep in t.get("runs") or []:
                rec = _clean({k: v for k, v in ep.items()})
                ref = ep.get("ref")
                rec["x"] = None
                if ref:
                    try:
                        ct = _compact(trajectory(ref), CAPS[0])
                    except Exception as exc:  # noqa: BLE001 - a broken trajectory is shown, not fatal
                        ct = {"m": [], "e": None, "err": f"the trajectory cannot be read: {type(exc).__name__}: "
                                                         f"{str(exc)[:ERROR_CAP]}"}
                    rec["x"] = len(compacts)
                    compacts.append(ct)
                eps.append(rec)
            per_task.append(eps)
        episodes.append(per_task)

    page_title = title or ("decathlon results · " + " vs ".join(str(r.get("label")) for r in runs[:3])
                           if runs else "decathlon results")
    shell_head = (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{_esc(_csp(JS))}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_esc(page_title)}</title><style>{CSS}</style></head><body>"
        f'<header><h1>{_esc(page_title)}</h1>'
        f'<p class="meta">{len(runs)} run(s) · {sum(len(r.get("tasks") or []) for r in runs)} task rows · '
        f"{sum(len(c) for e in episodes for c in e)} episodes</p></header>"
        + _overall(report, phases) + _compare(report)
        + "".join(_run_section(i, run, phases) for i, run in enumerate(runs))
    )
    data_block = f'<script type="application/json" id="report-data">{_script_json({"runs": episodes})}</script>'
    # the trajectories get what the rest of the page leaves of the budget
    fixed = _nbytes(shell_head) + _nbytes(data_block) + _nbytes(JS) + 2000 + 60 * len(compacts)
    blocks, how = _fit(compacts, max(0, max_bytes - fixed))
    traj_blocks = []
    for i, b in enumerate(blocks):
        if b:  # "" = left out for size: no block, and the page says where the trajectory is
            traj_blocks.append(f'<script type="application/json" id="traj-{i}">{b}</script>')
    footer = (f'<footer><p id="caps">{_esc(how)} A cut says how many characters it left out and where the '
              "full text is.</p><p>Self-contained page made by <code>decathlon report --html</code>: "
              "nothing is fetched from anywhere.</p></footer>")
    page = (shell_head + footer + data_block + "".join(traj_blocks) + f"<script>{JS}</script></body></html>\n")
    # an agent's text may hold lone surrogates, which no file can store: they become "?"
    return page.encode("utf-8", "replace").decode("utf-8")
