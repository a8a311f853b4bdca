"""Which emulator serves which vendor host, and over which protocol the front hands it the bytes: read from the
vendors' descriptors (decathlon.emulators.registry), never spelled here."""
from __future__ import annotations

from dataclasses import dataclass

from decathlon.emulators import registry


@dataclass(frozen=True)
class Route:
    pattern: str  # a host name, or `*.suffix` for every name under it
    service: str  # the emulator package, decathlon.emulators.<service>
    alpn: str  # "http/1.1" or "h2" (gRPC)


def route_for(host: str) -> Route | None:
    found = registry.route_for(host)
    if found is None:
        return None
    vendor, h = found
    return Route(h.pattern, vendor.name, h.alpn)


def services() -> tuple[str, ...]:
    return tuple(v.name for v in registry.front_vendors())


def certificate_names() -> list[str]:
    return registry.host_patterns()
