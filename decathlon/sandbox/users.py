"""Who runs what inside a sandbox that separates users (compose, and any image built like it).

TASK_API_USERS="agent=1500,service=1501,grader=1502", set by the backend:
- agent: the workspace's owner and everything that acts on it: the episode daemon, its MCP servers
  (our in-process stand-ins and replays write the agent's files as the agent) and python-execute.
  The daemon cannot be replaced or impersonated (its socket's folder is locked after setup and the
  host checks the peer's uid); the agent can kill it, which scores as the episode's failure;
- service: the episode's local applications (mail, Canvas, WooCommerce: decathlon/sandbox/services.py), which
  the agent talks to: whatever it makes of them, they share no user with the grader (default: the
  grader's uid, for an image older than this role);
- grader: preprocess and the evaluator, the only user besides root that can read the task source
  and ground truth, and the owner of the frozen workspace it grades. Nothing the agent can steer runs
  as the grader, and the evaluator is not dumpable (decathlon/sandbox/subproc.py), so no process can ptrace it.
root only orchestrates (`task-api setup` / `evaluate` as the backend's exec): it runs none of the task's
code and none of the agent's.

Unset (the local backend) every role is the current user and these helpers change nothing.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ROLES = ("agent", "service", "grader")


@dataclass(frozen=True)
class Users:
    agent: int | None = None
    grader: int | None = None
    service: int | None = None

    @classmethod
    def from_env(cls) -> "Users":
        raw = os.environ.get("TASK_API_USERS", "")
        found: dict[str, int] = {}
        for part in filter(None, (p.strip() for p in raw.split(","))):
            role, _, uid = part.partition("=")
            if role not in ROLES or not uid.isdigit():
                raise ValueError(f"TASK_API_USERS: {part!r} is not ROLE=UID with ROLE one of {', '.join(ROLES)}")
            found[role] = int(uid)
        return cls(**found)

    @property
    def separated(self) -> bool:
        return self.agent is not None

    def uid(self, role: str) -> int | None:
        if role == "service" and self.service is None:
            return self.grader
        return getattr(self, role)

    def prefix(self, role: str) -> list[str]:
        """argv prefix that runs a command as `role`, with no capabilities and no supplementary groups
        (nothing when users are not separated, or when this process already is that user)."""
        uid = self.uid(role)
        if uid is None or uid == os.geteuid():
            return []
        return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
                "--ambient-caps=-all", "--"]

    def give(self, path: Path, role: str, mode: int | None = None) -> None:
        """Hand a tree to `role` (links themselves, never what they point to)."""
        uid = self.uid(role)
        if uid is None:
            return
        for p in _walk(path):
            os.lchown(p, uid, uid)
        if mode is not None:
            os.chmod(path, mode)


    def kill_all(self, role: str, rounds: int = 20) -> int:
        """SIGKILL every process of `role` (none when users are not separated). kill(-1) as that user
        signals all of them in one pass of the kernel's task list, so a fork loop cannot outrun it."""
        uid = self.uid(role)
        if uid is None:
            return 0
        import subprocess
        import sys
        import time
        for n in range(rounds):
            if not _pids_of(uid):
                return n
            try:
                subprocess.run([*self.prefix(role), sys.executable, "-S", "-c", "import os; os.kill(-1, 9)"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               timeout=10)
            except (OSError, subprocess.SubprocessError):
                time.sleep(0.05)  # no pid to start it with yet (a fork loop): the next round retries
        return rounds


    def become(self, role: str) -> None:
        """This very process turns into `role` for good: no supplementary groups, no capabilities (a
        switch away from root clears them), and no way back up through a setuid program. Nothing when
        users are not separated or the process already is that user."""
        uid = self.uid(role)
        if uid is None or uid == os.geteuid():
            return
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        from decathlon.sandbox.syscalls import PR_SET_NO_NEW_PRIVS, check, libc
        check(libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


def any_process_of(uids: list[int | None]) -> bool:
    """Whether any live process runs as one of `uids` (one pass over /proc, however many uids)."""
    wanted = {u for u in uids if u is not None}
    return bool(wanted) and bool(_pids_of(*wanted))


def _pids_of(*uids: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", "rb") as f:
                fields = dict(line.split(b":", 1) for line in f if b":" in line)
            if fields[b"State"].split()[0] != b"Z" and int(fields[b"Uid"].split()[0]) in uids:
                found.append(int(entry))  # a zombie is already dead: only its parent's wait is missing
        except (OSError, ValueError, IndexError, KeyError):
            continue
    return found


def _walk(top: Path):
    yield top
    if top.is_symlink() or not top.is_dir():
        return
    for root, dirs, files in os.walk(top):
        for name in dirs + files:
            yield os.path.join(root, name)


# What a process the agent starts may see of its parent's environment: nothing that could hold a
# credential of the host (OPENAI_API_KEY, PRIME_API_KEY…), only what programs need to run.
AGENT_ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "TMPDIR", "PYTHONDONTWRITEBYTECODE")


def agent_env(home: str | None = None, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: os.environ[k] for k in AGENT_ENV_KEEP if k in os.environ}
    env["HOME"] = home or os.environ.get("HOME", "/")
    env.update(extra or {})
    return env
