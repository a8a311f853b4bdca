"""What actually runs for a server definition here, and what it talks to: one answer for `decathlon servers`, its JSON
and the documentation's tables (decathlon.cli.doc_tables), so that they cannot disagree.

What runs: the real PyPI package at the version `ci/servers/<env>.txt` installs, our stand-in module, the real package
started through a stand-in of ours (google-cloud-mcp, with the one behaviour of upstream's fork it lacks), or nothing
(replay only). What it talks to: the episode's own service (mail, Canvas, WooCommerce: decathlon.sandbox.services), its
SaaS emulators through the front (decathlon.sandbox.saas), the network (answered by HTTP cassettes in a replay), or only
the episode's workspace.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from decathlon.checkout.server_pins import ci_pin
from decathlon.sandbox import reach, saas, services
from decathlon.sandbox.catalogue import Plan

RUNS = ("package", "stand-in", "package through a stand-in", "as written", "replay")


@dataclass(frozen=True)
class ServerFacts:
    runs: str  # one of RUNS
    what: str  # the thing that runs, in words
    against: str  # what it talks to
    package: str | None = None  # the PyPI package that runs (None: our stand-in alone, or nothing)
    version: str | None = None  # the version ci/servers pins it at
    module: str | None = None  # our stand-in's module, where one runs

    def to_json(self) -> dict:
        return asdict(self)


def _emulated(server: str) -> str:
    emulators = set(saas.SERVER_EMULATORS.get(server, ()))
    labels = [s.label for s in reach.SYSTEMS if s.emulator in emulators and not s.quiet]
    return f"the episode's emulated {', '.join(labels)} (through the SaaS front)"


def against(server: str, plan: Plan) -> str:
    entry = plan.entry
    if plan.runs == "replay":
        return "nothing: its answers come from recorded cassettes"
    if server in services.SERVICE_OF_SERVER:
        return f"the episode's {services.WHAT[services.SERVICE_OF_SERVER[server]].removeprefix('the ')}"
    if server in saas.SERVER_EMULATORS:
        return _emulated(server)
    if entry is not None and entry.network:
        return "the network (HTTP cassettes answer it in a replay)"
    if entry is None:
        return "whatever its command reaches (run as written)"
    return "the episode's workspace"


def describe(server: str, plan: Plan) -> ServerFacts:
    entry = plan.entry
    talks = against(server, plan)
    if entry is None:
        return ServerFacts("as written", f"`{plan.launch.written}` as written (not catalogued)", talks)
    if entry.runs == "replay":
        return ServerFacts("replay", f"replay only: {entry.why}", talks)
    if entry.runs == "live":
        version = ci_pin(entry.env, entry.package)
        return ServerFacts("package", f"{entry.package} {version or ''} (PyPI)".replace("  ", " "), talks,
                           entry.package, version)
    version = ci_pin(entry.env, entry.package) if entry.registry == "pypi" else None
    if version is not None:
        return ServerFacts("package through a stand-in", f"{entry.package} {version} (PyPI), started by our "
                           f"{entry.module}", talks, entry.package, version, entry.module)
    origin = f"{entry.registry} {entry.package}"
    return ServerFacts("stand-in", f"our stand-in {entry.module} (for {origin})", talks, module=entry.module)
