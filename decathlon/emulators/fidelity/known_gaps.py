"""Replayed calls where the emulator is known to answer otherwise than the vendor did, each with why (a case is
named `<task>#<call index> <tool>`, as the report names it). The recorded-run tests (tests/test_fidelity_recorded.py,
tests/test_fidelity_snowflake.py) fail on any other disagreement, and on a gap listed here that agrees again (then it
comes off the list)."""
from __future__ import annotations

BIGQUERY: dict[str, str] = {}

SNOWFLAKE: dict[str, str] = {}
