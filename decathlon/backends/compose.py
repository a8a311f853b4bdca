"""The compose backend: one fresh Docker container per episode, from the sandbox image (docker-py).

Inside a container four users share the episode (docker/sandbox.Dockerfile, decathlon/sandbox/users.py):
- `agent` (uid 1500) is the container's own user: its main process is task-api's zygote, so every
  episode daemon it forks, with the MCP servers and the agent's python, runs unprivileged;
- `service` (uid 1501) runs the episode's mail, Canvas and WooCommerce, which the agent talks to;
- `grader` (uid 1502) runs preprocess and the evaluator: the task source (with the ground truth) is
  copied in for it alone (root:grader 0750), and it grades a frozen copy of the workspace;
- root only orchestrates: `task-api setup`/`evaluate` are exec'd as root and run none of the task's code
  and none of the agent's. What root trusts (the session record) lives where the agent cannot write.
  Root keeps only the capabilities that role needs (chown, DAC override, kill, setuid/setgid to drop).
No Docker socket, no host network, no-new-privileges, a read-only root filesystem, CPU, memory, pids and
disk limits (/episodes is a tmpfs-backed volume of DECATHLON_COMPOSE_DISK). Docker exec has no timeout
of its own, so every exec runs under `timeout`.

Tool calls take the direct channel where it works: the episode daemon listens in a host folder
bind-mounted into the container (one per container), and the host talks to its socket as the local
backend does (a few ms instead of a ~100 ms docker exec). Everything else, and every call whose
channel cannot be connected, goes through exec.
"""
from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import sys
import tarfile
import tempfile
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from decathlon.backends import leases
from decathlon.backends import daemon_channel
from decathlon.backends.base import MANAGED_LABEL, ExecResult, GcResult, SandboxSpec
from decathlon.backends.compose_pool import POOLED_EPISODE, Warm, WarmPool
from decathlon.errors import InfraError, Kind
from decathlon.sandbox.task_copy import CONFIG_MODULES

