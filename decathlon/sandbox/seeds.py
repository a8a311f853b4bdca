"""Seed packs at setup: state an episode's emulators start with that no preprocess makes (a template that lived in
the authors' accounts), loaded through each emulator's control socket after the services start and before the
preprocess runs, so the preprocess and the evaluator see it as they would see the vendor's.

`task-api setup --seeds DIR`: DIR holds one folder per emulator (`DIR/gcp`, `DIR/snowflake`, …), each in the
emulators' snapshot format (a `manifest.json` naming the emulator: decathlon.emulators.kit.state). Each is copied
into the episode's control folder (the service user's alone, 0700: the agent never reaches it) and loaded with
`load_seed`. A folder naming no emulator, one the episode does not run, or a pack the emulator refuses, ends setup
with `seed_failed`, naming it, before the agent acts."""
from __future__ import annotations

import time
from pathlib import Path

from decathlon.emulators import registry
from decathlon.emulators.kit import control_client
from decathlon.errors import InfraError, Kind
from decathlon.sandbox.home import Home
from decathlon.sandbox.users import Users

READY_TIMEOUT = 30.0  # the front starts its emulators as it starts; a seeded one must answer on its socket by then


def emulators(seeds: Path | None) -> list[str]:
    """The emulators `seeds` seeds (its folders), checked against the registry."""
    if seeds is None:
        return []
    if not seeds.is_dir():
        raise InfraError(Kind.SEED_FAILED, f"--seeds {seeds}: not a folder")
    names = sorted(p.name for p in seeds.iterdir() if p.is_dir())
    known = registry.by_name()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InfraError(Kind.SEED_FAILED, f"--seeds {seeds}: {', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'}"
                         f" no emulator's name (the folders of a seed pack are named for emulators: "
                         f"{', '.join(sorted(known))})")
    if not names:
        raise InfraError(Kind.SEED_FAILED, f"--seeds {seeds}: no emulator's folder in it")
    return names


def check_running(names: list[str], services: list[str], front: list[str] | None) -> None:
    """Every seeded emulator is one the episode runs: a local service it starts, or a vendor behind its front."""
    missing = [n for n in names if (registry.get(n).reach == "service" and n not in services)
               or (registry.get(n).reach == "front" and front is None)]
    if missing:
        raise InfraError(Kind.SEED_FAILED, f"seeds for {', '.join(missing)}, which this task's episode does not run "
                         "(its servers and scripts do not reach that vendor)")


def _wait_ready(sock: Path, name: str, deadline: float) -> None:
    last = ""
    while time.monotonic() < deadline:
        try:
            control_client.health(sock, timeout=5)
            return
        except control_client.ControlError as exc:
            last = str(exc)
            time.sleep(0.1)
    raise InfraError(Kind.SEED_FAILED, f"the {name} emulator's control socket did not answer within "
                     f"{READY_TIMEOUT:.0f} s to load its seed ({last})")


def load(home: Home, seeds: Path, names: list[str], users: Users) -> dict[str, int]:
    """Each emulator seeded; how many files each pack held."""
    loaded: dict[str, int] = {}
    deadline = time.monotonic() + READY_TIMEOUT
    for name in names:
        sock = control_client.socket_of(home.services_home, name)
        _wait_ready(sock, name, deadline)
        try:
            staged = control_client.stage_seed(seeds / name, home.services_home, name, users.uid("service"))
            control_client.load_seed(sock, staged.relative_to(control_client.control_dir(home.services_home)))
        except (control_client.ControlError, OSError) as exc:
            raise InfraError(Kind.SEED_FAILED, f"the seed pack {seeds / name} could not be loaded into the {name} "
                             f"emulator: {exc}") from None
        loaded[name] = sum(1 for p in (seeds / name).rglob("*") if p.is_file())
    return loaded
