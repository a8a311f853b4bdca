"""The results page (`decathlon report --html`): numbers shown, hostile content inert, nothing external,
long texts folded and cut within the size budget; and the page in a real headless browser (Debian's
chromium through Playwright): no console errors, the known numbers, an episode's tool call on expand, and
a screenshot kept in test-artifacts/report-page.png."""
from __future__ import annotations

import json
import math
import os
import re
from html.parser import HTMLParser

import pytest

from browser import report_page
from conftest import REPO
from decathlon.reports.html import render_html

HOSTILE = '</script><script>alert(1)</script><img src=x onerror="alert(2)"><!--<script>'
ARTIFACTS = REPO / "test-artifacts"
BIG = 200_000  # characters of one long tool output


# --------------------------------------------------------------------------------------- known report

def _ep(repeat: int, passed: bool | None, *, infra: bool = False, ref: str | None = None, agent: float = 10.0,
        metrics: dict | None = None) -> dict:
    return {"repeat": repeat, "pass": None if infra else passed, "reward": 1.0 if passed and not infra else 0.0,
            "status": "infra_error" if infra else ("passed" if passed else "failed"),
            "infra_error": {"kind": "setup_failed", "message": "preprocess exited 1", "phase": "setup"} if infra else None,
            "failure": None, "turns": 4, "tool_calls": 3,
            "timings": {"acquire": 0.5, "setup": 2.0, "agent": agent, "evaluate": 1.0, "release": 0.25},
            "metrics": metrics or {}, "conflict_wait": 0.0, "ref": ref}


def known_report() -> dict:
    """3 tasks × 3 repeats: alpha 3/3, beta 1/3, gamma 0/2 with one infra error (numbers worked out by hand)."""
    def task(name, eps, p1, pk, phk, passed, graded, infra):
        return {"task": name, "episodes": 3, "graded": graded, "passed": passed, "infra_errors": infra,
                "pass@1": p1, "pass@k": pk, "pass^k": phk, "avg_turns": 4.0, "avg_tool_calls": 3.0,
                "timings": {"acquire": 0.5, "setup": 2.0, "agent": 10.0, "evaluate": 1.0, "release": 0.25},
                "runs": eps}
    tasks = [
        task("alpha", [_ep(1, True, ref="alpha/1", metrics={"rows_correct": 0.75}), _ep(2, True, ref="alpha/2"),
                       _ep(3, True, ref=None)], 1.0, 1.0, 1.0, 3, 3, 0),
        task("beta", [_ep(1, True, ref="beta/1"), _ep(2, False, ref="hostile"), _ep(3, False, ref="broken")],
             0.333333, 1.0, 0.0, 1, 3, 0),
        task("gamma", [_ep(1, False, ref="gamma/1"), _ep(2, False, infra=True, ref="gamma/2"),
                       _ep(3, False, ref="gamma/3")], 0.0, None, None, 0, 2, 1),
    ]
    run = {"label": "toolathlon-mini · oracle · local", "kind": "run", "source": "toolathlon-mini",
           "policy": "oracle", "backend": "local", "mode": "live", "folders": ["out/a"], "k": 3,
           "episodes": 9, "graded": 8, "infra_errors": 1, "passed": 4,
           "pass@1": {"mean": 0.5, "std": 0.166667, "per_repeat": [0.666667, 0.5, 0.333333]},
           "pass@k": 1.0, "pass^k": 0.5, "avg_turns": 4.0, "avg_tool_calls": 3.0,
           "timings": {p: {"median": m, "mean": m} for p, m in
                       (("acquire", 0.5), ("setup", 2.0), ("agent", 12.5), ("evaluate", 1.0), ("release", 0.25))},
           "conflicts": [{"group": ["alpha", "beta"], "waited_episodes": 2, "wait_seconds": 7.5}],
           "tasks": tasks}
    return {"note": "Infra errors are counted apart and excluded from every rate.", "runs": [run]}


def conversation(ref: str) -> dict:
    msgs = [{"role": "system", "content": "You are an agent."},
            {"role": "user", "content": f"Fill the report for {ref}."},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "write_file", "arguments": json.dumps({"path": "report.csv", "rows": 3})}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "x" * 40 + "LONG-OUTPUT-START" + "y" * BIG + "END"},
            {"role": "assistant", "content": [{"type": "text", "text": "Done."}, {"type": "image_url",
                                                                                  "image_url": {"url": "https://evil.example/a.png"}}]}]
    return {"messages": msgs, "evaluator_output": f"checked {ref}: ok"}


