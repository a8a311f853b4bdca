"""What one emulated vendor declares about itself, in one place: the `VENDOR` of `decathlon.emulators.<name>.vendor`.

Everything outside an emulator's package that needs a vendor fact (the SaaS front's routing and certificates, which
episodes get the front and which emulators start at once, the credentials an episode's scripts read, `--saas real`'s
preflight, the task statuses' reading of scripts, the services table, the generated docs) reads it from the registry
(decathlon.emulators.registry), never spells it. A descriptor module imports nothing but this one and the standard
library: the host's CLI reads it without the emulators' own dependencies.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal

Reach = Literal["front", "service"]


@dataclass(frozen=True)
class Host:
    """A host name the vendor answers at (`*.suffix`: every name under it, at any depth), and the protocol the SaaS
    front hands the emulator after TLS ("http/1.1", or "h2" for gRPC)."""

    pattern: str
    alpn: str = "http/1.1"

    def matches(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        if self.pattern.startswith("*."):
            return host.endswith(self.pattern[1:]) and host != self.pattern[2:]
        return host == self.pattern


@dataclass(frozen=True)
class System:
    """Something outside the sandbox a task's script can reach, and how its code shows it (read by
    decathlon.sandbox.reach, never run)."""

    name: str
    label: str
    modules: tuple[str, ...] = ()  # its client libraries: importing one (or a submodule) reaches it
    hosts: tuple[str, ...] = ()  # regexes of its API host names as code writes them
    text: tuple[str, ...] = ()  # other regexes: a CLI it runs
    # The APIs of Google's discovery client (`googleapiclient.discovery.build("<api>", ...)`) that reach it: a script
    # importing that generic client reaches the systems of the APIs it builds.
    apis: tuple[str, ...] = ()
    emulator: str | None = None  # the SaaS front's emulator that answers it
    service: str | None = None  # the episode's own local service that answers it
    front: bool = False  # reached through the SaaS front (emulated there, or refused by name)
    quiet: bool = False  # shared plumbing (sign-in): it brings the front, but is not a need of its own worth listing

    @property
    def answered(self) -> bool:
        return self.emulator is not None or self.service is not None


@dataclass(frozen=True)
class Credentials:
    """The files a checkout's scripts and servers read for this vendor, made for an emulated episode.

    `writer` names `module:function`, called as `function(configs, key) -> dict[file name, text]` (`key`: the
    episode's one RSA private key, PEM); `tokens(configs)` (also `module:function`) gives what the vendor lays over the
    checkout's token_key_session. Both are imported only when an episode is set up."""

    writer: str
    tokens: str
    files: tuple[str, ...]  # what `writer` makes, in configs/
    token_files: tuple[str, ...] = ()  # the token_key_session entries that name a credentials file
    real_files: tuple[str, ...] = ()  # in the user's checkout, what `--saas real` needs for this vendor

    def write(self, configs: Path, key: str) -> dict[str, str]:
        return _load(self.writer)(configs, key)

    def token_values(self, configs: Path) -> dict[str, str]:
        return _load(self.tokens)(configs)


@dataclass(frozen=True)
class SeedSource:
    """A resource a task's preprocess starts from that lived in someone's account at the vendor (a public template
    spreadsheet it copies), and how the task's code names it. A seed pack brings it (decathlon.sandbox.vendor_seeds):
    `files` are the pack's files that hold it, relative to the emulator's folder of the pack, each with the vendor's
    read-only request whose answer is that file as it is (`{id}` in both stands for the resource's id), so that
    `decathlon seeds capture` writes it from a live account and the emulator loads it with load_seed."""

    kind: str  # "spreadsheet", for people
    pattern: str  # a regex whose one group is the resource's id, searched in the task's preprocess code
    files: tuple[tuple[str, str], ...]  # (pack file, GET URL at the vendor)

    def paths(self, resource: str) -> tuple[str, ...]:
        return tuple(f.format(id=resource) for f, _ in self.files)


def sign_in_text(target: str) -> str:
    return _load(target)()


def _load(target: str) -> Callable:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class Vendor:
    name: str  # the emulator: the package decathlon.emulators.<name>, the process `python -m` runs, its log's name
    title: str  # what it emulates, for people
    reach: Reach  # at the vendor's own host names through the episode's SaaS front, or an episode service on fixed ports
    protocol: str  # what it speaks to its clients: "REST", "gRPC", "IMAP, SMTP", "Snowflake REST"
    hosts: tuple[Host, ...] = ()
    ports: tuple[int, ...] = ()  # a service's fixed ports, where the checkout's scripts expect it
    servers: tuple[str, ...] = ()  # the MCP servers (configs/mcp_servers `name:`) whose episodes need it at once
    systems: tuple[System, ...] = ()  # how a task's scripts show that they reach it
    credentials: Credentials | None = None
    # Variables for every process of an episode that has the front: what the vendor's clients need to work offline.
    # `{sign_in}` in a value is the episode's folder of sign-in files (below).
    episode_env: tuple[tuple[str, str], ...] = ()
    # Files a user's one-time preparation puts where the vendor's MCP servers look (a client id and a refresh token of
    # the emulated account, no secret of anyone's), made for every episode that has the front and readable by all its
    # processes: (file name, `module:function` returning its text), in the folder `{sign_in}` names.
    sign_in: tuple[tuple[str, str], ...] = ()
    surface: str = ""  # its API surface in a phrase (the docs' table)
    describes: str = ""  # the machine-readable description its routes are checked against, where one ships
    notes: tuple[str, ...] = field(default_factory=tuple)  # deliberate differences from the vendor
    seeds: tuple[SeedSource, ...] = ()  # what a task may start from that only a seed pack brings

    @property
    def module(self) -> str:
        return f"decathlon.emulators.{self.name}"
