"""What runs here, and how: each task's one status, with every reason for it.

The one answer `decathlon tasks`, `tasks --runs live`, the manifest view and the verifiers taskset give, so they
cannot disagree. A task is

- **graded**: a live policy runs it here and its real preprocess and evaluator grade it; every MCP server it names
  runs here (a PyPI package, our stand-in, against the episode's own services and emulators), and its scripts reach
  nothing but those (decathlon.sandbox.reach reads them);
- **graded-without-seed**: the same, but its checkout lacks a file its scripts start from (decathlon.checkout.seeds),
  so the grade is not the benchmark's;
- **needs-seed**: the same as graded, once given its seed pack: its preprocess starts from what lived in the task
  authors' account (a template spreadsheet: decathlon.sandbox.vendor_seeds), which no checkout holds;
- **rerun-only**: its scripts run here, an agent's server does not: `--mode rerun` re-grades a recorded run with the
  real evaluator (that server answered from the recording), and a replay of an import gives the recorded verdict;
- **replay-only**: its preprocess or evaluator reaches a host nothing here emulates (api.github.com, Notion, a kind
  cluster…): it is never graded offline, and only a replay of an import (the recorded verdict) runs;
- **broken**: its task_config.json cannot be read.

Read from the source's own files and this machine's installed servers, as a run decides.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from decathlon.checkout import seeds
from decathlon.checkout.status_kinds import BROKEN, GRADED, KINDS, NEEDS_SEED, REPLAY, RERUN, UNSEEDED, Kind
from decathlon.checkout.tasks import TaskInfo, catalogue, replay_only
from decathlon.errors import InfraError
from decathlon.sandbox import reach, saas, services, taskdef, vendor_seeds
from decathlon.sandbox.catalogue import Plan, check_installed, plan_servers
from decathlon.sandbox.servers_config import default_servers_dir, load_raw_configs


# The agent's local tools whose answers come from the network (they run, but offline they answer errors).
NETWORK_LOCAL_TOOLS = ("web_search",)


@dataclass(frozen=True)
class Reason:
    """One reason a task is not graded here (or is graded without its seed)."""

    what: str  # server | scripts | seed | source | config
    name: str  # the server, the system the scripts reach, the missing file
    kind: str  # the error kind a run would give (replay_only_server…), or the system's name
    why: str  # a sentence
    brief: str = ""  # the same in a few words, for a table

    def short(self) -> str:
        return f"{self.name}: {self.kind}"

    def to_json(self) -> dict:
        return {"what": self.what, "name": self.name, "kind": self.kind, "why": self.why}


@dataclass(frozen=True)
class TaskStatus:
    task: str
    kind: Kind
    reasons: tuple[Reason, ...] = ()
    services: tuple[str, ...] = ()  # the episode's local services it gets (mail, canvas, woocommerce)
    emulated: tuple[str, ...] = ()  # what the SaaS front emulates for it (BigQuery, Snowflake…)
    network_tools: tuple[str, ...] = ()  # the agent's servers and tools that answer from the network
    notes: tuple[str, ...] = field(default=())

    @property
    def graded(self) -> bool:
        return self.kind is GRADED

    def gets(self) -> str:
        """The episode's services and emulators it gets, in a few words."""
        parts = [", ".join(self.services)] if self.services else []
        if self.emulated:
            parts.append(f"emulated {', '.join(self.emulated)}")
        return "; ".join(parts)

    def summary(self) -> str:
        """One line: what it gets here, or every reason it is not graded here."""
        if self.reasons:
            servers = [r.name for r in self.reasons if r.what == "server" and r.kind == "replay_only_server"]
            others = [r.brief or r.why for r in self.reasons if not (r.what == "server" and r.kind == "replay_only_server")]
            head = [f"replay-only server{'s' if len(servers) > 1 else ''} {', '.join(servers)}"] if servers else []
            return "; ".join([*head, *others])
        text = self.gets() or "workspace files only"
        if self.network_tools:
            text += f" (the agent's {', '.join(self.network_tools)} answer from the network)"
        return text

    def to_json(self) -> dict:
        return {"status": self.kind.code, "status_means": self.kind.label, "still_runs": self.kind.still_runs,
                "here": self.summary(),
                "live_here": self.graded, "blocked_by": [r.short() for r in self.reasons if r.what != "seed"],
                "reasons": [r.to_json() for r in self.reasons], "services": list(self.services),
                "emulated": list(self.emulated), "network_tools": list(self.network_tools), "notes": list(self.notes)}


