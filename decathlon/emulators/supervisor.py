"""One episode's services: each in its own process, started together, watched until the episode ends.

`python -m decathlon.emulators --root ROOT --logs DIR --services mail,canvas [--home HOME]` forks, through its
forkserver (decathlon.emulators.kit.forkserver, the services' modules imported once),
`python -m decathlon.emulators.<name> --root ROOT --control CONTROL/<name>.sock` for each (the grader's reset,
snapshot, restore and seed: decathlon.emulators.kit.control; CONTROL defaults to `control/` beside DIR, in the
services' own folder), waits for every `ready <name> <ports>` line,
then prints one line to stdout: `ready {"services": {name: {"pid": .., "ports": {..}}}}` or
`failed {"service": name, "reason": ..}` (and exits 1, having stopped the others).

It then stays, so that the episode's checks have one process to ask: a service that exits is
recorded in `DIR/died.json` (which service, how, its log's tail). It stops every service on
SIGTERM/SIGINT, and on its own when WATCH (a folder of the episode's; HOME by default) is deleted, so a host that
vanished without a teardown leaves nothing running. WATCH is held open and asked for its link count: in a root of
the services' own (decathlon.sandbox.confine) a deleted folder's path may still resolve, to the mount point.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from decathlon.emulators import registry
from decathlon.emulators.kit import forked, spawn
from decathlon.emulators.kit.forked import Forked, ForkServer, ForkServerError
from decathlon.tape.store import write_atomic

KNOWN = (*(v.name for v in registry.service_vendors()), "front")
START_TIMEOUT = spawn.START_TIMEOUT
WATCH_POLL = 0.1


def _arguments(name: str, root: Path, logs: Path, host: str, home: Path | None, control: Path) -> list[str]:
    # The SaaS front also writes the episode's CA bundle (HOME/saas) and starts its emulators, logging beside it
    # (their control sockets beside the others': decathlon.emulators.front.backends); it has no state of its own.
    extra = ["--home", str(home), "--logs", str(logs)] if name == "front" and home is not None else []
    return spawn.arguments(name, root, host=host, control=None if name == "front" else control, extra=extra)


async def _start(server: ForkServer, names: list[str], root: Path, logs: Path, host: str, home: Path | None,
                 control: Path, children: dict[str, Forked]) -> dict[str, dict[str, int]]:
    """Each service forked and its ready line read, all at once; ServiceFailed naming the first that failed."""
    for name in names:
        try:
            children[name] = await server.fork(name, _arguments(name, root, logs, host, home, control),
                                               logs / f"{name}.log")
        except (ForkServerError, OSError) as exc:
            raise ServiceFailed({"service": name, "reason": str(exc)}) from None
    results = await asyncio.gather(*(forked.read_ready(children[n], n, START_TIMEOUT) for n in names),
                                   return_exceptions=True)
    late = [n for n, r in zip(names, results) if isinstance(r, spawn.NotReady) and str(r).startswith("not ready")]
    for name, result in zip(names, results):
        if isinstance(result, BaseException):
            if name in late:
                raise ServiceFailed({"service": ", ".join(late), "reason": str(result)})
            failure = {"service": name, "reason": str(result)}
            if children[name].returncode is not None:
                failure["log_tail"] = spawn.log_tail(logs / f"{name}.log")
            raise ServiceFailed(failure)
    return {n: r for n, r in zip(names, results) if isinstance(r, dict)}


class ServiceFailed(Exception):
    def __init__(self, failure: dict[str, str]) -> None:
        super().__init__(failure["reason"])
        self.failure = failure


def _watch(folder: Path | None) -> int | None:
    if folder is None:
        return None
    try:
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None


def _deleted(fd: int | None) -> bool:
    return fd is not None and os.fstat(fd).st_nlink == 0


async def supervise(names: list[str], root: Path, logs: Path, home: Path | None, host: str,
                    watch: Path | None = None, control: Path | None = None) -> int:
    logs.mkdir(parents=True, exist_ok=True)
    control = control if control is not None else logs.parent / "control"
    control.mkdir(mode=0o700, parents=True, exist_ok=True)
    watched = _watch(watch or home)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    # Every service is forked, ready-imported, by one forkserver of the supervisor's (the front's emulators by the
    # front's own, on the SaaS interpreter): what it imports once, each service no longer imports at its start.
    server = ForkServer(sys.executable, control / "forkserver-services.sock", logs / "forkserver-services.log", names)
    children: dict[str, Forked] = {}
    stopping = False
    try:
        starting = loop.create_task(_start(server, names, root, logs, host, home, control, children))
        stopped = loop.create_task(stop.wait())
        await asyncio.wait([starting, stopped], return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if not starting.done():
            starting.cancel()
            failure: dict[str, str] = {"service": ",".join(names), "reason": "stopped while starting"}
        elif isinstance(starting.exception(), ServiceFailed):
            failure = starting.exception().failure  # type: ignore[union-attr]
        elif starting.exception() is not None:
            raise starting.exception()  # type: ignore[misc]
        else:
            ports = starting.result()
            print("ready " + json.dumps({"services": {n: {"pid": children[n].pid, "ports": ports[n]} for n in names}},
                                        sort_keys=True), flush=True)
            died: dict[str, dict[str, str]] = {}

            async def on_exit(name: str, proc: Forked) -> None:
                code = await proc.wait()
                if not stopping:
                    died[name] = {"how": spawn.how(code), "log_tail": spawn.log_tail(logs / f"{name}.log")}
                    write_atomic(logs / "died.json", json.dumps(died, sort_keys=True))

            watchers = [loop.create_task(on_exit(n, p)) for n, p in sorted(children.items())]
            while not stop.is_set() and not _deleted(watched):
                try:
                    await asyncio.wait_for(stop.wait(), WATCH_POLL)
                except asyncio.TimeoutError:
                    pass
            stopping = True
            for w in watchers:
                w.cancel()
            return 0
        print("failed " + json.dumps(failure), flush=True)
        return 1
    finally:
        stopping = True
        await forked.stop_all(list(children.values()))
        await server.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m decathlon.emulators", description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True, type=Path, help="the task root whose configs/users_data.json seeds the accounts")
    ap.add_argument("--logs", required=True, type=Path, help="where each service's log (and died.json) go")
    ap.add_argument("--services", required=True, help=f"comma-separated, of: {', '.join(KNOWN)}")
    ap.add_argument("--home", type=Path, help="the episode's folder (the front writes its CA bundle under it)")
    ap.add_argument("--watch", type=Path, help="stop when this folder is deleted (default: HOME)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--control", type=Path, help="the folder of the emulators' control sockets, made 0700 "
                    "(default: control/ beside LOGS, i.e. in the services' own folder)")
    args = ap.parse_args(argv)
    names = sorted({n.strip() for n in args.services.split(",") if n.strip()})
    unknown = [n for n in names if n not in KNOWN]
    if unknown or not names:
        ap.error(f"unknown service(s) {', '.join(unknown) or '(none given)'}; known: {', '.join(KNOWN)}")
    control = args.control or args.logs.parent / "control"
    return asyncio.run(supervise(names, args.root, args.logs, args.home, args.host, args.watch, control))
