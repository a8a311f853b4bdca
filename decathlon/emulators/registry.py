"""Every emulated vendor, found, not listed: a package `decathlon.emulators.<name>` with a `vendor` module declaring
`VENDOR` (decathlon.emulators.vendor.Vendor). Adding a vendor is one package and its descriptor; the front, the SaaS
wiring, the credentials, `--saas real`'s preflight, the task statuses and the docs read them here.

    python -m decathlon.emulators.registry   # one line per vendor: name, reach, hosts, servers
"""
from __future__ import annotations

import functools
import importlib
import pkgutil
from pathlib import Path

from decathlon.emulators.vendor import Host, System, Vendor

PACKAGE = Path(__file__).resolve().parent


class RegistryError(RuntimeError):
    pass


@functools.cache
def vendors() -> tuple[Vendor, ...]:
    found = []
    for info in sorted(pkgutil.iter_modules([str(PACKAGE)]), key=lambda i: i.name):
        if not info.ispkg or not (PACKAGE / info.name / "vendor.py").is_file():
            continue
        module = importlib.import_module(f"decathlon.emulators.{info.name}.vendor")
        vendor = getattr(module, "VENDOR", None)
        if not isinstance(vendor, Vendor) or vendor.name != info.name:
            raise RegistryError(f"decathlon.emulators.{info.name}.vendor must declare VENDOR = Vendor(name="
                                f"{info.name!r}, ...)")
        found.append(vendor)
    _check(found)
    return tuple(found)


def _check(found: list[Vendor]) -> None:
    """Two vendors never claim one host (the front would pick either); a server may need several (google-cloud:
    BigQuery and Logging)."""
    owner: dict[str, str] = {}
    for v in found:
        for h in v.hosts:
            if h.pattern in owner:
                raise RegistryError(f"host {h.pattern} is declared by both {owner[h.pattern]} and {v.name}")
            owner[h.pattern] = v.name


def by_name() -> dict[str, Vendor]:
    return {v.name: v for v in vendors()}


def get(name: str) -> Vendor:
    try:
        return by_name()[name]
    except KeyError:
        raise RegistryError(f"no emulator {name!r}; known: {', '.join(sorted(by_name()))}") from None


def front_vendors() -> tuple[Vendor, ...]:
    return tuple(v for v in vendors() if v.reach == "front")


def service_vendors() -> tuple[Vendor, ...]:
    return tuple(v for v in vendors() if v.reach == "service")


def route_for(host: str) -> tuple[Vendor, Host] | None:
    """The emulator answering `host` behind the front; an exact name wins over a wildcard."""
    matches = [(v, h) for v in front_vendors() for h in v.hosts if h.matches(host)]
    matches.sort(key=lambda m: (m[1].pattern.startswith("*."), -len(m[1].pattern)))
    return matches[0] if matches else None


def host_patterns() -> list[str]:
    return sorted(h.pattern for v in front_vendors() for h in v.hosts)


def emulators_of_server(server: str) -> tuple[str, ...]:
    """The front's emulators an MCP server needs at once (empty for a server no front vendor names)."""
    return tuple(sorted(v.name for v in front_vendors() if server in v.servers))


def service_of_server(server: str) -> str | None:
    for v in service_vendors():
        if server in v.servers:
            return v.name
    return None


def systems() -> tuple[System, ...]:
    return tuple(s for v in vendors() for s in v.systems)


def main() -> int:
    for v in vendors():
        where = ", ".join(h.pattern for h in v.hosts) or ", ".join(str(p) for p in v.ports)
        print(f"{v.name:12} {v.reach:8} {where}  (servers: {', '.join(v.servers) or '-'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