def hostile_conversation() -> dict:
    return {"messages": [
        {"role": "user", "content": HOSTILE},
        {"role": HOSTILE, "content": "a role that is markup"},
        {"role": "assistant", "content": HOSTILE, "tool_calls": [
            {"id": HOSTILE, "type": "function", "function": {"name": HOSTILE, "arguments": json.dumps({"q": HOSTILE})}},
            {"id": "c2", "type": "function", "function": {"name": "raw", "arguments": "not json " + HOSTILE}}]},
        {"role": "tool", "tool_call_id": HOSTILE, "content": HOSTILE + " https://evil.example/x.js"},
        {"role": "tool", "tool_call_id": "c2", "content": json.dumps({"type": "text", "text": HOSTILE})},
        {"role": "assistant", "content": "lone surrogate \ud800 and NUL \x00 and \u2028 line separator"},
    ], "evaluator_output": HOSTILE}


def trajectory(ref: str) -> dict:
    if ref == "hostile":
        return hostile_conversation()
    if ref == "broken":
        raise OSError("no such file: broken/messages.json")
    return conversation(ref)


# ------------------------------------------------------------------------------------ page inspection

class _Cells(HTMLParser):
    """Every element with data-metric, with its text and the data-run/data-task of its enclosing row."""

    def __init__(self):
        super().__init__()
        self.stack: list[tuple[str, dict]] = []
        self.found: list[dict] = []
        self.open: list[dict] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("br", "meta", "input", "img", "link"):
            return
        self.stack.append((tag, a))
        if "data-metric" in a:
            row = next((x for t, x in reversed(self.stack) if t == "tr"), {})
            table = next((x for t, x in reversed(self.stack) if t == "table"), {})
            cell = {"metric": a["data-metric"], "value": a.get("data-value"), "run": a.get("data-run", row.get("data-run")),
                    "task": row.get("data-task"), "table": table.get("id"), "text": ""}
            self.found.append(cell)
            self.open.append(cell)

    def handle_endtag(self, tag):
        while self.stack:
            t, a = self.stack.pop()
            if "data-metric" in a and self.open:
                self.open.pop()
            if t == tag:
                break

    def handle_data(self, data):
        for cell in self.open:
            cell["text"] += data


def cells(page: str) -> list[dict]:
    p = _Cells()
    p.feed(page)
    return p.found


def cell(page: str, metric: str, table: str = "overall", task: str | None = None) -> dict:
    hits = [c for c in cells(page) if c["metric"] == metric and c["table"] == table and c["task"] == task]
    assert len(hits) == 1, (metric, table, task, hits)
    return hits[0]


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags(page: str) -> list[tuple[str, dict]]:
    """The page's real elements (a script block's text is data, not markup, as in a browser)."""
    p = _Tags()
    p.feed(page)
    return p.tags


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def json_blocks(page: str) -> dict[str, object]:
    blocks = re.findall(r'<script type="application/json" id="([^"]+)">(.*?)</script>', page, re.S)
    return {i: json.loads(body) for i, body in blocks}


# -------------------------------------------------------------------------------------------- units

def test_numbers_are_shown():
    page = render_html(known_report(), trajectory)
    p1 = cell(page, "pass@1")
    assert p1["value"] == "0.5" and "50.0%" in p1["text"] and "± 16.7" in p1["text"]
    assert "100.0%" in cell(page, "pass@k")["text"] and "k=3" in cell(page, "pass@k")["text"]
    assert "50.0%" in cell(page, "pass^k")["text"]
    assert cell(page, "passed")["text"].split() == ["4", "/", "8"]
    assert cell(page, "infra_errors")["text"] == "1"
    assert cell(page, "avg_turns")["text"] == "4.0" and cell(page, "avg_tool_calls")["text"] == "3.0"
    assert cell(page, "timing:agent")["text"] == "12.5"
    assert "Infra errors are counted apart" in page
    # per task, with the run's k in the headers
    assert cell(page, "pass@1", "run-0-tasks", "beta")["text"] == "33.3%"
    assert cell(page, "pass^k", "run-0-tasks", "beta")["text"] == "0.0%"
    assert cell(page, "pass@k", "run-0-tasks", "gamma")["text"] == "—"
    assert cell(page, "infra_errors", "run-0-tasks", "gamma")["text"] == "1"
    assert "Pass@3" in page and "Pass^3" in page
    # per repeat, the conflict group, and no comparison table for one run
    assert [c["text"] for c in cells(page) if c["metric"] == "pass@1:repeat"] == ["66.7%", "50.0%", "33.3%"]
    assert "Conflict groups that serialised work" in page and "alpha · beta" in page
    assert 'id="compare"' not in page


