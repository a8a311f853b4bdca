"""Replayed calls where the emulator is known to answer otherwise than the vendor did, each with why (a case is
named `<task>#<call index> <tool>`, as the report names it). The recorded-run tests (tests/test_fidelity_recorded.py,
tests/test_fidelity_snowflake.py) fail on any other disagreement, and on a gap listed here that agrees again (then it
comes off the list)."""
from __future__ import annotations

BIGQUERY: dict[str, str] = {}

SNOWFLAKE: dict[str, str] = {
    "travel-expense-reimbursement#100 snowflake-read_query":
        "fakesnow 0.12.1 casts every SUM/AVG argument to DOUBLE (so a VARCHAR sums as Snowflake's implicit cast "
        "sums it): SUM of a NUMBER(38,2) comes back a FLOAT (125912.23999999999, not 125912.24) and SUM of integers "
        "3.0, not 3",
}