def _emulated_labels(systems: set[str]) -> list[str]:
    return [s.label for s in reach.SYSTEMS if s.name in systems and not s.quiet]


def _systems_of(emulators: tuple[str, ...]) -> set[str]:
    """What a named server's emulators emulate: google-cloud reaches BigQuery, Cloud Storage and Cloud Logging."""
    return {s.name for s in reach.SYSTEMS if s.emulator in emulators}


def _server_problem(raw: dict[str, dict], name: str, servers_dir: Path) -> tuple[Plan | None, InfraError | None]:
    try:
        plan = plan_servers(raw, [name])[0]
        check_installed(plan, servers_dir)
    except InfraError as exc:
        return None, exc
    return plan, None


def _server_why(exc: InfraError, plan_why: str | None) -> str:
    if exc.kind == "replay_only_server":
        return f"replay only ({plan_why})" if plan_why else "replay only"
    if exc.kind == "server_not_installed":
        return "not installed here (python ci/install_servers.py, or an image that has it)"
    if exc.kind == "unknown_server":
        return "no configs/mcp_servers/*.yaml defines it"
    return exc.message


def _why_replay_only(raw: dict[str, dict], name: str) -> str | None:
    from decathlon.sandbox.catalogue import plan_server
    try:
        entry = plan_server(name, raw[name]).entry
    except (InfraError, KeyError):
        return None
    return entry.why if entry is not None else None


def _servers_of_service(service: str) -> list[str]:
    return sorted(s for s, svc in services.SERVICE_OF_SERVER.items() if svc == service)


def _sure(found: reach.Reach, system: str, step: str, task_dir: Path, root: Path) -> bool:
    """A local service is surely reached when the task's own code shows it, or some code imports its client library;
    a host constant in a shared helper module (one that knows Canvas and WooCommerce alike) says only that it may be."""
    own = str(task_dir.relative_to(root)) + "/" if task_dir.is_relative_to(root) else ""
    return any(f.marker.startswith("import ") or (own and f.file.startswith(own))
               for f in found.findings if f.system == system and f.step == step)