def test_several_runs_are_compared_task_by_task():
    report = known_report()
    other = json.loads(json.dumps(report["runs"][0]))
    other.update(label="recorded · claude-4.5-sonnet", kind="recorded", k=1)
    other["tasks"] = [t for t in other["tasks"] if t["task"] != "gamma"]
    other["tasks"][1]["pass@1"] = 1.0
    report["runs"].append(other)
    page = render_html(report, trajectory)
    assert 'id="run-0"' in page and 'id="run-1"' in page and 'id="compare"' in page
    compared = {(c["task"], c["run"]): c["text"] for c in cells(page) if c["table"] is None and c["task"]}
    assert compared[("beta", "0")].startswith("33.3%") and compared[("beta", "1")].startswith("100.0%")
    assert ("gamma", "0") not in compared  # in one run only: nothing to compare
    assert "1 task(s) run in only one of these runs are not listed" in page
    other["tasks"] = []
    assert "These runs have no task in common" in render_html(report, trajectory)


def test_hostile_content_cannot_break_out():
    report = known_report()
    report["runs"][0]["label"] = HOSTILE
    report["runs"][0]["tasks"][1]["task"] = HOSTILE
    report["runs"][0]["tasks"][1]["runs"][1]["metrics"] = {HOSTILE: 1.0, "nan": math.nan}
    report["runs"][0]["tasks"][1]["runs"][1]["failure"] = {"kind": HOSTILE, "message": HOSTILE, "phase": "evaluate"}
    page = render_html(report, trajectory)
    page.encode("utf-8")  # lone surrogates made storable
    # the only script elements are ours: the data blocks and the one inline script (no src anywhere)
    tags = re.findall(r"<script[^>]*>", page, re.I)
    assert tags[-1] == "<script>" and all(t.startswith('<script type="application/json" id=') for t in tags[:-1])
    assert len(re.findall(r"</script", page, re.I)) == len(tags)
    assert "<img" not in page.lower() and "<!--" not in page
    assert "alert(1)" not in page.split("<script>")[-1].split("</script>")[0]  # not in our code
    # every data block is still valid JSON and the hostile text round-trips as text
    blocks = json_blocks(page)
    assert sum(1 for x in _strings(blocks) if HOSTILE in x) >= 6
    hostile = [b for b in blocks.values() if isinstance(b, dict) and "m" in b and b["m"] and b["m"][0].get("c") == HOSTILE]
    assert len(hostile) == 1
    # the role is never a class name of its own
    assert 'class="msg role-' not in page


def test_no_external_references():
    page = render_html(known_report(), trajectory)  # its conversations mention https://evil.example/…
    elements = tags(page)
    assert not [t for t, _ in elements if t in ("link", "img", "iframe", "object", "embed", "base", "form")]
    assert not [a for t, a in elements if t == "script" and "src" in a]
    for tag, attrs in elements:
        for name in ("src", "href", "action", "srcset", "poster", "data"):
            assert name not in attrs or attrs[name].startswith("#"), (tag, attrs)  # in-page anchors only
    markup = re.sub(r'<script type="application/json" id="[^"]+">.*?</script>', "", page, flags=re.S)
    assert "http://" not in markup and "https://" not in markup and "//evil" not in markup
    assert not re.search(r"url\(", page.split("<style>")[1].split("</style>")[0])
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src &#x27;none&#x27;" in csp and "script-src &#x27;sha256-" in csp


