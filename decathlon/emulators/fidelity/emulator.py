"""A fresh emulator for one run's replay: `python -m decathlon.emulators.<name> --root ROOT` on the SaaS
virtualenv, up once its ready line (`ready <name> {"http": N, …}`) names its port, stopped by SIGTERM."""
from __future__ import annotations

import json
import os
import re
import select
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]


def servers_dir() -> Path:
    return Path(os.environ.get("DECATHLON_SERVERS_DIR") or REPO / ".servers")


class Emulator:
    def __init__(self, name: str, root: Path, python: Path, *, seconds: float = 60) -> None:
        self.log = root / f"{name}.log"
        with self.log.open("w") as log:
            self.proc = subprocess.Popen([str(python), "-m", f"decathlon.emulators.{name}", "--root", str(root)],
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
