"""Which emulator serves which vendor host, and over which protocol the front hands it the bytes."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Route:
    pattern: str  # a host name, or `*.suffix` for every name under it
    service: str  # the emulator package, decathlon.emulators.<service>
    alpn: str  # "http/1.1" or "h2" (gRPC)

    def matches(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        if self.pattern.startswith("*."):
            return host.endswith(self.pattern[1:]) and host != self.pattern[2:]
        return host == self.pattern


ROUTES: tuple[Route, ...] = (
    Route("bigquery.googleapis.com", "gcp", "http/1.1"),
    Route("storage.googleapis.com", "gcp", "http/1.1"),
    Route("oauth2.googleapis.com", "gcp", "http/1.1"),
    Route("logging.googleapis.com", "gcplogging", "h2"),
    Route("*.snowflakecomputing.com", "snowflake", "http/1.1"),
)

SERVICES: tuple[str, ...] = tuple(sorted({r.service for r in ROUTES}))


def route_for(host: str) -> Route | None:
    for route in ROUTES:
        if route.matches(host):
            return route
    return None


def certificate_names() -> list[str]:
    return sorted({r.pattern for r in ROUTES})
