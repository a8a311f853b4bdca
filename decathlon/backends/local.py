"""The local backend: `task-api` in a fresh temp directory on this host. Fast; for tests and development.

As root, each episode runs as unprivileged users of its own (decathlon.backends.local_users): the agent
cannot write outside its episode, read the grader's files, signal or enter another episode, or reach
the host's loopback (every episode has a network namespace of its own; DECATHLON_LOCAL_NETWORK=host
leaves episodes without services on the host's network), and the task source is hidden from it. What
every user of the host may read stays readable to it. Not root, the agent runs as the current user and
nothing but files is separated: isolation_note() says which, at the start of a run.
"""
from __future__ import annotations

import asyncio
import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from decathlon.backends import daemon_channel, local_users
from decathlon.backends import leases
from decathlon.backends.base import MANAGED_LABEL, ExecResult, GcResult, SandboxSpec
from decathlon.errors import InfraError, Kind
from decathlon.contract.replies import EXEC_OUTPUT_MAX, STDERR_KEPT, read_capped, read_tail
from decathlon.sandbox.home import Home
from decathlon.tape.redact import secret_names
from decathlon.sandbox import services
from decathlon.sandbox.lifecycle import stop_leftovers
from decathlon.sandbox.procs import alive

PREFIX = "decathlon-ep-"
LABELS_FILE = "labels.json"
RELEASE_GRACE = 0.5


# Named like credentials, but paths: the files they name are read by setup (root, where users are separated) into the
# grader's private copy of the checkout (decathlon/sandbox/task_copy.py), never shown to the agent.
PATHS_NOT_SECRETS = ("DECATHLON_TOKEN_KEY_SESSION",)


def sandbox_env() -> dict[str, str]:
    """The host's environment less anything credential-looking (OPENAI_API_KEY, PRIME_API_KEY…): on this
    backend the agent runs as the host's user and can read its daemon's environment. A variable a task
    needs in its sandbox is passed on purpose by naming it in DECATHLON_SANDBOX_ENV (comma-separated)."""
    wanted = {n.strip() for n in os.environ.get("DECATHLON_SANDBOX_ENV", "").split(",") if n.strip()}
    secret = set(secret_names(dict(os.environ))) - wanted - set(PATHS_NOT_SECRETS)
    return {k: v for k, v in os.environ.items() if k not in secret}


def base_dir() -> Path:
    return Path(os.environ.get("DECATHLON_LOCAL_DIR") or tempfile.gettempdir())


_zygote: tuple[subprocess.Popen, str] | None = None


def zygote_socket() -> tuple[str, str] | None:
    """This process's zygote (decathlon.sandbox.zygote), started on first use: it forks episode daemons with the
    MCP SDK already loaded. Its socket and pid: until it is ready, setup waits for it while it lives
    (decathlon.sandbox.setup._zygote_connection)."""
    global _zygote
    if os.environ.get("DECATHLON_LOCAL_ZYGOTE", "1") == "0":
        return None
    if _zygote is None or _zygote[0].poll() is not None:
        path = f"/tmp/decathlon-zygote-{os.getpid()}-{uuid.uuid4().hex[:8]}.sock"
        proc = subprocess.Popen([sys.executable, "-m", "decathlon.sandbox.zygote", "--socket", path,
                                 "--parent", str(os.getpid())],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True,
                                env=sandbox_env())
        _zygote = (proc, path)
        atexit.register(_stop_zygote, proc, path)
    return _zygote[1], str(_zygote[0].pid)


def _stop_zygote(proc: subprocess.Popen, path: str) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
    Path(path).unlink(missing_ok=True)


def _task_api_argv() -> list[str]:
    # The task-api of this very environment, not whatever PATH finds first.
    return [sys.executable, "-m", "decathlon.sandbox"]


REPO = Path(__file__).resolve().parents[2]
SLOT_LABEL = "decathlon.local.slot"


def isolation_note() -> str:
    """What the local backend keeps apart here, for the start of a run."""
    if local_users.isolating():
        net = ("episodes without services share the host's network (DECATHLON_LOCAL_NETWORK=host)"
               if os.environ.get("DECATHLON_LOCAL_NETWORK") == "host" else "a network namespace of its own")
        return ("local backend (as root): each episode's agent runs as an unprivileged user of its own, with "
                f"{net}, the task source hidden; it can still read what every user of this host can. "
                "Train on compose or prime.")
    return (f"local backend (as uid {os.getuid()}): the agent runs as you and can read and write whatever you can, "
            "the task source and its ground truth included. Run as root for an unprivileged agent per episode, "
            "or use --backend compose.")


