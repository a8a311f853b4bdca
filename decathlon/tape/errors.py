"""Cassette problems: infra errors of the replay layer (kinds bad_cassette, cassette_*)."""
from __future__ import annotations

from decathlon.errors import InfraError


class CassetteError(InfraError):
    """A cassette that cannot serve: missing, malformed, of another version, not matching its task."""
