"""The Google APIs the workspace emulator serves, as Google's discovery documents describe them
(decathlon.emulators.kit.discovery): what a request for a method the emulator lacks is recognised by (a 501), and what
its coverage counts."""
from __future__ import annotations

from decathlon.emulators.kit import discovery

APIS = (("drive", "v3"), ("sheets", "v4"), ("forms", "v1"), ("calendar", "v3"))


def known_methods() -> tuple[discovery.Method, ...]:
    """Every method of the APIs the emulator serves, or none where the descriptions are not installed."""
    try:
        return tuple(m for api, version in APIS for m in discovery.methods(api, version))
    except discovery.DiscoveryMissing:
        return ()