def real_saas_note() -> str | None:
    """What `--saas real` cannot keep from the agent here, said at the start of such a run (None as root, where the
    agent is a user of its own and the keys reach our servers through the episode's key broker alone)."""
    if local_users.isolating():
        return None
    return (f"warning: --saas real on the local backend as uid {os.getuid()}: the agent runs as you, so your real "
            "accounts' keys (the files DECATHLON_TOKEN_KEY_SESSION names, the checkout's configs/) are the agent's to "
            "read, and nothing here can keep them from it. Run as root (each episode then has users of its own), or "
            "use --backend compose.")


def hidden_from_agent(source: Path) -> list[str]:
    """Folders of the host the agent must not see (decathlon.sandbox.jail): the task source, our fixtures (their
    oracles and recordings), the recorded Toolathlon runs."""
    named = [str(source), str(REPO / "fixtures"), os.environ.get("DECATHLON_TRAJECTORIES", ""),
             os.environ.get("DECATHLON_TOOLATHLON_DATA", ""), str(REPO.parent / "shared" / "data")]
    return [p for p in named if p]


class LocalSandbox:
    def __init__(self, root: Path, source: Path, direct: bool = True,
                 identity: local_users.Identity | None = None) -> None:
        self.root = root
        # Tool calls go straight to the daemon's socket unless the exec path is asked for.
        self.direct = direct
        self.id = root.name
        self._source = source
        self._released = False
        self.identity = identity

    def _env(self) -> dict[str, str]:
        env = {**sandbox_env(), "TASK_API_HOME": str(self.root), "TASK_API_PRIVATE_NETNS": "1"}
        if self.identity is not None:
            env["TASK_API_USERS"] = self.identity.env()
            env["TASK_API_HIDE"] = os.pathsep.join(hidden_from_agent(self._source))
            if os.environ.get("DECATHLON_LOCAL_NETWORK") != "host":
                env["TASK_API_PRIVATE_NETNS"] = "all"
        return env

    @property
    def source_path(self) -> str:
        return str(self._source)

    def _resolve(self, path: str) -> Path:
        p = Path(path)
        return p if p.is_absolute() else self.root / p

    async def exec(self, argv: list[str], stdin: bytes | None = None, timeout: float = 300.0) -> ExecResult:
        if self._released:
            raise InfraError(Kind.SANDBOX_RELEASED, f"sandbox {self.id} was already released")
        if argv and argv[0] == "task-api":
            argv = [*_task_api_argv(), *argv[1:]]
        # Its services listen at the tasks' fixed ports: in a network namespace of the episode's own here.
        env = self._env()
        zygote = zygote_socket()
        if zygote:
            env["TASK_API_ZYGOTE"], env["TASK_API_ZYGOTE_PID"] = zygote
        start = time.monotonic()

        async def feed(pipe: asyncio.StreamWriter | None) -> None:
            if pipe is None:
                return
            try:
                pipe.write(stdin or b"")
                await pipe.drain()
                pipe.close()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the command stopped reading: its output says why

        creating = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *argv, cwd=str(self.root), env=env, start_new_session=True,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE))
        try:
            proc = await asyncio.shield(creating)
        except asyncio.CancelledError:
            # Shielded: cancelled mid-creation, asyncio would kill the process alone, not what it already
            # started (its process group); let the creation finish, then stop the whole group.
            proc = await creating
            _killpg(proc.pid)
            await proc.wait()
            raise

        async def run() -> tuple[bytes, bytes]:
            # Bounded: what the sandbox prints is read up to a cap, never whole (it may be hostile).
            assert proc.stdout is not None and proc.stderr is not None  # both PIPE above
            out, err, _ = await asyncio.gather(read_capped(proc.stdout, EXEC_OUTPUT_MAX, "a command in the sandbox"),
                                               read_tail(proc.stderr, STDERR_KEPT), feed(proc.stdin))
            await proc.wait()
            return out, err

        try:
            out, err = await asyncio.wait_for(run(), timeout)
        except (asyncio.TimeoutError, asyncio.CancelledError, InfraError) as exc:
            _killpg(proc.pid)
            await proc.wait()
            if isinstance(exc, asyncio.TimeoutError):
                raise InfraError(Kind.EXEC_TIMEOUT, f"`{' '.join(argv[:4])}` ran over {timeout:.0f} s in {self.id}") from None
            raise
        return ExecResult(proc.returncode or 0, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
                          time.monotonic() - start)

    async def daemon_request(self, payload: dict, timeout: float) -> dict:
        """The fast path: the episode daemon's socket, straight from the host (same reply as `task-api`).
        Raises daemon_channel.NotConnected where it cannot connect (the exec path then answers why)."""
        return await daemon_channel.request(str(Home(self.root).socket), payload, timeout)

    async def put_file(self, path: str, data: bytes) -> None:
        target = self._resolve(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    async def get_file(self, path: str) -> bytes:
        try:
            return self._resolve(path).read_bytes()
        except OSError as exc:
            raise InfraError(Kind.FILE_MISSING, f"{path} is not in sandbox {self.id}: {exc}") from exc

    async def release(self) -> None:
        if self._released:
            return
        self._released = True
        try:
            if self.identity is not None:
                # Everything of the episode's users first, wherever the agent put it: nothing writes
                # into the folder while it goes.
                await asyncio.to_thread(self.identity.kill_all)
            await asyncio.to_thread(_destroy, self.root)
        finally:
            if self.identity is not None:
                await asyncio.to_thread(self.identity.release)


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _destroy(root: Path) -> None:
    """Stop the episode daemon (and with its process group, every MCP server), then delete the dir. The
    daemon's pid is the one setup recorded (never run/daemon.pid, which is the agent's to write)."""
    pid = Home(root).daemon_pid()
    if pid is not None:
        try:
            os.kill(pid, signal.SIGTERM)
            # A short grace: the episode is over and its folder is about to go.
            deadline = time.monotonic() + RELEASE_GRACE
            while time.monotonic() < deadline and alive(pid):
                time.sleep(0.02)
        except ProcessLookupError:
            pass
        _killpg(pid)  # children that outlived their daemon
    # The episode's services live apart from the daemon until grading is done; then so does what its
    # preprocess left running.
    services.stop(Home(root))
    stop_leftovers(Home(root))
    # A daemon whose home path is too long for a socket address listens in /tmp, outside the folder;
    # one that was killed (by its agent, or SIGKILL) could not remove it itself.
    sock = Home(root).socket
    if root not in sock.parents:
        sock.unlink(missing_ok=True)
    shutil.rmtree(root, ignore_errors=True)


def _check_readable(source: Path, identity: local_users.Identity) -> None:
    """What the episode's own users must read (the source, this interpreter and project, the servers,
    the task's interpreters) they can, or the run stops here, naming it (each path probed once)."""
    from decathlon.sandbox.servers_config import default_servers_dir
    wanted = [str(source), sys.executable, str(REPO / "decathlon" / "sandbox"), str(default_servers_dir()),
              os.environ.get("DECATHLON_TASK_PYTHON", ""), os.environ.get("DECATHLON_AGENT_PYTHON", "")]
    missing = local_users.unreadable([p for p in wanted if p and os.path.exists(p)], identity.users)
    if missing:
        raise InfraError(Kind.ACQUIRE_UNREADABLE, "as root, the local backend runs each episode as unprivileged "
                         f"users of its own, which cannot read {', '.join(missing)}: make it readable by all "
                         "users (chmod o+rX on it and every folder above it: an interpreter under /root, pyenv's say, "
                         "needs `chmod o+x /root`, which ci/test does as root), move it, or use --backend compose")


class LocalBackend:
    name = "local"

    def __init__(self, direct: bool = True) -> None:
        self.direct = direct

    async def acquire(self, spec: SandboxSpec) -> LocalSandbox:
        identity = await asyncio.to_thread(local_users.claim, spec.episode_id) if local_users.isolating() else None
        try:
            if identity is not None:
                await asyncio.to_thread(_check_readable, spec.source, identity)
            base = base_dir()
            base.mkdir(parents=True, exist_ok=True)
            root = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{spec.episode_id[:12]}-", dir=base))
            labels = spec.all_labels()
            if identity is not None:
                labels[SLOT_LABEL] = str(identity.slot)
            (root / LABELS_FILE).write_text(json.dumps(labels, sort_keys=True))
        except BaseException:
            if identity is not None:
                identity.release()
            raise
        return LocalSandbox(root, spec.source, self.direct, identity)

    async def preflight(self, source: Path) -> None:
        """Nothing run-wide to check: readability is checked per episode, for its own users (acquire)."""

    async def close(self) -> None:
        """Nothing to free: a local sandbox holds nothing beyond itself."""

    async def collect(self, labels: dict[str, str], force: bool = False) -> GcResult:
        result = GcResult()
        for root in sorted(base_dir().glob(PREFIX + "*")):
            try:
                have = json.loads((root / LABELS_FILE).read_text())
            except (OSError, ValueError):
                continue
            if not isinstance(have, dict) or have.get(MANAGED_LABEL) != "true" \
                    or not all(have.get(k) == v for k, v in labels.items()):
                continue
            verdict = leases.judge(have, force, labels)
            if verdict.keep:
                result.skip(have.get(leases.RUN_LABEL), verdict)
                continue
            if str(have.get(SLOT_LABEL, "")).isdigit() and local_users.isolating():
                # What it left running under its users (unless a live episode holds that slot now).
                await asyncio.to_thread(local_users.reclaim, int(have[SLOT_LABEL]))
            await asyncio.to_thread(_destroy, root)
            result.took(have.get(leases.RUN_LABEL), verdict)
        return result


def new_id() -> str:
    return uuid.uuid4().hex
