"""Where one episode's state lives inside a sandbox (TASK_API_HOME)."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

# A Unix socket path must fit in sun_path (108 bytes on Linux).
_MAX_SOCKET_PATH = 100


@dataclass(frozen=True)
class Home:
    root: Path

    @classmethod
    def from_env(cls, explicit: str | None = None) -> "Home":
        raw = explicit or os.environ.get("TASK_API_HOME") or os.path.expanduser("~/.task-api")
        return cls(Path(raw).absolute())

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def run(self) -> Path:
        return self.root / "run"

    @property
    def session(self) -> Path:
        """Written by setup once the daemon is ready; the record of the episode."""
        return self.run / "session.json"

    @property
    def daemon_spec(self) -> Path:
        return self.run / "daemon_spec.json"

    @property
    def ready(self) -> Path:
        return self.run / "ready.json"

    @property
    def pidfile(self) -> Path:
        return self.run / "daemon.pid"

    @property
    def daemon_log(self) -> Path:
        return self.run / "daemon.log"

    @property
    def server_logs(self) -> Path:
        return self.run / "servers"

    @property
    def traj_log(self) -> Path:
        return self.root / "traj_log.json"

    @property
    def eval_res(self) -> Path:
        return self.root / "eval_res.json"

    @property
    def eval_output(self) -> Path:
        return self.root / "eval_output.txt"

    @property
    def socket(self) -> Path:
        path = self.run / "daemon.sock"
        if len(str(path)) <= _MAX_SOCKET_PATH:
            return path
        digest = hashlib.sha256(str(self.root).encode()).hexdigest()[:16]
        return Path("/tmp") / f"task-api-{digest}.sock"
