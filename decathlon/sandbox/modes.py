"""live, record, replay, rerun: what each mode changes in setup and evaluate.

rerun: a recorded run re-executed against the task's real preprocess, servers and evaluator. The
recorded calls go to the servers that run offline here; the others (network, SaaS, replay-only) are
answered from the recording. Its HTTP is the replay's: the recording's, and a miss is named.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from decathlon.tape.errors import CassetteError
from decathlon.tape.redact import secret_names
from decathlon.tape.store import load
from decathlon.sandbox import launch_time as lt
from decathlon.errors import InfraError, Kind
from decathlon.sandbox.home import Home
from decathlon.sandbox.servers_config import ServerSpec
from decathlon.sandbox.taskdef import TaskDef

MODES = ("live", "record", "replay", "rerun")
FROM_CASSETTE = ("replay", "rerun")  # the modes that read a cassette


def http_mode(mode: str) -> str:
    """How a mode treats HTTP: a rerun replays it, like a replay."""
    return "replay" if mode == "rerun" else mode


def open_cassette(home: Home, task: TaskDef, mode: str, path: str | None) -> dict | None:
    """The cassette a replay serves from, checked against the task; copied into the episode's home."""
    if mode not in MODES:
        raise InfraError(Kind.USAGE, f"unknown mode {mode!r}; one of {', '.join(MODES)}")
    if mode not in FROM_CASSETTE:
        if path:
            raise InfraError(Kind.USAGE, "--cassette is for --mode replay or rerun (a recording is written to "
                             f"{home.cassette_out.name} in the episode home)")
        return None
    if not path:
        raise InfraError(Kind.USAGE, f"--mode {mode} needs --cassette PATH")
    # Relative to the episode's home: the host puts it there whatever the exec's working directory.
    path = str(Path(path) if Path(path).is_absolute() else home.root / path)
    try:
        cassette = load(Path(path))
    except CassetteError as exc:
        raise InfraError(exc.kind, exc.message) from None
    recorded = cassette.get("meta", {}).get("task")
    if recorded != task.name:
        raise InfraError(Kind.CASSETTE_MISMATCH, f"{path} records task {recorded!r}, not {task.name!r}")
    missing = [s for s in task.servers if s not in cassette["servers"]]
    if missing and mode == "replay":
        # Named by task, not by `path`: that is the episode's own copy, gone when the episode is.
        if cassette.get("meta", {}).get("imported"):
            raise InfraError(Kind.CASSETTE_MISMATCH, f"the cassette of {task.name} is an imported recorded run: it "
                             f"holds the answers the model saw, not recordings of server(s) {', '.join(missing)}. "
                             "Replay it with its import as the source (--source IMPORT_DIR --policy replay), or "
                             "re-execute it on this checkout with --mode rerun")
        raise InfraError(Kind.CASSETTE_MISMATCH, f"the cassette of {task.name} has no recording of server(s) "
                         f"{', '.join(missing)} that the task needs: it was recorded from another version of the "
                         "task; record it again with `decathlon record`")
    home.run.mkdir(parents=True, exist_ok=True)
    if Path(path).resolve() != home.cassette_in.resolve():
        shutil.copyfile(path, home.cassette_in)
    if os.environ.get("DECATHLON_HTTP_DISABLED") != "1":
        from decathlon.sandbox import http
        http.prepare_replay(home.http, cassette.get("http", []))
    return cassette


def hand_http(home: Home, mode: str, users) -> None:
    """Who may write the HTTP recordings. Replay: the grader alone (what preprocess and the evaluator are
    answered, and where their misses are logged). Record: every user of the episode, sticky (the agent's
    servers record there too; a recording is made with a trusted policy, not graded)."""
    mode = http_mode(mode)
    if mode == "live" or not users.separated:
        return
    home.http.mkdir(parents=True, exist_ok=True)
    if mode == "replay":
        users.give(home.http, "grader", 0o700)
    else:
        os.chmod(home.http, 0o1777)


def launch_time(cassette: dict | None, explicit: str | None) -> str:
    """A replay or rerun runs at the recorded clock: preprocess, evaluator and the recorded calls must see the same
    date. An imported run's is the one its import read from its outputs (or was given), in its meta."""
    if cassette is None:
        return lt.resolve(explicit)
    meta = cassette["meta"]
    recorded = meta["launch_time"]
    if explicit and lt.resolve(explicit) != recorded:
        how = (f"import it again with `--launch-time {meta.get('task')}=TIME`" if meta.get("imported")
               else "record it again at that time")
        raise InfraError(Kind.CASSETTE_MISMATCH, f"the cassette was recorded at launch time {recorded!r}; "
                         f"a replay cannot run at {lt.resolve(explicit)!r} ({how})")
    return recorded


def http_env(home: Home, mode: str, label: str, child_env: dict[str, str] | None = None) -> dict[str, str]:
    """Environment that makes a child process record or replay its HTTP traffic; the values of its
    credential-looking variables are redacted before anything is written."""
    mode = http_mode(mode)
    if mode == "live" or os.environ.get("DECATHLON_HTTP_DISABLED") == "1":
        return {}
    from decathlon.sandbox import http
    try:
        return http.env_for(mode, home.http, label, secret_names({**os.environ, **(child_env or {})}),
                            base=child_env if child_env is not None else os.environ)
    except FileNotFoundError as exc:
        raise InfraError(Kind.HTTP_SHIM_MISSING, f"{exc} (or set DECATHLON_HTTP_DISABLED=1 to record and replay "
                         "without HTTP)") from None


def server_specs(home: Home, mode: str, clock: dict[str, str], specs: list[ServerSpec]) -> list[ServerSpec]:
    """Recorded servers also record their HTTP traffic; with a frozen clock, servers start at launch time."""
    if mode != "record" and not clock:
        return specs
    return [ServerSpec(s.name, s.command, s.args,
                       {**s.env, **(http_env(home, mode, f"server-{s.name}", s.env) if mode == "record" else {}),
                        **clock}, s.cwd, s.timeout) for s in specs]


def replayed_specs(names: list[str]) -> list[ServerSpec]:
    """A replay starts no real server: each is answered in-process from the cassette."""
    return [ServerSpec(name=n, command="<replay>", args=[]) for n in names]


def check_http_misses(home: Home, mode: str, label: str) -> None:
    """A replayed process asked for something that was not recorded: a replay miss, never a pass."""
    if http_mode(mode) != "replay" or os.environ.get("DECATHLON_HTTP_DISABLED") == "1":
        return
    from decathlon.sandbox import http
    missed = http.misses(home.http)
    if missed:
        first = missed[0]
        raise InfraError(Kind.REPLAY_MISS, f"replay miss in the {label} step: HTTP {first.get('method')} "
                         f"{first.get('url')} (from {first.get('process')}) was not recorded; "
                         f"{len(missed)} miss(es) in all; nearest recorded: {first.get('nearest')}")


def collect_http(home: Home) -> list[dict]:
    if os.environ.get("DECATHLON_HTTP_DISABLED") == "1":
        return []
    from decathlon.sandbox import http
    return http.collect(home.http)
