"""BigQuery's answers that the recorded runs show the real service giving, as contract tests: against the emulator in
CI, against Google with DECATHLON_VENDOR_VERIFIED=gcp (tests/emulators/harness.py). The schema is made up; the
messages and positions are BigQuery's."""
from __future__ import annotations

import pytest

from collections.abc import Iterator

from harness import Target, gcp_target, run_gcp, unique

pytestmark = pytest.mark.vendor_verified


@pytest.fixture(scope="module")
def gcp(tmp_path_factory) -> Iterator[Target]:
    target = gcp_target(tmp_path_factory.mktemp("gcp"))
    yield target
    target.stop()


def test_refusals_before_a_query_runs(gcp, tmp_path):
    ds = unique("contract")
    got = run_gcp(gcp, f'''
        ds = f"{{P}}.{ds}"
        bq.create_dataset(ds)
        try:
            bq.query(f"CREATE TABLE `{{ds}}.orders` (order_id STRING, ordered_at TIMESTAMP, amount INT64)").result()
            out["millis"] = refusal(f"SELECT\\n  order_id,\\n  TIMESTAMP_MILLIS(ordered_at) AS t\\nFROM `{{ds}}.orders`")
            out["millis_ok"] = refusal(f"SELECT TIMESTAMP_MILLIS(amount) FROM `{{ds}}.orders`")
            out["unrecognized"] = refusal(f"SELECT * FROM `{{ds}}.orders` WHERE customer_id = 'C1'")
            out["temp"] = refusal(f"CREATE TEMP TABLE t AS SELECT * FROM `{{ds}}.orders`")
            out["union"] = refusal(f"SELECT order_id FROM `{{ds}}.orders`\\nORDER BY order_id\\nUNION ALL\\n"
                                   f"SELECT order_id FROM `{{ds}}.orders`")
        finally:
            bq.delete_dataset(ds, delete_contents=True, not_found_ok=True)
    ''', tmp_path)
    assert got["millis"][:2] == [400, "invalidQuery"]
    assert got["millis"][2].startswith("No matching signature for function TIMESTAMP_MILLIS")
    assert "Argument types: TIMESTAMP" in got["millis"][2] and got["millis"][2].endswith("at [3:3]")
    assert got["millis_ok"] is None
    assert got["unrecognized"] == [400, "invalidQuery", "Unrecognized name: customer_id at [1:"
                                   + str(len(f"SELECT * FROM `{gcp.project}.{ds}.orders` WHERE ") + 1) + "]"]
    assert got["temp"][:2] == [400, "invalid"]
    assert got["temp"][2] == "Use of CREATE TEMPORARY TABLE requires a script or session"
    assert got["union"] == [400, "invalidQuery", "Syntax error: Expected end of input but got keyword UNION at [3:1]"]


def test_a_dataset_created_twice_is_a_conflict(gcp, tmp_path):
    ds = unique("contract")
    got = run_gcp(gcp, f'''
        from google.api_core.exceptions import Conflict
        bq.create_dataset(f"{{P}}.{ds}")
        try:
            try:
                bq.create_dataset(f"{{P}}.{ds}")
                out["again"] = None
            except Conflict as exc:
                out["again"] = [exc.code, exc.errors[0]["reason"], exc.errors[0]["message"]]
        finally:
            bq.delete_dataset(f"{{P}}.{ds}", not_found_ok=True)
    ''', tmp_path)
    assert got["again"] == [409, "duplicate", f"Already Exists: Dataset {gcp.project}:{ds}"]
