"""The backend interface: where sandboxes come from. One interface, several implementations."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from decathlon.backends.daemon_channel import NotConnected
from decathlon.backends.leases import OWNER_LABEL, Verdict, owner, sandbox_labels

MANAGED_LABEL = "decathlon.managed"


@dataclass
class GcResult:
    """What `decathlon gc` did: removed, and left alone because a live run owns it or another user does;
    and per run, what it did and why (so a user can see which run it judged dead, and on what evidence)."""
    removed: int = 0
    skipped_live: int = 0
    skipped_foreign: int = 0
    tally: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (run, action, why) → sandboxes

    def skip(self, run: str | None, verdict: Verdict) -> None:
        if verdict.keep == "live":
            self.skipped_live += 1
        else:
            self.skipped_foreign += 1
        self._count(run, "skipped", verdict.why)

    def took(self, run: str | None, verdict: Verdict, n: int = 1) -> None:
        self.removed += n
        self._count(run, "removed", verdict.why, n)

    def failed(self, run: str | None, why: str, n: int = 1) -> None:
        """Judged dead but not removed (the backend refused): said, so it is not mistaken for gone."""
        self._count(run, "failed", why, n)

    def _count(self, run: str | None, action: str, why: str, n: int = 1) -> None:
        key = (run or "", action, why)
        self.tally[key] = self.tally.get(key, 0) + n

    def runs(self) -> list[dict]:
        return [{"run": run or None, "action": action, "why": why, "sandboxes": n}
                for (run, action, why), n in sorted(self.tally.items())]

    def to_json(self) -> dict:
        return {"removed": self.removed, "skipped_live": self.skipped_live, "skipped_foreign": self.skipped_foreign,
                "runs": self.runs()}


@dataclass(frozen=True)
class SandboxSpec:
    run_id: str
    episode_id: str
    task: str
    source: Path  # the Toolathlon root on the host
    labels: dict[str, str] = field(default_factory=dict)

    def all_labels(self) -> dict[str, str]:
        # Where the run's lease is and which process holds it: a gc with another lease folder still sees it live.
        return {MANAGED_LABEL: "true", "decathlon.run": self.run_id, "decathlon.episode": self.episode_id,
                "decathlon.task": self.task, OWNER_LABEL: owner(), **sandbox_labels(self.run_id), **self.labels}


@dataclass(frozen=True)
class ExecResult:
    exit_code: int
    stdout: str
    stderr: str
    elapsed: float


class Sandbox(Protocol):
    id: str

    @property
    def direct(self) -> bool:
        """Whether tool calls can go straight to the episode daemon (`daemon_request`) instead of an exec."""

    @property
    def source_path(self) -> str:
        """Where the task source is, as the sandbox sees it."""

    async def exec(self, argv: list[str], stdin: bytes | None = None, timeout: float = 300.0) -> ExecResult:
        """Run a command; a timeout raises InfraError(Kind.EXEC_TIMEOUT)."""

    async def put_file(self, path: str, data: bytes) -> None:
        """Write a file; a relative path is relative to the episode's home."""

    async def get_file(self, path: str) -> bytes:
        """Read a file; a relative path is relative to the episode's home."""

    async def release(self) -> None:
        """Stop everything the sandbox runs and delete it. Idempotent; never raises."""

    async def daemon_request(self, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
        """One request to the episode daemon over the direct channel; NotConnected (nothing was sent) where
        there is none, and the caller takes the exec path."""


class ExecOnly:
    """For a sandbox with no direct channel: every tool call goes through exec."""

    direct = False

    async def daemon_request(self, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
        raise NotConnected("this sandbox has no direct channel")


class Backend(Protocol):
    name: str

    async def acquire(self, spec: SandboxSpec) -> Sandbox:
        """A fresh sandbox for one episode."""

    async def collect(self, labels: dict[str, str], force: bool = False) -> GcResult:
        """Remove what a crashed run left behind, by label. Without `force`, only this user's sandboxes
        whose run holds no lease (decathlon.backends.leases): a run still in progress keeps its own."""

    async def preflight(self, source: Path) -> None:
        """What would fail every episode of a run on `source` (an image without its checkout, say), said once before
        the first sandbox as an InfraError naming the fix; nothing where the backend needs nothing."""

    async def close(self) -> None:
        """Free what the backend holds beyond its sandboxes (a warm pool, an API client). Idempotent; the
        backend may acquire again afterwards."""