def test_long_texts_are_cut_with_a_note_and_the_page_fits_its_budget():
    page = render_html(known_report(), trajectory, max_bytes=120_000)
    assert len(page.encode("utf-8")) <= 120_000
    blocks = json_blocks(page)
    outputs = [m["c"] for b in blocks.values() if isinstance(b, dict) and "m" in b for m in b["m"]
               if m.get("r") == "tool" and isinstance(m.get("c"), list)]
    assert outputs, "the long tool outputs were not cut"
    original = "x" * 40 + "LONG-OUTPUT-START" + "y" * BIG + "END"
    for head, omitted, tail in outputs:
        assert original.startswith(head) and original.endswith(tail) and tail.endswith("END")
        assert len(head) + omitted + len(tail) == len(original) and omitted > BIG // 2
    assert re.search(r'id="caps">Texts longer than [\d,]+ characters are cut', page)
    assert "characters omitted" in page and "the full text is in" in page  # the note the script shows
    # the same report with room to spare keeps short texts whole
    roomy = render_html(known_report(), trajectory)
    short = [m for b in json_blocks(roomy).values() if isinstance(b, dict) and "m" in b for m in b["m"]
             if m.get("r") == "user"]
    assert all(isinstance(m["c"], str) for m in short)


def test_tiny_budget_leaves_trajectories_out_and_says_so():
    page = render_html(known_report(), trajectory, max_bytes=1)
    assert not [k for k in json_blocks(page) if k.startswith("traj-")]
    assert "some trajectories left out" in page


def test_episode_records_and_missing_or_broken_trajectories():
    blocks = json_blocks(render_html(known_report(), trajectory))
    alpha = blocks["report-data"]["runs"][0][0]
    assert [e["repeat"] for e in alpha] == [1, 2, 3] and alpha[2]["x"] is None  # ref None: no trajectory
    assert alpha[0]["metrics"] == {"rows_correct": 0.75}
    broken = blocks["report-data"]["runs"][0][1][2]
    assert "cannot be read" in blocks[f"traj-{broken['x']}"]["err"]
    first = blocks[f"traj-{alpha[0]['x']}"]
    call = first["m"][2]["tc"][0]
    assert call["n"] == "write_file" and call["a"] == '{\n  "path": "report.csv",\n  "rows": 3\n}'
    assert first["m"][3]["n"] == "write_file"  # the tool output names its call
    assert first["m"][4]["c"] == "Done.\n[image_url part, not shown]"


def test_mcp_text_content_is_unwrapped():
    blocks = json_blocks(render_html(known_report(), trajectory))
    hostile = next(b for b in blocks.values() if isinstance(b, dict) and b.get("m") and b["m"][0].get("c") == HOSTILE)
    unwrapped = [m for m in hostile["m"] if m.get("u")]
    assert len(unwrapped) == 1 and unwrapped[0]["c"] == HOSTILE


def test_terminal_colours_of_evaluator_and_tool_output_are_not_shown_as_codes():
    """Evaluators print in colour (termcolor, rich): the page shows their text, never `\x1b[32m` litter."""
    def coloured(ref: str) -> dict:
        return {"messages": [{"role": "user", "content": "go"},
                             {"role": "tool", "tool_call_id": "c", "content": "\x1b[1;31mERROR\x1b[0m in row 3"}],
                "evaluator_output": "\x1b[32m✓ rows match\x1b[0m\n\x1b]0;title\x07\x1b[91mFAIL\x1b[m: 2/7 found"}
    report = known_report()
    report["runs"][0]["tasks"][1]["runs"][1]["infra_error"] = {"kind": "grader_crashed", "phase": "evaluate",
                                                                "message": "\x1b[31mTraceback\x1b[0m"}
    page = render_html(report, coloured)
    assert "\x1b" not in page and "\\u001b" not in page and "[32m" not in page and "[0m" not in page
    texts = [t for b in json_blocks(page).values() for t in _strings(b)]
    assert "✓ rows match\nFAIL: 2/7 found" in texts and "ERROR in row 3" in texts
    assert "Traceback" in page


def test_empty_report_renders():
    page = render_html({"note": "n", "runs": []}, trajectory)
    assert page.startswith("<!DOCTYPE html>") and "window.__reportReady=true" in page


