"""A fresh emulator for one run's replay: `python -m decathlon.emulators.<name> --root ROOT` on the SaaS
virtualenv, up once its ready line (`ready <name> {"http": N, …}`) names its port, stopped by SIGTERM; and the one
driver process that takes every run's calls to the vendor's client on those emulators (`drive`)."""
from __future__ import annotations

import contextlib
import json
import os
import re
import select
import subprocess
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parents[3]


def servers_dir() -> Path:
    return Path(os.environ.get("DECATHLON_SERVERS_DIR") or REPO / ".servers")


class Emulator:
    def __init__(self, name: str, root: Path, python: Path, *, seconds: float = 60, args: list[str] | None = None) -> None:
        self.log = root / f"{name}.log"
        with self.log.open("w") as log:
            self.proc = subprocess.Popen([str(python), "-m", f"decathlon.emulators.{name}", "--root", str(root),
                                          *(args or [])],
                                         stdout=subprocess.PIPE, stderr=log, text=True, cwd=str(root),
                                         env={**os.environ, "PYTHONPATH": str(REPO)})
        line = self._ready(seconds)
        m = re.fullmatch(rf"ready {name} (\{{.*\}})", line)
        if not m:
            self.stop()
            raise RuntimeError(f"the {name} emulator gave no ready line ({line!r}): {self.log.read_text()[-2000:]}")
        self.ports: dict[str, Any] = json.loads(m.group(1))
        self.url = f"http://127.0.0.1:{self.ports['http']}"

    def _ready(self, seconds: float) -> str:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], seconds)
        return self.proc.stdout.readline().strip() if ready else ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def drive(who: str, script: Path, python: Path, job: dict[str, Any], runs: int, timeout: float,
          env: dict[str, str]) -> list[list[dict[str, Any]]]:
    """`script` run by the client's own virtualenv with `job` on stdin; it prints {"seeded": i} once run i's state is
    in, then {"run": i, …} per call. Per run, the replies in order; a driver that fails or seeds fewer runs raises,
    naming `who` and its stderr's end."""
    proc = subprocess.run([str(python), str(script)], input=json.dumps(job, default=str), capture_output=True,
                          text=True, timeout=timeout, env=env)
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    seeded = sum(1 for x in lines if "seeded" in x)
    if proc.returncode != 0 or seeded != runs:
        raise RuntimeError(f"{who} failed ({proc.returncode}, {seeded} of {runs} runs seeded): {proc.stderr[-3000:]}")
    replies: list[list[dict[str, Any]]] = [[] for _ in range(runs)]
    for x in lines:
        if "run" in x:
            replies[x["run"]].append(x)
    return replies


@contextlib.contextmanager
def fleet(name: str, root: Path, count: int, python: Path) -> Iterator[list[Emulator]]:
    """`count` fresh emulators, each with a folder of its own under `root`; all stopped on the way out."""
    emulators: list[Emulator] = []
    try:
        for i in range(count):
            folder = root / str(i)
            folder.mkdir()
            emulators.append(Emulator(name, folder, python))
        yield emulators
    finally:
        for emu in emulators:
            emu.stop()
