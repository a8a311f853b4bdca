"""google-cloud-mcp as Toolathlon runs it: the real PyPI package (1.0.0, `ci/servers/google-cloud.txt`), with the
one behaviour of upstream's pinned git commit (7df9ca22, not on PyPI) that the recorded runs show and 1.0.0 lacks.

An allowed-resource name with a `*` is a pattern: ab-testing allows `promo-assets-for-b*`, and the recorded agent's
`storage_create_bucket promo-assets-for-b-homepage-rollout` succeeded (1.0.0 compares names exactly and answers
"Access denied"). A name without `*` is compared exactly, as in both (`logging_write_log fraud_alerts` is denied
in the recorded live-transactions run when only its log bucket is allowed). Nothing else of the package is touched:
its tools, schemas, result texts and Google clients are its own.
"""
from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Iterable

ALLOWED_GLOBALS = ("ALLOWED_BUCKETS", "ALLOWED_DATASETS", "ALLOWED_LOG_BUCKETS", "ALLOWED_INSTANCES")


class AllowedNames(set[str]):
    """The package's allowed-name set, where `name in allowed` also matches the `*` patterns among them."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        super().__init__(names)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        return set.__contains__(self, name) or any("*" in p and fnmatchcase(name, p) for p in self)
