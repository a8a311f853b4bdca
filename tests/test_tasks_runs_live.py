"""What runs here, and how (issue 31, item 1): `decathlon tasks` gives each task one status with every reason, its
scripts' network needs counted; `--runs live`, the manifest view and the verifiers taskset take the same answer; an
import of recorded runs runs none live; an unknown task's error names the listing."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from conftest import REPO, write_server, write_task
from decathlon.checkout import manifest, task_status
from decathlon.sandbox import reach
from recorded_runs import REQUIRED


def tasks(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "TOOLATHLON_ROOT"}
    environ["COLUMNS"] = "250"  # the table's width, whatever the test runner's terminal
    return subprocess.run([sys.executable, "-m", "decathlon", "tasks", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**environ, **(env or {})})


GITHUB_FETCHER = """
import requests
API = "https://api.github.com"
def fetch(repo):
    return requests.get(f"{API}/repos/{repo}/milestones").json()
"""


def _source(tmp_path: Path) -> Path:
    source = tmp_path / "src"
    write_server(source, "filesystem", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "${agent_workspace}"])
    write_server(source, "notion", "npx", ["-y", "@notionhq/notion-mcp-server"])
    write_server(source, "playwright_with_chunk", "npx", ["-y", "@lockon0927/playwright-mcp-with-chunk"])
    write_server(source, "emails", "uvx", ["emails-mcp", "--config_file", "${token.emails_config_file}"])
    write_server(source, "google_map", "npx", ["-y", "@modelcontextprotocol/server-google-maps"])
    write_task(source, "files-only", servers=["filesystem"])
    write_task(source, "needs-notion", servers=["filesystem", "notion"])
    write_task(source, "needs-undefined", servers=["nowhere"])
    # The git-milestone: every server runs here, but the preprocess calls api.github.com (through a module
    # of the task's own, imported relatively, as the checkout's does).
    milestone = write_task(source, "milestone", servers=["filesystem"],
                           preprocess="from ..utils.github_fetcher import fetch\nfetch('o/r')\n")
    (milestone / "utils").mkdir()
    (milestone / "utils" / "__init__.py").write_text("")
    (milestone / "utils" / "github_fetcher.py").write_text(GITHUB_FETCHER)
    # BigQuery through the checkout's own helper module: emulated here, so graded, and it says so.
    write_task(source, "bq", servers=["filesystem"],
               preprocess="from utils.app_specific.bq import client\nclient()\n")
    (source / "utils" / "app_specific").mkdir(parents=True)
    (source / "utils" / "app_specific" / "bq.py").write_text(
        "from google.cloud import bigquery\n\ndef client():\n    return bigquery.Client()\n")
    # Two servers that do not run here, a script that starts another, a host: every reason, not the first.
    write_task(source, "many", servers=["notion", "playwright_with_chunk", "emails"],
               preprocess="from googleapiclient.discovery import build\nbuild('gmail', 'v1')\n",
               evaluator="async def f(m):\n    await m.connect_servers(['google_map'])\n")
    # Sheets through gspread: answered by the Workspace emulator behind the front.
    write_task(source, "sheets", servers=["filesystem"], evaluator="import gspread\n")
    # A copy of a template spreadsheet in someone else's Drive: graded once a seed pack brings it.
    write_task(source, "template", servers=["filesystem"],
               preprocess="URL = 'https://docs.google.com/spreadsheets/d/1" + "T" * 40 + "/edit'\nimport gspread\n")
    # A preprocess that unpacks an archive the task's folder lacks.
    write_task(source, "seedless", servers=["filesystem"],
               preprocess="import os, tarfile, sys\ntarfile.open(os.path.join(sys.argv[2], 'files.tar.gz'))\n")
    return source


def test_each_task_has_one_status_with_every_reason(tmp_path):
    source = _source(tmp_path)
    proc = tasks("--source", str(source), "--json")
    assert proc.returncode == 0, proc.stderr
    by_id = {t["id"]: t for t in json.loads(proc.stdout)}
    assert by_id["files-only"]["status"] == "graded" and by_id["files-only"]["live_here"] is True
    assert by_id["files-only"]["blocked_by"] == [] and by_id["files-only"]["reasons"] == []
    assert by_id["needs-notion"]["status"] == "rerun-only"
    assert by_id["needs-notion"]["blocked_by"] == ["notion: replay_only_server"]
    assert "--mode rerun" in by_id["needs-notion"]["still_runs"]
    assert by_id["needs-undefined"]["blocked_by"] == ["nowhere: unknown_server"]

    milestone = by_id["milestone"]
    assert milestone["status"] == "replay-only" and milestone["live_here"] is False
    [why] = milestone["reasons"]
    assert why["what"] == "scripts" and why["kind"] == "github"
    assert "preprocess reaches GitHub (api.github.com, tasks/finalpool/milestone/utils/github_fetcher.py:3)" in why["why"]
    assert "replay of an import" in milestone["still_runs"]

    assert by_id["bq"]["status"] == "graded" and by_id["bq"]["emulated"] == ["BigQuery"]

    many = by_id["many"]
    assert many["status"] == "replay-only"
    kinds = {(r["what"], r["name"]) for r in many["reasons"]}
    assert {("server", "notion"), ("server", "playwright_with_chunk"),
            ("scripts", "Google Workspace (Gmail, Docs, YouTube, Drive v2)"), ("scripts", "google_map")} <= kinds, kinds
    assert by_id["sheets"]["status"] == "graded" and by_id["sheets"]["emulated"] == ["Google Drive"]
    template = by_id["template"]
    assert template["status"] == "needs-seed" and template["live_here"] is False, template
    [why] = template["reasons"]
    assert (why["what"], why["kind"], why["name"]) == ("vendor-seed", "seed_missing", "spreadsheet 1" + "T" * 40)
    assert "decathlon seeds capture" in why["why"] and "preprocess/main.py:1" in why["why"]
    assert many["services"] == ["mail"]

    seedless = by_id["seedless"]
    assert seedless["status"] == "graded-without-seed" and seedless["live_here"] is False
    assert seedless["reasons"][0]["name"] == "initial_workspace/files.tar.gz"


def test_the_listing_says_the_status_and_every_reason_in_one_line(tmp_path):
    source = _source(tmp_path)
    here = {t["id"]: t["here"] for t in json.loads(tasks("--source", str(source), "--json").stdout)}
    assert here["many"].startswith("replay-only servers notion, playwright_with_chunk; ")
    assert "preprocess reaches Google Workspace (Gmail, Docs, YouTube, Drive v2) (import googleapiclient.discovery)" in \
        here["many"]
    assert "evaluation starts server google_map (replay only)" in here["many"]
    assert here["milestone"] == "preprocess reaches GitHub (api.github.com)"
    assert here["bq"] == "emulated BigQuery"
    assert here["seedless"] == "lacks initial_workspace/files.tar.gz"
    table = tasks("--source", str(source)).stdout  # the table shows that line (wrapped in its column)
    assert "replay-only servers notion," in table and "graded-without-seed" in table


def test_runs_live_lists_only_what_runs_and_is_graded_here(tmp_path):
    source = _source(tmp_path)
    live = json.loads(tasks("--source", str(source), "--runs", "live", "--json").stdout)
    assert [t["id"] for t in live] == ["bq", "files-only", "sheets"]
    assert "3 tasks (those a live policy runs and their real scripts grade here)" in tasks(
        "--source", str(source), "--runs", "live", env={"COLUMNS": "600"}).stdout
    rerun = json.loads(tasks("--source", str(source), "--status", "rerun-only", "--json").stdout)
    assert [t["id"] for t in rerun] == ["needs-notion", "needs-undefined"]


def test_an_import_of_recorded_runs_runs_nothing_live(tmp_path):
    source = _source(tmp_path)
    (source / "import-report.json").write_text("{}")
    out = tasks("--source", str(source), "--json")
    rows = json.loads(out.stdout)
    assert {t["status"] for t in rows} == {"replay-only"}
    assert {tuple(t["blocked_by"]) for t in rows} == {("source: import",)}
    assert json.loads(tasks("--source", str(source), "--runs", "live", "--json").stdout) == []


def test_an_unknown_task_names_the_listing(tmp_path):
    source = _source(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "decathlon", "run", "no-such-task", "--source", str(source),
                           "--policy", "null"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert f"`decathlon tasks --source {source}` lists them" in proc.stderr, proc.stderr


def test_the_manifest_view_gives_the_checkouts_statuses(tmp_path):
    if not (manifest.data_dir() / "tasks.csv").is_file():
        # CI has the data (.ci/run requires the recorded runs beside it): there its absence fails.
        missing = f"no Toolathlon facts table at {manifest.data_dir()} (DECATHLON_TOOLATHLON_DATA)"
        pytest.fail(missing) if REQUIRED else pytest.skip(missing)
    source = tmp_path / "src"
    write_server(source, "filesystem", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "${agent_workspace}"])
    write_server(source, "google-cloud", "uvx", ["google-cloud-mcp"])
    write_task(source, "ab-testing", servers=["google-cloud", "filesystem"], preprocess="pass\n")
    write_task(source, "git-milestone", servers=["filesystem"], preprocess="URL = 'https://api.github.com/repos'\n")
    rows = {r["id"]: r for r in json.loads(tasks("--source", "toolathlon-manifest", "--json",
                                                 env={"TOOLATHLON_ROOT": str(source)}).stdout)}
    listed = {r["id"]: r for r in json.loads(tasks("--source", str(source), "--json").stdout)}
    for name in ("ab-testing", "git-milestone"):
        assert rows[name]["status"] == listed[name]["status"]
        assert rows[name]["reasons"] == listed[name]["reasons"]
    assert rows["git-milestone"]["status"] == "replay-only"
    assert any("emulated here; yours only with --saas real" in c for c in rows["ab-testing"]["credentials"])
    live = json.loads(tasks("--source", "toolathlon-manifest", "--runs", "live", "--json",
                            env={"TOOLATHLON_ROOT": str(source)}).stdout)
    assert "git-milestone" not in {r["id"] for r in live}


def test_the_taskset_loads_what_tasks_runs_live_lists(tmp_path):
    from decathlon.training.env import DecathlonTaskset, DecathlonTasksetConfig
    source = _source(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = [t.data.task for t in DecathlonTaskset(DecathlonTasksetConfig(source=source)).load()]
    live = [t["id"] for t in json.loads(tasks("--source", str(source), "--runs", "live", "--json").stdout)]
    assert loaded == live == ["bq", "files-only", "sheets"]
    assert any("left out of the taskset, not graded here" in str(w.message) for w in caught)
    with pytest.raises(ValueError, match="milestone is replay-only here"):
        list(DecathlonTaskset(DecathlonTasksetConfig(source=source, tasks=["milestone"])).load())
    every = [t.data.task for t in DecathlonTaskset(DecathlonTasksetConfig(source=source, runs="all")).load()]
    assert len(every) == 9  # asked for: every task, each failing on its own


def test_a_shared_modules_commands_count_only_where_it_is_run(tmp_path):
    """The checkout's helper can fork a GitHub repository (`uv run -m …github_fork`), and every task imports it: that
    is no need of theirs. A module the task runs with `-m` is read as run."""
    source = tmp_path / "src"
    (source / "utils" / "general").mkdir(parents=True)
    (source / "utils" / "general" / "helper.py").write_text("CMD = 'uv run -m utils.forks.fork'\n")
    (source / "utils" / "forks").mkdir()
    (source / "utils" / "forks" / "fork.py").write_text("URL = 'https://api.github.com/forks'\n")
    (source / "utils" / "notion").mkdir()
    (source / "utils" / "notion" / "dup.py").write_text("from notion_client import Client\n")
    imports = write_task(source, "imports-helper", preprocess="from utils.general.helper import CMD\n")
    runs = write_task(source, "runs-dup", preprocess="cmd = f'uv run -m utils.notion.dup --x'\n")
    assert reach.read(imports, source).systems() == []
    assert reach.read(runs, source).systems("preprocess") == ["notion"]


def test_googles_discovery_client_reaches_the_apis_a_script_builds_with_it(tmp_path):
    """A later revision of the checkout finds its Google Cloud project through Resource Manager with googleapiclient:
    emulated here, so no Workspace need; a script building Sheets with the same client reaches the Workspace emulator;
    one that builds an API it does not name is read as the Google APIs nothing here emulates; an import it never uses
    reaches nothing by itself."""
    source = tmp_path / "src"
    crm = write_task(source, "finds-project", preprocess=(
        "from googleapiclient.discovery import build\n"
        "def project(c):\n    return build('cloudresourcemanager', 'v3', credentials=c).projects().search().execute()\n"
        "def whoami(c):\n    return build('oauth2', 'v2', credentials=c).userinfo().get().execute()\n"))
    sheets = write_task(source, "sheets", preprocess="from googleapiclient.discovery import build\n"
                                                     "build(\"sheets\", \"v4\")\n")
    unnamed = write_task(source, "unnamed", preprocess="import googleapiclient.discovery\n"
                                                       "googleapiclient.discovery.build(API, 'v1')\n")
    unused = write_task(source, "unused", preprocess="import googleapiclient\n")
    assert reach.read(crm, source).systems("preprocess") == ["google-auth"]
    assert reach.read(sheets, source).systems("preprocess") == ["google-sheets"]
    assert reach.read(unnamed, source).systems("preprocess") == ["google-workspace"]
    assert reach.read(unused, source).systems("preprocess") == []


@pytest.mark.checkout
def test_the_checkout_runs_live_no_task_whose_scripts_need_an_unemulated_host():
    root = os.environ.get("TOOLATHLON_ROOT")
    if not root:
        pytest.fail("set TOOLATHLON_ROOT to an unmodified Toolathlon checkout to run the checkout tests")
    source = Path(root)
    live = json.loads(tasks("--source", root, "--runs", "live", "--json").stdout)
    names = {t["id"] for t in live}
    assert names and "git-milestone" not in names
    for name in names:
        found = reach.read(source / "tasks" / "finalpool" / name, source)
        unanswered = [s for s in found.systems() if not reach.BY_NAME[s].answered and not reach.BY_NAME[s].quiet]
        assert unanswered == [], (name, unanswered)
    # The emulated Google Cloud and Snowflake tasks are graded, and say against what.
    by_id = {t["id"]: t for t in live}
    saas = {n for n, t in by_id.items() if t["emulated"]}
    assert len(saas) == 12, sorted(saas)
    # The facts table's own reading of the scripts agrees: nothing a graded task's scripts touch is unemulated.
    table = manifest.data_dir() / "task_offline.csv"
    if table.is_file():
        allowed = ("none", "n/a", "poste_mail", "canvas", "woocommerce", "gcp_", "snowflake", "local_http")
        for row in csv.DictReader(table.read_text(encoding="utf-8").splitlines()):
            if row["task"] in names:
                for cell in (row["preprocess_touches"], row["eval_touches"]):
                    parts = [p.strip() for p in cell.split(";")]
                    assert all(p.startswith(allowed) for p in parts), (row["task"], cell)
    statuses = task_status.statuses(source)
    assert statuses["git-milestone"].kind is task_status.REPLAY
    assert statuses["git-bug-hunt"].kind is task_status.UNSEEDED


def test_an_unused_import_of_googles_client_reaches_nothing_by_itself(tmp_path):
    """A preprocess that imports the discovery client and leaves the building to a checkout module it imports reaches
    what that module builds (Drive, behind the front), not an unknown Google API."""
    source = tmp_path / "src"
    helper = source / "utils" / "forms_helper.py"
    helper.parent.mkdir(parents=True)
    (source / "utils" / "__init__.py").write_text("")
    helper.write_text("from googleapiclient.discovery import build\n"
                      "def clear(c):\n    return build('drive', 'v3', credentials=c).files().list().execute()\n")
    task = write_task(source, "forms-clean", preprocess="from googleapiclient.discovery import build\n"
                                                        "from utils.forms_helper import clear\n")
    assert reach.read(task, source).systems("preprocess") == ["google-drive"]