def status_of(source: Path, info: TaskInfo, raw: dict[str, dict], servers_dir: Path) -> TaskStatus:
    if info.error:
        return TaskStatus(info.id, BROKEN, (Reason("config", "task_config.json", "bad_task", info.error, info.error),))
    reasons: list[Reason] = []
    started = set(services.needed(info.servers))
    emulated: set[str] = set()
    network: list[str] = []
    notes: list[str] = []
    for name in info.servers:
        plan, exc = _server_problem(raw, name, servers_dir)
        if exc is not None:
            why = _server_why(exc, _why_replay_only(raw, name))
            reasons.append(Reason("server", name, exc.kind, why, f"server {name}: {why.split(' (')[0]}"))
            continue
        emulated.update(_systems_of(saas.SERVER_EMULATORS.get(name, ())))
        if plan is not None and plan.entry is not None and plan.entry.network:
            network.append(name)
    network += [t for t in info.local_tools if t in NETWORK_LOCAL_TOOLS]
    task_dir = source / "tasks" / taskdef.SPLIT / info.id
    found = reach.read(task_dir, source)
    for step in reach.STEPS:
        for system_name in found.systems(step):
            system = reach.BY_NAME[system_name]
            evidence = found.first(system_name, step)
            where = f" ({evidence.marker}, {evidence.where()})" if evidence else ""
            if system.emulator is not None:
                emulated.add(system.name)
            elif system.service is not None:
                if system.service in started:
                    continue
                named = " or ".join(f"`{s}`" for s in _servers_of_service(system.service))
                sure = _sure(found, system_name, step, task_dir, source)
                text = (f"its {step} {'reaches' if sure else 'may reach'} {system.label}{where}, which an episode starts "
                        f"only for a task naming the {named} server")
                if sure:
                    reasons.append(Reason("scripts", system.label, system.name, text,
                                          f"{step} reaches {system.label}, not started"))
                else:
                    notes.append(text)
            elif not system.quiet:
                marker = f" ({evidence.marker})" if evidence else ""
                reasons.append(Reason("scripts", system.label, system.name,
                                      f"its {step} reaches {system.label}{where}, which nothing here emulates",
                                      f"{step} reaches {system.label}{marker}"))
        for use in sorted({u.server: u for u in found.servers if u.step == step}.values(), key=lambda u: u.server):
            if use.server not in raw:
                continue  # a name its code tries (`if "x" in manager.servers`) that no definition gives
            plan, exc = _server_problem(raw, use.server, servers_dir)
            if exc is not None:
                why = _server_why(exc, _why_replay_only(raw, use.server))
                reasons.append(Reason("scripts", use.server, exc.kind,
                                      f"its {step} starts the MCP server {use.server} ({use.file}:{use.line}), which "
                                      f"is {why}", f"{step} starts server {use.server} ({why.split(' (')[0]})"))
                continue
            emulated.update(_systems_of(saas.SERVER_EMULATORS.get(use.server, ())))
            service = services.SERVICE_OF_SERVER.get(use.server)
            if service is not None and service not in started:
                reasons.append(Reason("scripts", use.server, "service_not_started",
                                      f"its {step} starts the MCP server {use.server}, whose service ({service}) an "
                                      f"episode starts only for a task naming it", f"{step} starts {use.server}, no {service}"))
    seed_reasons = [Reason("seed", m.file, "missing_seed", m.why, f"lacks {m.file}") for m in seeds.missing(task_dir)]
    seed_reasons += [Reason("vendor-seed", f"{n.source.kind} {n.resource}", "seed_missing",
                            f"its preprocess starts from {n.label()}, which lived in the task authors' account: a seed "
                            f"pack brings it (`decathlon seeds capture`, then `run --seeds LIB`)",
                            f"starts from a {n.source.kind} of the authors'") for n in vendor_seeds.needs(source, info.id)]
    # One Reason per (what, name, kind): the same host reached by both steps is one reason, said by the first.
    unique: dict[tuple[str, str, str], Reason] = {}
    for r in [*reasons, *seed_reasons]:
        unique.setdefault((r.what, r.name, r.kind), r)
    everything = tuple(unique.values())
    if any(r.what == "scripts" for r in everything):
        kind = REPLAY
    elif any(r.what == "server" for r in everything):
        kind = RERUN
    elif any(r.what == "vendor-seed" for r in everything):
        kind = NEEDS_SEED
    elif everything:
        kind = UNSEEDED
    else:
        kind = GRADED
    return TaskStatus(info.id, kind, everything, tuple(sorted(started)), tuple(_emulated_labels(emulated)),
                      tuple(dict.fromkeys(network)), tuple(dict.fromkeys(notes)))


def statuses(source: Path, infos: list[TaskInfo] | None = None) -> dict[str, TaskStatus]:
    """Each task's status (all of the source's, or those of `infos`), by task name."""
    infos = catalogue(source) if infos is None else infos
    whole = replay_only(source)
    if whole is not None:
        why = "the source is an import of recorded runs (replay only)"
        reason = Reason("source", "source", "import", why, why)
        return {i.id: TaskStatus(i.id, REPLAY, (reason,)) for i in infos}
    raw = load_raw_configs(source)
    servers_dir = default_servers_dir()
    return {i.id: status_of(source, i, raw, servers_dir) for i in infos}


def counts(found: dict[str, TaskStatus]) -> dict[str, int]:
    return {k.code: sum(s.kind is k for s in found.values()) for k in KINDS}
