"""Tool names as the model sees them: `<server>-<tool>` and `local-<tool>`.

Server names may themselves contain `-` (google-cloud, pdf-tools), so a name is routed to the
longest server name it starts with, never split on the first `-`.
"""
from __future__ import annotations

from dataclasses import dataclass

LOCAL = "local"


@dataclass(frozen=True)
class Route:
    server: str  # "local" for built-in tools
    tool: str


def route(full_name: str, servers: list[str]) -> Route | None:
    best: str | None = None
    for server in [*servers, LOCAL]:
        if full_name.startswith(server + "-") and len(full_name) > len(server) + 1:
            if best is None or len(server) > len(best):
                best = server
    if best is None:
        return None
    return Route(best, full_name[len(best) + 1:])
