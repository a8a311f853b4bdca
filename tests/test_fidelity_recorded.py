"""The BigQuery emulator against BigQuery's own recorded answers (decathlon.emulators.fidelity): every recorded run's
BigQuery calls replayed in order through the real google-cloud-mcp tools on a fresh emulator seeded with what the
run showed, each answer compared with the recorded one. The runs are read where they lie, never copied."""
from __future__ import annotations

import pytest

from recorded_runs import TRAJECTORIES, require_runs
from saas_venv import SERVERS, require

from decathlon.emulators.fidelity import bigquery, known_gaps, report


@pytest.fixture(scope="module")
def cases() -> list[bigquery.Case]:
    require_runs()
    require(SERVERS / "saas" / "bin" / "python", "`python ci/install_servers.py` builds the SaaS virtualenv")
    require(SERVERS / "google-cloud" / "bin" / "python", "`python ci/install_servers.py` installs google-cloud-mcp")
    got = bigquery.replay(TRAJECTORIES, servers=SERVERS)
    print("\n" + report.summary("bigquery", got))
    return got


def test_every_refusal_bigquery_gave_is_the_emulators_too(cases: list[bigquery.Case]) -> None:
    """Each query BigQuery refused in the runs (a temp table outside a script, ORDER BY before UNION ALL, a TIMESTAMP
    given to TIMESTAMP_MILLIS, unknown names) is refused with the same words at the same position."""
    refused = [c for c in cases if c.exchange.tool == "google-cloud-bigquery_run_query"
               and c.recorded.startswith("Error executing BigQuery query:")]
    assert len(refused) >= 6, [c.exchange.name for c in refused]
    wrong = {c.exchange.name: c.diff() or c.how for c in refused if (c.verdict, c.how) != ("agreed", "error text")}
    assert not wrong, wrong
    duplicate = [c for c in cases if c.exchange.tool == "google-cloud-bigquery_create_dataset"
                 and "Already Exists" in c.recorded]
    assert duplicate and all(c.verdict == "agreed" for c in duplicate), [(c.exchange.name, c.diff()) for c in duplicate]


def test_no_replayed_call_disagrees_but_the_known_gaps(cases: list[bigquery.Case]) -> None:
    disagreed = {c.exchange.name: c.diff() for c in cases if c.verdict == "disagreed"}
    unknown = {k: v for k, v in disagreed.items() if k not in known_gaps.BIGQUERY}
    assert not unknown, "\n\n".join(f"{k}\n{v}" for k, v in unknown.items())
    healed = sorted(set(known_gaps.BIGQUERY) - set(disagreed))
    assert not healed, f"listed as known gaps but agree now (take them off the list): {healed}"
    assert any(c.verdict == "agreed" for c in cases)
    for c in cases:
        if c.verdict == "cannot-rebuild":
            assert c.how, c.exchange.name
