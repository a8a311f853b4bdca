"""How the fidelity tiers rebuild the state a recorded run met (decathlon.emulators.fidelity): what the run's own answers
prove existed at the start, and what they prove did not. Runs of our own making, in the recordings' exact shape, so
these hold without the recorded runs."""
from __future__ import annotations

from typing import Any

from decathlon.emulators.fidelity import bigquery
from decathlon.emulators.fidelity.recorded import Exchange

P = "google-cloud-bigquery_"
SAMPLE = ("Query executed successfully.\nTotal rows: 1, Returned: 1\nBytes processed: 10, Execution time: 5ms\n\n"
          "Sample results (first 5 rows):\nRow 1: {'id': 1, 'name': 'Ada'}")


def _run(*calls: tuple[str, dict[str, Any], str]) -> list[Exchange]:
    return [Exchange("t", i, P + tool, args, answer) for i, (tool, args, answer) in enumerate(calls)]


def test_a_table_the_run_found_missing_and_then_loaded_was_not_there_at_the_start():
    calls = _run(("run_query", {"query": "SELECT * FROM `shop.analysis` LIMIT 1"},
                  "Error executing BigQuery query: 404 Not found: Table p:shop.analysis was not found in location US"),
                 ("load_csv_data", {"dataset_id": "shop", "table_id": "analysis"}, "Successfully loaded CSV data"),
                 ("run_query", {"query": "SELECT * FROM `shop.analysis` LIMIT 1"}, SAMPLE))
    rebuilt = bigquery.rebuild(calls)
    assert "shop.analysis" not in rebuilt.tables and "shop.analysis" not in rebuilt.unknown
    first = bigquery.judge(calls[0], calls[0].answer, set(rebuilt.tables), rebuilt)
    assert first.verdict == "agreed"  # the emulator's 404 is BigQuery's, word for word


def test_a_failed_load_or_insert_makes_nothing_and_shows_the_table_was_there():
    calls = _run(("load_csv_data", {"dataset_id": "shop", "table_id": "customers"},
                  "Error loading CSV data to BigQuery: 400 Provided Schema does not match Table p:shop.customers."),
                 ("run_query", {"query": "INSERT INTO `shop.customers` (id, name) VALUES ('x', 'Bo')"},
                  "Error executing BigQuery query: 400 Value has type STRING which cannot be inserted into column id"),
                 ("run_query", {"query": "SELECT * FROM `shop.customers` LIMIT 1"}, SAMPLE))
    rebuilt = bigquery.rebuild(calls)
    assert [c.name for c in rebuilt.tables["shop.customers"].columns] == ["id", "name"]


def test_a_write_into_a_table_the_replay_could_not_make_cannot_be_judged():
    calls = _run(("run_query", {"query": "INSERT INTO `shop.orders` (id) VALUES (1)"},
                  "Query executed successfully.\nTotal rows: 0, Returned: 0\nBytes processed: 0, Execution time: 5ms\n\n"
                  "No results returned."))
    rebuilt = bigquery.rebuild(calls)
    case = bigquery.judge(calls[0], "Error executing BigQuery query: 404 Not found: Table p:shop.orders", set(), rebuilt)
    assert case.verdict == "cannot-rebuild" and "shop.orders" in case.how


def test_a_create_led_by_a_comment_makes_its_table():
    calls = _run(("run_query", {"query": "-- the day's board\n/* v2 */\nCREATE OR REPLACE TABLE `shop.board` AS "
                                         "SELECT 1 AS id"},
                  "Query executed successfully.\nTotal rows: 0, Returned: 0\nBytes processed: 0, Execution time: 5ms\n\n"
                  "No results returned."))
    rebuilt = bigquery.rebuild(calls)
    assert "shop.board" not in rebuilt.tables and "shop.board" not in rebuilt.unknown  # the replay makes it
    case = bigquery.judge(calls[0], calls[0].answer, set(), rebuilt)
    assert case.verdict == "agreed"


def test_a_snowflake_listing_of_tables_the_replay_could_not_make_cannot_be_judged():
    from decathlon.emulators.fidelity import snowflake

    def listing(*names: str) -> str:
        rows = "".join(f"- TABLE_CATALOG: DB\n  TABLE_SCHEMA: PUBLIC\n  TABLE_NAME: {n}\n  COMMENT: null\n" for n in names)
        return f"type: data\ndata_id: 4dff041e-e7d8-4fcf-96cc-3ff0d2d80de0\ndatabase: DB\nschema: PUBLIC\ndata:\n{rows}"

    call = Exchange("t", 0, "snowflake-list_tables", {"database": "DB", "schema": "PUBLIC"}, listing("A", "B"))
    rebuilt = snowflake.rebuild([call])  # neither table is ever described: their columns are unknown
    assert set(rebuilt.unknown) == {"DB.PUBLIC.A", "DB.PUBLIC.B"}
    case = snowflake.Judge(rebuilt)(call, listing())
    assert case.verdict == "cannot-rebuild" and "DB.PUBLIC.A" in case.how
