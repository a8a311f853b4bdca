"""Where one episode's state lives inside a sandbox (TASK_API_HOME)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from decathlon.sandbox.sockpath import home_root, socket_path


@dataclass(frozen=True)
class Home:
    root: Path

    @classmethod
    def from_env(cls, explicit: str | None = None) -> "Home":
        return cls(Path(home_root(explicit)))

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def run(self) -> Path:
        return self.root / "run"

    @property
    def state(self) -> Path:
        """What `evaluate` trusts (the session record): root's alone where users are separated, never the
        agent's, unlike run/ (the daemon's, which runs as the agent)."""
        return self.root / "state"

    @property
    def session(self) -> Path:
        """Written by setup once the daemon is ready; the record of the episode."""
        return self.state / "session.json"

    @property
    def server_files(self) -> Path:
        """Read-only copies of the grader's files an agent-side server is started with (its email
        config, say; decathlon/sandbox/servers_config.py): root's where users are separated, readable by all."""
        return self.root / "server-files"

    @property
    def grader_home(self) -> Path:
        """HOME of preprocess and the evaluator (the grader's alone): not the agent's ~/.gitconfig and the like."""
        return self.root / "grader"

    @property
    def services_home(self) -> Path:
        """The episode's services' own folder (their seed and logs): the service user's alone."""
        return self.root / "services"

    @property
    def saas(self) -> Path:
        """The SaaS front's public side: the CA bundle every process of the episode trusts (the service
        user's, readable by all)."""
        return self.root / "saas"

    @property
    def saas_bundle(self) -> Path:
        return self.saas / "ca-bundle.pem"

    @property
    def task_root(self) -> Path:
        """The episode's private Toolathlon root (decathlon/sandbox/task_copy.py): the grader's."""
        return self.grader_home / "checkout"

    @property
    def metrics_file(self) -> Path:
        """Where an evaluator writes its dense metrics (DECATHLON_METRICS_FILE): out of the agent's reach."""
        return self.grader_home / "metrics.json"

    @property
    def phase(self) -> Path:
        """Which step of setup runs now (`services`, `preprocess`, `servers`…), for the host's progress display: a
        word, root's to write, never read back by the sandbox."""
        return self.state / "phase"

    @property
    def preprocess_pgid(self) -> Path:
        """The preprocess's process group: what it left running (meeting-assign's http.server) stops at
        teardown."""
        return self.state / "preprocess.pgid"

    @property
    def ready(self) -> Path:
        return self.run / "ready.json"

    @property
    def pidfile(self) -> Path:
        """The daemon's own note of its pid: the agent's to rewrite, so root never acts on it."""
        return self.run / "daemon.pid"

    @property
    def daemon_record(self) -> Path:
        """The daemon's pid as setup started it, in root's state/: what teardown and evaluate signal."""
        return self.state / "daemon.pid"

    def daemon_pid(self) -> int | None:
        """The recorded daemon pid, or None: never 0, 1 or below (kill() would signal a whole group,
        init, or every process there is)."""
        try:
            pid = int(self.daemon_record.read_text(encoding="ascii").strip())
        except (OSError, ValueError):
            return None
        return pid if pid > 1 else None

    @property
    def agent_home(self) -> Path:
        """HOME of the agent's processes where the backend's own HOME is not theirs (the local backend as
        root): the agent's alone."""
        return self.root / "agent-home"

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
    def http(self) -> Path:
        """Per-process HTTP recordings (record) or the recordings being replayed (replay). Not in run/:
        in a replay, what preprocess and the evaluator are answered must not be the agent's to edit."""
        return self.root / "http"

    @property
    def cassette_in(self) -> Path:
        """The cassette a replay reads (copied here by setup)."""
        return self.run / "cassette.json"

    @property
    def cassette_out(self) -> Path:
        """The cassette a recording writes when the episode ends cleanly."""
        return self.root / "cassette.json"

    @property
    def trajectory_out(self) -> Path:
        """The recorded conversation, redacted like the cassette, written with it."""
        return self.root / "trajectory.json"

    @property
    def socket(self) -> Path:
        return Path(socket_path(str(self.root)))