AGENT_UID = 1500
SERVICE_UID = 1501
GRADER_UID = 1502
# TASK_API_USERS: who runs what (decathlon/sandbox/users.py)
USERS = f"agent={AGENT_UID},service={SERVICE_UID},grader={GRADER_UID}"
HOME = "/episodes/home"
SOURCE = "/episodes/source"
ZYGOTE = "/run/decathlon/zygote.sock"
CHANNEL = "/run/decathlon/channel"  # the bind-mounted folder of the direct channel
CHANNEL_SOCKET = "daemon.sock"
ORPHAN_GRACE = 60.0  # seconds before `gc` takes a channel folder that has no container
_THREADS = ThreadPoolExecutor(max_workers=32, thread_name_prefix="decathlon-compose-start")
AS_AGENT = ["setpriv", f"--reuid={AGENT_UID}", f"--regid={AGENT_UID}", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--"]
# root's, as the task user (the agent has none); SETUID/SETGID only so the main process can become the agent.
KEEP_CAPS = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETUID", "SETGID"]
KILL_GRACE = 5  # seconds `timeout` waits after TERM before KILL
ENV = {"TASK_API_HOME": HOME, "TASK_API_ZYGOTE": ZYGOTE, "HOME": "/home/agent", "PYTHONDONTWRITEBYTECODE": "1",
       "TASK_API_USERS": USERS}
# The source copied in per episode: what setup and the evaluator read (configs and the one task).
# utils/: the package a checkout's scripts import (utils.general.helper and the like).
SOURCE_PARTS = ("configs", "utils", "global_configs.py")
BUILD_HINT = "build it with `decathlon image build` (see docs/docker.md)"
CHECKOUT_LABEL = "decathlon.checkout"  # on a checkout image (decathlon/checkout/checkout_image.py): the checkout it carries


def is_checkout(source: Path) -> bool:
    """A Toolathlon checkout, whose scripts need the environment its uv.lock pins (decathlon task-env), which only its
    own image carries; our packs run on the sandbox image's."""
    return (source / "tasks" / "finalpool").is_dir() and (source / "uv.lock").is_file()


def extra_env() -> dict[str, str]:
    """DECATHLON_COMPOSE_ENV (`NAME=VALUE,...`): variables every sandbox container starts with, for an image of the
    user's own (its task interpreter, say: DECATHLON_TASK_PYTHON=…). The sandbox's own (ENV) cannot be replaced."""
    out = {}
    for item in filter(None, (x.strip() for x in os.environ.get("DECATHLON_COMPOSE_ENV", "").split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise InfraError(Kind.USAGE, f"DECATHLON_COMPOSE_ENV: {item!r} is not NAME=VALUE (items separated by commas)")
        if name in ENV or name.startswith("TASK_API_"):
            raise InfraError(Kind.USAGE, f"DECATHLON_COMPOSE_ENV: {name} is the sandbox's own and cannot be set")
        out[name] = value
    return out


def channels_dir() -> Path | None:
    """Where the host keeps the direct channels' folders, or None for exec only.

    The engine bind-mounts a folder by its path on the engine's host. A runner in a container (the
    compose demo) names a folder mounted at the same path on both sides in DECATHLON_COMPOSE_CHANNELS;
    where the engine cannot find the folder at all, the backend turns the channel off (see _start).
    DECATHLON_COMPOSE_DIRECT=0 turns it off from the start.
    """
    if os.environ.get("DECATHLON_COMPOSE_DIRECT", "1") == "0":
        return None
    named = os.environ.get("DECATHLON_COMPOSE_CHANNELS")
    return Path(named) if named else Path(tempfile.gettempdir()) / f"decathlon-channels-{os.getuid()}"


def _docker():
    import docker
    return docker


def _engine_error(exc: Exception) -> InfraError:
    return InfraError(Kind.ENGINE_UNREACHABLE, f"the Docker engine is unreachable ({exc}); is dockerd running and "
                      "is /var/run/docker.sock (or DOCKER_HOST) usable by this user?")


def _run_as(argv: list[str]) -> str:
    """Who runs a command: the verbs that run the task's own scripts or stop processes are root's."""
    if argv[:1] == ["task-api"] and argv[1:2] and argv[1] in ("setup", "evaluate", "teardown", "status"):
        return "0"
    return str(AGENT_UID)


# After a task-api verb, the container's OOM-kill count (cgroup v1 or v2) as a marker line on stderr:
# the agent's code can push the container past its memory limit, and the kernel then kills some
# process in it, not necessarily one the host would notice.
OOM_MARK = "__decathlon_oom_kill="
_OOM_REPORT = ("for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do "
               f"[ -r $f ] && awk '$1==\"oom_kill\"{{print \"{OOM_MARK}\" $2}}' $f >&2; done")


def _wrap(argv: list[str]) -> list[str]:
    """task-api verbs run through sh: the OOM report after each, and for `setup` (as root; it lays out
    the episode's folders and owners itself) a wait for the agent's zygote first (so the daemon is
    forked as the agent), then a refusal of any daemon that is not the agent's, and the direct channel's
    folder locked: the daemon's socket is in it now, and the agent must not replace it (the host owns
    the folder, so it can still clear it)."""
    if argv[:2] != ["task-api", "setup"]:
        return ["sh", "-c", f'cd {HOME} 2>/dev/null; "$@"; rc=$?; {_OOM_REPORT}; exit $rc', "sh", *argv]
    script = (
        f"mkdir -p {HOME} && cd {HOME} || exit 3; "
        f"n=0; while [ ! -S {ZYGOTE} ] && [ $n -lt 3000 ]; do sleep 0.01; n=$((n+1)); done; "
        f'"$@"; rc=$?; {_OOM_REPORT}; [ $rc -ne 0 ] && exit $rc; '
        f"[ -d {CHANNEL} ] && chmod 0755 {CHANNEL}; "
        f"[ \"$(stat -c %u /proc/$(cat {HOME}/state/daemon.pid))\" = {AGENT_UID} ] || "
        "{ echo '{\"error\": {\"kind\": \"privilege\", \"message\": \"the episode daemon is not running as the "
        "agent user (the zygote was not ready)\"}}'; exit 3; }")
    return ["sh", "-c", script, "sh", *argv]


def _oom_kills(stderr: str) -> tuple[int, str]:
    kills, rest = 0, []
    for line in stderr.splitlines(keepends=True):
        if line.startswith(OOM_MARK):
            kills = max(kills, int(line[len(OOM_MARK):].strip() or 0))
        else:
            rest.append(line)
    return kills, "".join(rest)


class ComposeSandbox:
    def __init__(self, backend: "ComposeBackend", container, spec: SandboxSpec, channel: Path | None = None) -> None:
        self.backend = backend
        self.container = container
        self.id = container.name
        self.spec = spec
        self.channel = channel  # the host's side of the direct channel's folder
        self.use_direct = True  # False sends tool calls through exec even where the channel works
        self._released = False
        self._dirs = {"/episodes", SOURCE}
        self._dead: str | None = None

    @property
    def direct(self) -> bool:
        """Tool calls go straight to the daemon's socket once it is there (after setup, before teardown)."""
        return (self.use_direct and self.channel is not None and not self._released and not self._dead
                and (self.channel / CHANNEL_SOCKET).exists())

    async def daemon_request(self, payload: dict, timeout: float) -> dict:
        """One request to the episode daemon over the direct channel; the exec path where it cannot connect."""
        assert self.channel is not None
        try:
            reply = await daemon_channel.request(str(self.channel / CHANNEL_SOCKET), payload, timeout,
                                                 peer_uid=AGENT_UID)
        except daemon_channel.NotConnected as exc:
            # Nothing was sent, so the caller asks through exec instead, which also answers for a daemon
            # that died (and names an out-of-memory kill). The channel stays off for this sandbox.
            if (self.channel / CHANNEL_SOCKET).exists():
                print(f"decathlon: the direct channel to {self.id} failed ({exc}); using docker exec",
                      file=sys.stderr)
            self.channel = None
            raise
        except InfraError as exc:
            # The daemon went away mid-call: say why, if the container knows.
            raise (await self._after_break()) or exc from None
        kills = reply.pop("oom_kills", 0)
        if kills:
            raise await asyncio.to_thread(self._oom_killed, kills)
        return reply

    async def _after_break(self) -> InfraError | None:
        try:
            probe = await asyncio.to_thread(self._exec_sync, ["sh", "-c", _OOM_REPORT], "0", 30)
        except Exception:  # noqa: BLE001 - the engine or container is gone: _fate says which
            probe = (1, b"", b"")
        kills, _ = _oom_kills(probe[2].decode("utf-8", "replace"))
        if kills:
            return await asyncio.to_thread(self._oom_killed, kills)
        return await asyncio.to_thread(self._fate)

    @property
    def source_path(self) -> str:
        return SOURCE

    def _resolve(self, path: str) -> str:
        return path if path.startswith("/") else f"{HOME}/{path}"

    def _cause(self) -> str | None:
        """Why the container is gone (or about to be), or None while it is healthy."""
        try:
            self.container.reload()
        except _docker().errors.NotFound:
            return "its container was removed"
        except Exception as exc:  # noqa: BLE001 - the engine itself went away
            return f"the engine stopped answering ({exc})"
        state = self.container.attrs.get("State", {})
        if state.get("OOMKilled"):
            return f"out of memory (the container hit its {self.backend.memory} limit)"
        if not state.get("Running"):
            return f"its container stopped (exit code {state.get('ExitCode')}, {state.get('Status')})"
        return None

    def _fate(self) -> InfraError | None:
        cause = self._cause()
        return self._died(cause) if cause else None

    def _oom_killed(self, kills: int) -> InfraError:
        return self._died(f"out of memory (the kernel killed {kills} process(es) at its {self.backend.memory} limit)")

    def _died(self, cause: str) -> InfraError:
        # A container past its memory limit is not trusted with another call: it goes now.
        self._dead = cause
        try:
            self.container.kill()
        except Exception:  # noqa: BLE001 - it may be gone already
            pass
        return InfraError(Kind.SANDBOX_DIED, f"sandbox {self.id} died: {cause}")

    def _exec_sync(self, argv: list[str], user: str, timeout: float) -> tuple[int, bytes, bytes]:
        api = self.backend.client.api
        wrapped = ["timeout", "-k", str(KILL_GRACE), str(int(max(1, timeout))), *argv]
        ex = api.exec_create(self.container.id, wrapped, user=user, environment=ENV, workdir="/episodes")
        out, err = api.exec_start(ex["Id"], demux=True)
        code = api.exec_inspect(ex["Id"])["ExitCode"]
        return code if code is not None else -1, out or b"", err or b""

    async def exec(self, argv: list[str], stdin: bytes | None = None, timeout: float = 300.0) -> ExecResult:
        if self._released:
            raise InfraError(Kind.SANDBOX_RELEASED, f"sandbox {self.id} was already released")
        if self._dead:
            raise InfraError(Kind.SANDBOX_DIED, f"sandbox {self.id} died: {self._dead}")
        user = _run_as(argv)
        wrapped = _wrap(argv) if argv[:1] == ["task-api"] else argv
        start = time.monotonic()
        if stdin is not None:
            # Docker exec's own stdin needs a hijacked socket whose half-close docker-py does not give
            # reliably (nor within our time bound); the input goes in as a file instead, owned by the user
            # that reads it, in a folder that user owns (so it can remove it), read as the command's stdin.
            # One tar member and no folder entries: extracting a folder entry would re-own an existing
            # folder (the agent's run/) to root.
            path = f"{HOME}/run" if user != "0" else "/episodes"
            path += f"/.stdin-{uuid.uuid4().hex[:12]}"
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w") as tar:
                info = tarfile.TarInfo(path[len("/episodes/"):])
                info.size, info.mode, info.mtime = len(stdin), 0o400, int(time.time())
                info.uid = info.gid = int(user)
                tar.addfile(info, io.BytesIO(stdin))
            try:
                ok = await asyncio.to_thread(self.container.put_archive, "/episodes", buf.getvalue())
            except _docker().errors.APIError as exc:
                died = await asyncio.to_thread(self._fate)
                raise died or InfraError(Kind.PUT_FAILED, f"stdin for {self.id}: {exc}") from None
            if not ok:
                raise InfraError(Kind.PUT_FAILED, f"could not write the stdin of `{' '.join(argv[:3])}` in {self.id}")
            wrapped = ["sh", "-c", 'f=$1; shift; "$@" < "$f"; rc=$?; rm -f "$f"; exit $rc', "sh", path, *wrapped]
        try:
            # The in-container `timeout` is the bound; this one only guards against a stuck engine.
            code, out, err = await asyncio.wait_for(asyncio.to_thread(self._exec_sync, wrapped, user, timeout),
                                                    timeout + KILL_GRACE + 30)
        except asyncio.TimeoutError:
            raise InfraError(Kind.EXEC_TIMEOUT, f"the engine did not finish `{' '.join(argv[:3])}` in {self.id}") from None
        except _docker().errors.APIError as exc:
            died = await asyncio.to_thread(self._fate)
            if died:
                raise died from None
            raise InfraError(Kind.EXEC_FAILED, f"docker exec in {self.id} failed: {exc}") from None
        elapsed = time.monotonic() - start
        if code in (124, 137) and elapsed >= timeout - 0.5:
            raise InfraError(Kind.EXEC_TIMEOUT, f"`{' '.join(argv[:4])}` ran over {timeout:.0f} s in {self.id}")
        stderr = err.decode("utf-8", "replace")
        kills, stderr = _oom_kills(stderr)
        if kills:
            raise await asyncio.to_thread(self._oom_killed, kills)
        # A call that took the container down is an infra error, never a tool result.
        if code != 0:
            died = await asyncio.to_thread(self._fate)
            if died:
                raise died
        return ExecResult(code, out.decode("utf-8", "replace"), stderr, elapsed)

    def _tar(self, path: str, data: bytes) -> tuple[str, bytes]:
        """A tar rooted at /episodes holding the file and any parent folder not known to exist yet."""
        rel = Path(path).relative_to("/episodes")
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for parent in reversed(rel.parents[:-1] if len(rel.parents) > 1 else []):
                full = f"/episodes/{parent}"
                if full not in self._dirs:
                    info = tarfile.TarInfo(str(parent))
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    tar.addfile(info)
                    self._dirs.add(full)
            info = tarfile.TarInfo(str(rel))
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
            tar.addfile(info, io.BytesIO(data))
        return "/episodes", buf.getvalue()

    async def put_file(self, path: str, data: bytes) -> None:
        target = self._resolve(path)
        if not target.startswith("/episodes/"):
            raise InfraError(Kind.USAGE, f"put_file writes under /episodes only, not {target}")
        where, blob = self._tar(target, data)
        try:
            ok = await asyncio.to_thread(self.container.put_archive, where, blob)
        except _docker().errors.APIError as exc:
            raise (await asyncio.to_thread(self._fate)) or InfraError(Kind.PUT_FAILED, f"put_archive failed: {exc}") from None
        if not ok:
            raise InfraError(Kind.PUT_FAILED, f"could not write {target} in {self.id}")

    async def get_file(self, path: str) -> bytes:
        target = self._resolve(path)
        try:
            stream, _ = await asyncio.to_thread(self.container.get_archive, target)
            raw = b"".join(await asyncio.to_thread(list, stream))
        except _docker().errors.NotFound as exc:
            raise InfraError(Kind.FILE_MISSING, f"{path} is not in sandbox {self.id}") from exc
        except _docker().errors.APIError as exc:
            raise InfraError(Kind.FILE_MISSING, f"{path} could not be read from {self.id}: {exc}") from exc
        with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
            member = tar.next()
            f = tar.extractfile(member) if member is not None else None
            if f is None:
                raise InfraError(Kind.FILE_MISSING, f"{path} in {self.id} is not a regular file")
            return f.read()

    async def copy_source(self, source: Path, task: str) -> None:
        """The task's source, root-only: configs and this task's folder (not every task's). The config modules the
        user names on this host (DECATHLON_TOKEN_KEY_SESSION, DECATHLON_GLOBAL_CONFIGS: host paths, which the
        container does not have) go in as the copy's own configs/token_key_session.py and global_configs.py; the
        key files a token session names must then be in the checkout's configs/ (upstream's `./configs/…`)."""
        buf = io.BytesIO()
        root = source.resolve()
        named: dict[str, Path] = {}
        for name, variable in sorted(CONFIG_MODULES.items()):
            value = os.environ.get(variable)
            if value:
                if not Path(value).is_file():
                    raise InfraError(Kind.BAD_CONFIG, f"{variable}={value}: no such file (it names the {name} to use)")
                named[f"source/configs/{name}"] = Path(value)

        def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
            # The grader's: preprocess and the evaluator read it and write into their task folder, as
            # Toolathlon's scripts do. The folders above (root:grader 0750) keep the agent out.
            info.uid = info.gid = GRADER_UID
            info.uname = info.gname = "grader"
            info.mode |= 0o700 if info.isdir() else 0o600
            return info

        def checkout_part(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
            return None if info.name in named else owned(info)

        def closed(name: str) -> tarfile.TarInfo:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, 0o750, 0, GRADER_UID
            return info
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.addfile(closed("source"))
            for part in SOURCE_PARTS:
                if (root / part).exists():
                    tar.add(root / part, f"source/{part}", filter=checkout_part)
            for name, path in sorted(named.items()):
                tar.add(path.resolve(), name, filter=owned)  # the file, not a link to a host path
            task_dir = root / "tasks" / "finalpool" / task
            for folder in ("tasks", "tasks/finalpool"):
                tar.addfile(closed(f"source/{folder}"))
            if task_dir.is_dir():
                tar.add(task_dir, f"source/tasks/finalpool/{task}", filter=owned)
        ok = await asyncio.to_thread(self.container.put_archive, "/episodes", buf.getvalue())
        if not ok:
            raise InfraError(Kind.PUT_FAILED, f"could not copy the task source into {self.id}")

    async def release(self) -> None:
        if self._released:
            return
        self._released = True
        await asyncio.to_thread(self.backend.remove, self.container)


class ComposeBackend:
    name = "compose"

    def __init__(self, client, image: str, network: str = "none", cpus: float = 1.0, memory: str = "1g",
                 pids: int = 512, labels: dict[str, str] | None = None, channels: Path | None = None,
                 pool: int = 0, disk: str = "1g") -> None:
        self.client = client
        self.image = image
        self.network = network
        self.cpus = cpus
        self.memory = memory
        self.pids = pids
        self.disk = disk  # /episodes (workspace, task source, state): a bound, not the host's root disk
        self._image_ok = False
        self.labels = labels or {}  # added to every container's (e.g. a CI job's id, for its own cleanup)
        self.channels = channels
        self.pool_size = pool
        self._pool: WarmPool | None = None
        self._pool_run: str | None = None
        self._pool_lock = threading.Lock()

    @classmethod
    def from_env(cls) -> "ComposeBackend":
        docker = _docker()
        try:
            client = docker.from_env(timeout=120)
            client.ping()
        except Exception as exc:  # noqa: BLE001 - any failure to reach it reads the same to a user
            raise _engine_error(exc) from None
        image = os.environ.get("DECATHLON_IMAGE")
        if not image:
            from decathlon.checkout.image import default_tag
            image = default_tag()
        return cls(client, image, network=os.environ.get("DECATHLON_COMPOSE_NETWORK", "none"),
                   cpus=float(os.environ.get("DECATHLON_COMPOSE_CPUS", "1")),
                   memory=os.environ.get("DECATHLON_COMPOSE_MEMORY", "1g"),
                   pids=int(os.environ.get("DECATHLON_COMPOSE_PIDS", "512")),
                   disk=os.environ.get("DECATHLON_COMPOSE_DISK", "1g"),
                   labels=dict(kv.split("=", 1) for kv in os.environ.get("DECATHLON_COMPOSE_LABELS", "").split(",")
                               if "=" in kv),
                   channels=channels_dir(), pool=int(os.environ.get("DECATHLON_COMPOSE_POOL", "0")))

    def _channel(self, name: str) -> Path | None:
        """The host's folder for one container's direct channel (mounted at CHANNEL), or None."""
        if self.channels is None:
            return None
        try:
            self.channels.mkdir(mode=0o700, parents=True, exist_ok=True)  # keeps the host's other users out
            folder = self.channels / name
            folder.mkdir(mode=0o777)
            folder.chmod(0o777)  # past the umask: the daemon (the agent's uid) binds here; setup then locks it
            return folder
        except OSError as exc:
            print(f"decathlon: no direct channel ({exc}); tool calls go through docker exec", file=sys.stderr)
            return None

    def _run(self, name: str, labels: dict[str, str], channel: Path | None):
        docker = _docker()
        env = {**extra_env(), **ENV, "TASK_API_REPORT_OOM": "1"}
        # An anonymous volume (the engine puts archives into a read-only container only there) backed by a
        # tmpfs of bounded size: what the agent writes fills its own quota, not the host's disk. Its pages
        # count against the container's memory limit too.
        episodes = docker.types.DriverConfig("local", {"type": "tmpfs", "device": "tmpfs",
                                                        "o": f"size={self.disk},mode=0755"})
        mounts = [docker.types.Mount("/episodes", None, type="volume", driver_config=episodes)]
        if channel is not None:
            env["TASK_API_SOCKET"] = f"{CHANNEL}/{CHANNEL_SOCKET}"
            mounts.append(docker.types.Mount(CHANNEL, str(channel), type="bind"))
        # The container's own user is root (an exec as root only has capabilities then). Its main process
        # is root's `sleep`, not the agent's: evaluate stops every process of the agent, and the container
        # must outlive that. The zygote runs beside it as the agent, with an empty bounding set.
        zygote = ["sh", "-c", f"{' '.join(AS_AGENT)} python -m decathlon.sandbox.zygote --socket {ZYGOTE} "
                  ">/run/decathlon/zygote.log 2>&1 & exec sleep infinity"]
        try:
            return self.client.containers.run(
                self.image, zygote, name=name, detach=True, labels={**self.labels, **labels},
                init=True, network_mode=self.network if self.network == "none" else None,
                network=None if self.network == "none" else self.network,
                nano_cpus=int(self.cpus * 1e9), mem_limit=self.memory, memswap_limit=self.memory,
                pids_limit=self.pids, cap_drop=["ALL"], cap_add=KEEP_CAPS, security_opt=["no-new-privileges"],
                read_only=True, environment=env, working_dir="/episodes",
                # /episodes is an anonymous volume, not a tmpfs: the engine refuses put_archive into
                # a read-only container anywhere but a volume. It goes with the container (v=True).
                mounts=mounts,
                tmpfs={"/tmp": "size=256m,mode=1777",
                       "/run/decathlon": f"size=1m,mode=0755,uid={AGENT_UID},gid={AGENT_UID}",
                       "/home/agent": f"size=64m,mode=0755,uid={AGENT_UID},gid={AGENT_UID}"})
        except docker.errors.ImageNotFound:
            raise InfraError(Kind.IMAGE_MISSING, f"the sandbox image {self.image} is not built; {BUILD_HINT}") from None
        except docker.errors.APIError as exc:
            raise InfraError(Kind.ACQUIRE_FAILED, f"could not start a sandbox container: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - requests' connection errors: the engine is gone
            raise _engine_error(exc) from None

    def _check_image(self) -> None:
        if self._image_ok:
            return
        docker = _docker()
        try:
            self.client.images.get(self.image)
        except docker.errors.ImageNotFound:
            raise InfraError(Kind.IMAGE_MISSING, f"the sandbox image {self.image} is not built; {BUILD_HINT}") from None
        except Exception as exc:  # noqa: BLE001
            raise _engine_error(exc) from None
        self._image_ok = True

    def _start(self, name: str, labels: dict[str, str]) -> Warm:
        channel = self._channel(name)
        try:
            return Warm(self._run(name, labels, channel), channel)
        except InfraError as exc:
            self.forget_channel(channel)
            if channel is None or "bind source path does not exist" not in exc.message:
                raise
            # The engine does not see this process's folders (this runner is in a container without
            # the folder mounted at the same path): exec only, from now on.
            print(f"decathlon: the engine cannot see {self.channels}; tool calls go through docker exec "
                  "(set DECATHLON_COMPOSE_CHANNELS to a folder mounted at the same path, see docs/docker.md)",
                  file=sys.stderr)
            self.channels = None
            return Warm(self._run(name, labels, None), None)
        except BaseException:
            self.forget_channel(channel)
            raise

    def _start_warm(self, labels: dict[str, str]) -> Warm:
        """A pool's container, handed out only once its zygote listens (the start-up it saves)."""
        warm = self._start(f"decathlon-pool-{uuid.uuid4().hex[:12]}", labels)
        wait = f"n=0; while [ ! -S {ZYGOTE} ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done; [ -S {ZYGOTE} ]"
        try:
            code, _ = warm.container.exec_run(["sh", "-c", wait], user=str(AGENT_UID))
        except Exception as exc:  # noqa: BLE001 - the pool retries; acquire meanwhile starts fresh ones
            self.remove(warm.container)
            raise InfraError(Kind.ACQUIRE_FAILED, f"a pooled container did not start: {exc}") from None
        if code != 0:
            self.remove(warm.container)
            raise InfraError(Kind.ACQUIRE_FAILED, "a pooled container's zygote did not start within 60 s")
        return warm

    def _warm(self, spec: SandboxSpec) -> Warm | None:
        """A pre-started container of this run, if the pool has one (the pool starts with the run's first
        episode: its containers carry the run's labels, all but the episode's own)."""
        if self.pool_size <= 0:
            return None
        labels = {k: v for k, v in spec.all_labels().items() if k not in ("decathlon.episode", "decathlon.task")}
        labels["decathlon.episode"] = POOLED_EPISODE
        key = json.dumps(labels, sort_keys=True)
        with self._pool_lock:
            if self._pool is None or self._pool_run != key:
                if self._pool is not None:
                    self._pool.close()
                self._pool = WarmPool(self.pool_size, lambda: self._start_warm(labels),
                                      lambda w: self.remove(w.container), self._healthy)
                self._pool_run = key
                return None
            return self._pool.take()

    @staticmethod
    def _healthy(warm: Warm) -> bool:
        try:
            warm.container.reload()
        except Exception:  # noqa: BLE001
            return False
        return bool(warm.container.attrs.get("State", {}).get("Running"))

    def pool_ready(self) -> int:
        """How many pooled containers are ready to hand out now (0 without a pool)."""
        pool = self._pool
        return pool.ready() if pool is not None else 0

    async def preflight(self, source: Path) -> None:
        """The image exists (else every episode would fail at acquire), and for a Toolathlon checkout it is not another
        checkout's; the plain sandbox image for a checkout is said once (it lacks the checkout's task environment)."""
        await asyncio.to_thread(self._check_image_for, source)

    def _check_image_for(self, source: Path) -> None:
        checkout = is_checkout(source)
        how = (f"build it with `decathlon image build --source {source}` and run with DECATHLON_IMAGE=<the tag it "
               "prints>" if checkout else BUILD_HINT)
        docker = _docker()
        try:
            img = self.client.images.get(self.image)
        except docker.errors.ImageNotFound:
            what = f"the checkout image {self.image}" if os.environ.get("DECATHLON_IMAGE") else f"the sandbox image {self.image}"
            raise InfraError(Kind.IMAGE_MISSING, f"{what} is not built; {how}") from None
        except Exception as exc:  # noqa: BLE001
            raise _engine_error(exc) from None
        self._image_ok = True
        built_for = (img.labels or {}).get(CHECKOUT_LABEL)
        if checkout and built_for is None:
            # Said, not refused: a source in the checkout's conventions may need nothing the plain image lacks (ours
            # do not); a real checkout's tasks would each end task_python_too_old or with a module missing.
            print(f"decathlon: warning: {source} is a checkout (its uv.lock) and {self.image} is the plain sandbox image, "
                  f"without its task environment: its tasks may each fail at setup. For the checkout's own image, {how}",
                  file=sys.stderr)
        if checkout and built_for is not None and Path(built_for).resolve() != source.resolve():
            raise InfraError(Kind.IMAGE_MISSING, f"{self.image} carries the checkout {built_for}, not {source}: {how}")

    async def close(self) -> None:
        """Remove the warm pool's unused containers (a later acquire starts a new pool)."""
        await asyncio.to_thread(self._close_pool)

    def _close_pool(self) -> None:
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def _obtain(self, spec: SandboxSpec) -> Warm:
        return self._warm(spec) or self._start(f"decathlon-{spec.episode_id[:12]}", spec.all_labels())

    def _discard_started(self, job: Future) -> None:
        if not job.cancelled() and job.exception() is None:
            self.remove(job.result().container)

    async def acquire(self, spec: SandboxSpec) -> ComposeSandbox:
        await asyncio.to_thread(self._check_image)
        # On threads of our own, not the loop's: a cancelled acquire (Ctrl-C included, when asyncio.run
        # cancels every task) cannot stop the engine from finishing a container, so the thread that
        # made it removes it; interpreter exit waits for these threads.
        job = _THREADS.submit(self._obtain, spec)
        try:
            warm = await asyncio.wrap_future(job)
        except asyncio.CancelledError:
            job.add_done_callback(self._discard_started)
            raise
        box = ComposeSandbox(self, warm.container, spec, warm.channel)
        try:
            await box.copy_source(spec.source, spec.task)
        except BaseException:
            await asyncio.shield(box.release())  # also on cancellation: nothing is left behind
            raise
        return box

    def remove(self, container) -> None:
        self._remove(container.id, container.name)

    def _remove(self, ident: str, name: str) -> None:
        try:
            self.client.api.remove_container(ident, force=True, v=True)
        except _docker().errors.NotFound:
            pass
        except Exception:  # noqa: BLE001 - release never raises; `decathlon gc` finds what is left
            pass
        if self.channels is not None:
            self.forget_channel(self.channels / name)

    def _listed(self, labels: list[str]) -> list[tuple[str, str, dict[str, str]]]:
        """(id, name, labels) of the containers with these labels, in one call: listing with docker-py's
        models inspects each one after, which fails if another run removes one in between."""
        found = self.client.api.containers(all=True, filters={"label": labels})
        return sorted((c["Id"], c["Names"][0].lstrip("/"), c.get("Labels") or {}) for c in found)

    @staticmethod
    def forget_channel(channel: Path | None) -> None:
        if channel is not None:
            shutil.rmtree(channel, ignore_errors=True)

    async def collect(self, labels: dict[str, str], force: bool = False) -> GcResult:
        wanted = [f"{MANAGED_LABEL}=true", *(f"{k}={v}" for k, v in labels.items())]

        def sweep() -> GcResult:
            result = GcResult()
            for ident, name, have in self._listed(wanted):
                verdict = leases.judge(have, force, labels)
                if verdict.keep:
                    result.skip(have.get(leases.RUN_LABEL), verdict)
                    continue
                self._remove(ident, name)
                result.took(have.get(leases.RUN_LABEL), verdict)
            self._sweep_channels()
            return result
        return await asyncio.to_thread(sweep)

    def _sweep_channels(self) -> None:
        """Channel folders whose container is gone (a runner killed between the two): a minute's grace,
        so a container being created right now keeps its folder."""
        if self.channels is None or not self.channels.is_dir():
            return
        live = {name for _, name, _ in self._listed([f"{MANAGED_LABEL}=true"])}
        for folder in sorted(self.channels.iterdir()):
            try:
                stale = time.time() - folder.stat().st_mtime > ORPHAN_GRACE
            except OSError:
                continue
            if folder.name not in live and stale:
                self.forget_channel(folder)


_SHARED: dict[str, ComposeBackend] = {}


def shared_backend() -> ComposeBackend:
    """One backend per configuration in a process: a harness that asks for a backend per episode (the
    verifiers one) still shares one warm pool."""
    key = json.dumps({k: v for k, v in sorted(os.environ.items()) if k.startswith("DECATHLON_")})
    if key not in _SHARED:
        _SHARED[key] = ComposeBackend.from_env()
    return _SHARED[key]
