"""One episode's services: each in its own process, started together, watched until the episode ends.

`python -m decathlon.emulators --root ROOT --logs DIR --services mail,canvas [--home HOME]` starts
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
import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from decathlon.emulators import registry
from decathlon.emulators.kit import spawn
from decathlon.tape.store import write_atomic

KNOWN = (*(v.name for v in registry.service_vendors()), "front")
START_TIMEOUT = spawn.START_TIMEOUT


@dataclass
class Child:
    name: str
    proc: subprocess.Popen
    log: Path
    ports: dict[str, int] = field(default_factory=dict)
    ready: bool = False
    buffer: bytes = b""


def _spawn(name: str, root: Path, logs: Path, host: str, home: Path | None, control: Path | None = None) -> Child:
    log = logs / f"{name}.log"
    # The SaaS front also writes the episode's CA bundle (HOME/saas) and starts its emulators, logging beside it
    # (their control sockets beside the others': decathlon.emulators.front.backends); it has no state of its own.
    extra = ["--home", str(home), "--logs", str(logs)] if name == "front" and home is not None else []
    with open(log, "ab") as err:
        proc = subprocess.Popen(spawn.command(sys.executable, name, root, host=host,
                                                 control=None if name == "front" else control, extra=extra),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)
    return Child(name, proc, log)


def _stop(children: list[Child], grace: float = 2.0) -> None:
    for c in children:
        if c.proc.poll() is None:
            c.proc.terminate()
    deadline = time.monotonic() + grace
    for c in children:
        try:
            c.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            c.proc.kill()
            c.proc.wait()


def _await_ready(children: list[Child]) -> str | None:
    """None when every child said ready; else why not, naming the service."""
    deadline = time.monotonic() + START_TIMEOUT
    pending: dict[int, Child] = {}
    for c in children:
        assert c.proc.stdout is not None  # _spawn pipes it
        pending[c.proc.stdout.fileno()] = c
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            names = ", ".join(sorted(c.name for c in pending.values()))
            return json.dumps({"service": names, "reason": f"not ready within {START_TIMEOUT:.0f} s"})
        readable, _, _ = select.select(list(pending), [], [], min(left, 0.5))
        for fd in readable:
            c = pending[fd]
            chunk = os.read(fd, 4096)
            if not chunk:
                c.proc.wait()
                return json.dumps({"service": c.name, "reason": f"{spawn.how(c.proc.returncode)} before it was ready",
                                   "log_tail": spawn.log_tail(c.log)})
            c.buffer += chunk
            if b"\n" in c.buffer:
                line = c.buffer.split(b"\n", 1)[0].decode("utf-8", "replace")
                try:
                    c.ports = spawn.parse_ready(line, c.name)
                except spawn.NotReady as exc:
                    return json.dumps({"service": c.name, "reason": str(exc)})
                c.ready = True
                del pending[fd]
    return None


def _watch(folder: Path | None) -> int | None:
    if folder is None:
        return None
    try:
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None


def _deleted(fd: int | None) -> bool:
    return fd is not None and os.fstat(fd).st_nlink == 0


def supervise(names: list[str], root: Path, logs: Path, home: Path | None, host: str,
              watch: Path | None = None, control: Path | None = None) -> int:
    logs.mkdir(parents=True, exist_ok=True)
    if control is not None:
        control.mkdir(mode=0o700, parents=True, exist_ok=True)
    watched = _watch(watch or home)
    stopping = False

    def on_signal(signum, frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    children = [_spawn(n, root, logs, host, home, control) for n in names]
    failure = _await_ready(children)
    if failure is not None or stopping:
        _stop(children)
        print("failed " + (failure or json.dumps({"service": ",".join(names), "reason": "stopped while starting"})),
              flush=True)
        return 1
    print("ready " + json.dumps({"services": {c.name: {"pid": c.proc.pid, "ports": c.ports} for c in children}},
                                sort_keys=True), flush=True)
    died: dict[str, dict] = {}
    while not stopping:
        time.sleep(0.05)
        for c in children:
            code = c.proc.poll()
            if code is not None and c.name not in died:
                died[c.name] = {"how": spawn.how(code), "log_tail": spawn.log_tail(c.log)}
                write_atomic(logs / "died.json", json.dumps(died, sort_keys=True))
        if _deleted(watched):
            break
    _stop(children)
    return 0


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
    return supervise(names, args.root, args.logs, args.home, args.host, args.watch, control)