def test_recorded_runs_fit_in_five_megabytes():
    """The 108 recorded Toolathlon runs (~20 MB of JSON) make a page under 5 MB."""
    from recorded_runs import HOW, REQUIRED, TRAJECTORIES, TASKS
    if not TASKS:
        pytest.fail(HOW) if REQUIRED else pytest.skip(HOW)
    from decathlon.reports.report import build_report, trajectory as read_trajectory
    report = build_report([TRAJECTORIES])
    page = render_html(report, read_trajectory)
    assert len(page.encode("utf-8")) < 5_000_000
    assert len([k for k in json_blocks(page) if k.startswith("traj-")]) == len(TASKS)


# ---------------------------------------------------------------------------------- the real browser

def test_page_in_headless_chromium(tmp_path):
    page_file = tmp_path / "report.html"
    page_file.write_text(render_html(known_report(), trajectory), encoding="utf-8")
    problems: list[str] = []
    requests: list[str] = []
    with report_page(page_file.as_uri(), problems, requests) as page:
        def text(selector: str) -> str:
            return page.locator(selector).inner_text().strip()

        overall = '#overall tr[data-run="0"]'
        assert text(f'{overall} td[data-metric="pass@1"]').startswith("50.0% ± 16.7")
        assert text(f'{overall} td[data-metric="pass@k"]').startswith("100.0%")
        assert text(f'{overall} td[data-metric="pass^k"]').startswith("50.0%")
        assert text(f'{overall} td[data-metric="passed"]') == "4 / 8"
        assert text(f'{overall} td[data-metric="infra_errors"]') == "1"
        assert text('tr.task[data-task="beta"] td[data-metric="pass@1"]') == "33.3%"

        # a task expands to its episodes; a single click on one shows its conversation
        page.click('tr.task[data-task="alpha"] button.tg')
        episodes = page.locator("tr.detail details.ep")
        assert episodes.count() == 3
        episodes.nth(0).locator("summary").click()
        args = page.locator("tr.detail pre.args").first
        args.wait_for(timeout=5_000)
        assert '"path": "report.csv"' in args.inner_text()
        assert "write_file" in text("tr.detail .call .fn >> nth=0")
        fold = page.locator("tr.detail details.fold").first  # the long tool output, folded
        assert "characters" in fold.locator("summary").inner_text()
        fold.locator("summary").click()
        assert "characters omitted; the full text is in alpha/1" in fold.locator(".cut").inner_text()
        assert "checked alpha/1: ok" in text("tr.detail pre.evalout >> nth=0")
        assert text('tr.detail td[data-metric-name="rows_correct"]') == "0.750"
        # the third repeat has no trajectory, and says so
        episodes.nth(2).locator("summary").click()
        episodes.nth(2).get_by_text("No trajectory available").wait_for(timeout=5_000)  # drawn on open

        # hostile content shows as text, runs nothing, loads nothing
        page.click('tr.task[data-task="beta"] button.tg')
        beta = page.locator("tr.detail").nth(1)
        beta.locator("details.ep").nth(1).locator("summary").click()
        beta.locator("pre.args").first.wait_for(timeout=5_000)
        assert HOSTILE in beta.locator("details.ep").nth(1).inner_text()
        assert page.evaluate("document.querySelectorAll('img, iframe, link, script[src]').length") == 0
        beta.locator("details.ep").nth(2).locator("summary").click()
        beta.locator("details.ep").nth(2).get_by_text("cannot be read").wait_for(timeout=5_000)

        # filtering and sorting the task table
        page.fill("#run-0 input.filter", "gam")
        assert page.locator("tr.task:visible").count() == 1
        page.fill("#run-0 input.filter", "")
        page.click('#run-0-tasks th:has-text("Pass@1")')
        assert page.locator("tr.task").first.get_attribute("data-task") == "gamma"
        page.click('#run-0-tasks th:has-text("Pass@1")')  # back, best first, for the screenshot

        ARTIFACTS.mkdir(exist_ok=True)
        shot = ARTIFACTS / "report-page.png"
        tmp = ARTIFACTS / f".report-page.{os.getpid()}.png"  # one writer, renamed into place whole
        page.screenshot(path=str(tmp), full_page=True)
        os.replace(tmp, shot)
        print(f"screenshot: {shot}")
    assert not problems, problems
    assert requests and all(u.startswith("file://") for u in requests), requests
