"""`decathlon tasks --runs live` (issue 23, item 4): the tasks a live policy can run here today, and for the
others, the server that stops them; an import of recorded runs runs none live."""
from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO, write_server, write_task


def tasks(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "decathlon", "tasks", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120)


def _source(tmp_path):
    source = tmp_path / "src"
    write_server(source, "filesystem", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "${agent_workspace}"])
    write_server(source, "notion", "npx", ["-y", "@notionhq/notion-mcp-server"])
    write_task(source, "files-only", servers=["filesystem"])
    write_task(source, "needs-notion", servers=["filesystem", "notion"])
    write_task(source, "needs-undefined", servers=["nowhere"])
    return source


def test_the_filter_keeps_only_what_runs_live_and_the_listing_says_why_not(tmp_path):
    source = _source(tmp_path)
    every = json.loads(tasks("--source", str(source), "--json").stdout)
    by_id = {t["id"]: t for t in every}
    assert by_id["files-only"]["live_here"] is True and "live_blocked_by" not in by_id["files-only"]
    assert by_id["needs-notion"]["live_blocked_by"] == "notion: replay_only_server"
    assert by_id["needs-undefined"]["live_blocked_by"] == "nowhere: unknown_server"
    live = json.loads(tasks("--source", str(source), "--runs", "live", "--json").stdout)
    assert [t["id"] for t in live] == ["files-only"]
    table = tasks("--source", str(source)).stdout
    assert "no (notion: replay_only_server)" in table
    assert "1 tasks (those a live policy can run here)" in tasks("--source", str(source), "--runs", "live").stdout


def test_an_import_of_recorded_runs_runs_nothing_live(tmp_path):
    source = _source(tmp_path)
    (source / "import-report.json").write_text("{}")
    out = tasks("--source", str(source), "--json")
    assert {t["live_blocked_by"] for t in json.loads(out.stdout)} == {"the source is an import of recorded runs (replay only)"}
    assert json.loads(tasks("--source", str(source), "--runs", "live", "--json").stdout) == []
