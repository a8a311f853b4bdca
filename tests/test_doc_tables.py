"""The docs' tables of what runs here are the program's answers (issue 31): docs/checkout.md's and docs/services.md's
server tables are `decathlon servers --json`, the checkout's task statuses `decathlon tasks --json`, the status legend
(README.md, docs/checkout.md) the program's own vocabulary. Without a checkout (CI) each server row is re-derived from
the server catalogue and ci/servers; with one (`checkout` marker) the tables are compared with the commands' output."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from conftest import REPO
from decathlon.checkout import server_facts
from decathlon.cli import doc_tables
from decathlon.sandbox.catalogue import plan_server

SERVER_TABLES = [(doc_tables.CHECKOUT_MD, "servers"), (doc_tables.SERVICES_MD, "service-servers")]


def _rows(page, name) -> list[dict[str, str]]:
    text = doc_tables.current(page, name)
    assert text is not None, f"{page.name} has no table {name}"
    rows = doc_tables.parse(text)
    assert rows, f"{page.name}: table {name} is empty"
    return rows


def test_the_status_legends_are_the_programs(monkeypatch):
    monkeypatch.delenv("TOOLATHLON_ROOT", raising=False)
    for page in (doc_tables.README, doc_tables.CHECKOUT_MD):
        assert doc_tables.current(page, "statuses") == doc_tables.legend_table(), page.name
    assert doc_tables.main(["--check"]) == 0


@pytest.mark.parametrize("page,name", SERVER_TABLES, ids=[n for _, n in SERVER_TABLES])
def test_each_documented_server_runs_as_the_program_says(page, name):
    """Each row's launch, planned by the catalogue: what runs and what it talks to are the row's."""
    for row in _rows(page, name):
        words = shlex.split(row["launched as"])
        plan = plan_server(row["server"], {"params": {"command": words[0], "args": words[1:]}})
        facts = server_facts.describe(row["server"], plan)
        assert (row["runs here"], row["against"]) == (facts.what, facts.against), row["server"]


def test_the_services_page_lists_the_servers_of_the_services_and_emulators():
    every = {r["server"]: r for r in _rows(doc_tables.CHECKOUT_MD, "servers")}
    services = {r["server"]: r for r in _rows(doc_tables.SERVICES_MD, "service-servers")}
    assert sorted(services) == ["canvas", "emails", "google-cloud", "google_calendar", "google_forms", "google_sheet",
                                "snowflake", "woocommerce"]
    assert all(every[name] == row for name, row in services.items())
    assert "google-cloud-mcp 1.0.0 (PyPI), started by our decathlon.standins.google_cloud" == \
        services["google-cloud"]["runs here"]


def test_a_table_is_replaced_and_read_back():
    page = "intro\n<!-- table t: x -->\nold\n<!-- end t -->\nrest\n"
    table = doc_tables.markdown(("a", "b"), [("1 | 2", "`x y`")])
    new = doc_tables.replace(page, "t", table)
    assert new.startswith("intro\n<!-- table t: x -->\n| a | b |") and new.endswith("<!-- end t -->\nrest\n")
    assert doc_tables.parse(table) == [{"a": "1 | 2", "b": "x y"}]
    with pytest.raises(KeyError):
        doc_tables.replace(page, "missing", table)


def _checkout() -> str:
    root = os.environ.get("TOOLATHLON_ROOT")
    if not root:
        pytest.fail("set TOOLATHLON_ROOT to an unmodified Toolathlon checkout to run the checkout tests")
    return root


def _json(*args: str) -> list[dict]:
    proc = subprocess.run([sys.executable, "-m", "decathlon", *args, "--json"], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.checkout
def test_the_docs_server_tables_are_decathlon_servers_json():
    rows = _json("servers", "--source", _checkout())
    assert doc_tables.current(doc_tables.CHECKOUT_MD, "servers") == doc_tables.servers_table(rows)
    assert doc_tables.current(doc_tables.SERVICES_MD, "service-servers") == \
        doc_tables.servers_table(rows, doc_tables.talks_to_a_service)


@pytest.mark.checkout
def test_the_docs_task_statuses_are_decathlon_tasks_json():
    rows = _json("tasks", "--source", _checkout())
    assert doc_tables.current(doc_tables.CHECKOUT_MD, "task-statuses") == doc_tables.statuses_table(rows)
    assert doc_tables.main(["--check", "--source", _checkout()]) == 0
