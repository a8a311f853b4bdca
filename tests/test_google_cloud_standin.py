"""google-cloud-mcp run as upstream's pinned commit behaves (decathlon/standins/google_cloud): its allowed names
with a `*` are patterns; the rest compare exactly. The whole server runs in tests/test_saas_episode.py, where the
fixture task allows its bucket by a pattern."""
from __future__ import annotations

from decathlon.sandbox.catalogue import plan_server
from decathlon.standins.google_cloud import AllowedNames


def test_patterns_match_and_plain_names_compare_exactly():
    allowed = AllowedNames({"promo-assets-for-b*", "Trading_Logging-cc616b9e7c85"})
    assert "promo-assets-for-b-homepage-rollout" in allowed and "promo-assets-for-b" in allowed
    assert "promo-assets-for-a-x" not in allowed and "Promo-assets-for-b-x" not in allowed
    assert "Trading_Logging-cc616b9e7c85" in allowed and "fraud_alerts" not in allowed
    assert "Trading_Logging" not in allowed and None not in allowed
    # the package filters listings with a comprehension over `in`, and tests `if ALLOWED_…` for "configured"
    assert [b for b in ("promo-assets-for-b-1", "other") if b in allowed] == ["promo-assets-for-b-1"]
    assert AllowedNames() == set() and not AllowedNames()


def test_the_checkouts_launch_runs_the_package_through_the_compat_module():
    plan = plan_server("google-cloud", {"params": {"command": "uvx", "args": ["google-cloud-mcp", "--project-id", "p"]}})
    assert plan.command == "${decathlon_servers}/google-cloud/bin/python"
    assert plan.args == ["-m", "decathlon.standins.google_cloud", "--project-id", "p"]
