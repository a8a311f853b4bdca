"""`--saas real`: what can be checked once, before the first sandbox, that the user's own SaaS accounts are
there for the tasks that reach a vendor the front emulates (rather than N infra errors after N setups)."""
from __future__ import annotations

import os
from pathlib import Path

from decathlon.emulators import registry
from decathlon.errors import InfraError, Kind
from decathlon.sandbox import saas
from decathlon.sandbox.taskdef import load_task



def _real_files(emulator: str) -> tuple[str, ...]:
    """The files a checkout's scripts for this vendor read from configs/ (the user's own, with real accounts).
    A vendor signed in through another's credentials (Logging through Google Cloud's) needs those."""
    vendor = registry.get(emulator)
    if vendor.credentials is not None:
        return vendor.credentials.real_files
    return tuple(f for other in registry.front_vendors() if other.credentials and set(other.servers) & set(vendor.servers)
                 for f in other.credentials.real_files)


def saas_tasks(source: Path, names: list[str]) -> dict[str, list[str]]:
    """The tasks among `names` that reach an emulated vendor, with the emulators they name."""
    out = {}
    for name in names:
        try:
            emulators = saas.emulators_for(load_task(source, name))
        except InfraError:
            continue  # a broken task fails alone, when it runs
        if emulators is not None:
            out[name] = emulators
    return out


def check_real_saas(source: Path, names: list[str]) -> None:
    using = saas_tasks(source, names)
    if not using:
        return
    listed = ", ".join(sorted(using)[:6]) + (" …" if len(using) > 6 else "")
    named = os.environ.get("DECATHLON_TOKEN_KEY_SESSION")
    if not named or not Path(named).is_file():
        state = f"names {named}, which is not a file" if named else "is not set"
        vendors = " or ".join(sorted({registry.get(e).title for emulators in using.values() for e in emulators}))
        raise InfraError(Kind.USAGE, f"--saas real: {listed} reach {vendors or 'an emulated vendor'} with your own accounts, "
                         f"but DECATHLON_TOKEN_KEY_SESSION {state}: name your token_key_session.py (gcp_project_id, "
                         "snowflake_account, …), or leave out --saas real to run them against the episode's emulators")
    missing = sorted({f for emulators in using.values() for e in emulators for f in _real_files(e)
                      if not (source / f).is_file()})
    if missing:
        raise InfraError(Kind.USAGE, f"--saas real: {listed} need your account's key files in {source}, and "
                         f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not there (Toolathlon's "
                         "global_preparation says how to make them), or leave out --saas real")
