"""The prime backend: one Prime Intellect sandbox per episode, through the pinned prime-sandboxes SDK.

The sandbox runs the project's sandbox image (`task-api` on PATH, the task source at `source_path`);
every verb goes through `execute_command`. Built for a 1,024-episode batch on a platform that is
sometimes slow, throttled or wrong: a create is retried under one idempotency key (a retry never
yields a second sandbox), a start is bounded, a sandbox that says RUNNING but does not answer is
replaced, deletes are retried, and `collect` bulk-deletes leftovers by label. Configuration is from
the environment (see `PrimeConfig.from_env` and docs/prime.md); the API key only from PRIME_API_KEY,
and it is never logged or stored.
"""
from __future__ import annotations

import asyncio
import logging
import math
import os
import random
import shlex
import tempfile
import time
import uuid
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from decathlon.backends import leases
from decathlon.backends.base import MANAGED_LABEL, ExecOnly, ExecResult, GcResult, SandboxSpec
from decathlon.errors import InfraError, Kind

if TYPE_CHECKING:  # for annotations only: the SDK itself is imported where it is used
    from prime_sandboxes import AsyncSandboxClient

log = logging.getLogger("decathlon.prime")

ENV = "DECATHLON_PRIME_"
TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class PrimeConfig:
    image: str = "ghcr.io/decathlon-rl/sandbox:latest"
    cpu: float = 1.0
    memory_gb: float = 2.0
    disk_gb: float = 5.0
    region: str | None = None
    project: str = "decathlon"
    source_path: str = "/opt/decathlon/src/fixtures/toolathlon-mini"  # where the image keeps the task source
    home: str = "/episodes/home"  # the episode's TASK_API_HOME inside the sandbox (not under root's 0700 /root)
    # TASK_API_USERS in the sandbox: the agent, the services and the grader each as the image's own user,
    # as in a compose container (decathlon/sandbox/users.py), so the agent never runs as root; "none": all as root.
    users: str = "agent=1500,service=1501,grader=1502"
    lifetime_minutes: int = 180  # the platform kills a sandbox the host forgot, even if gc never runs
    start_timeout: float = 360.0  # PENDING → RUNNING; field reports show >115 s under load
    probe_timeout: float = 30.0  # RUNNING but not answering for this long → replaced
    replacements: int = 2
    creates_per_min: float = 600.0
    max_live: int = 64
    create_attempts: int = 8
    release_attempts: int = 5
    backoff_base: float = 0.5
    backoff_cap: float = 20.0

    def sandbox_env(self) -> dict[str, str]:
        # Not DECATHLON_TOKEN_KEY_SESSION (nor DECATHLON_GLOBAL_CONFIGS): it names a file of this host, which a Prime
        # sandbox does not have. Its source is the image's checkout (`decathlon image build --source CHECKOUT`), whose
        # own configs/token_key_session.py (and key files) `--saas real` then uses, as task_copy.py does for any checkout.
        env = {"TASK_API_HOME": self.home}
        if self.users and self.users != "none":
            env["TASK_API_USERS"] = self.users
        return env

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> PrimeConfig:
        env = os.environ if env is None else env
        cfg = cls()
        changes: dict[str, Any] = {}
        for name, default in cfg.__dict__.items():
            raw = env.get(ENV + name.upper())
            if raw is None or raw == "":
                continue
            kind = type(default) if default is not None else str
            changes[name] = kind(raw) if kind is not bool else raw not in ("0", "false", "no")
        return replace(cfg, **changes)


def _http_status(exc: BaseException) -> int | None:
    """The HTTP status behind an SDK error: the SDK raises its APIError from httpx's status error."""
    import httpx

    seen: BaseException | None = exc
    for _ in range(8):  # a chain of causes is short; bounded all the same
        if seen is None:
            return None
        if isinstance(seen, httpx.HTTPStatusError):
            return seen.response.status_code
        seen = seen.__cause__ or seen.__context__
    return None


def _transient(exc: BaseException) -> bool:
    """Worth retrying: a timeout, a connection that failed, a 429 or a 5xx, as the SDK's error types and
    the status behind them say (never its wording)."""
    import httpx
    from prime_sandboxes import APITimeoutError

    if isinstance(exc, (APITimeoutError, asyncio.TimeoutError)):
        return True
    cause: BaseException | None = exc
    for _ in range(8):
        if cause is None:
            break
        if isinstance(cause, (httpx.TransportError, httpx.TimeoutException)):
            return True
        cause = cause.__cause__ or cause.__context__
    return _http_status(exc) in TRANSIENT_STATUS


def _delay(attempt: int, base: float, cap: float) -> float:
    """Full-jitter exponential backoff: a thousand episodes throttled at once do not retry in step."""
    return random.uniform(0, min(cap, base * 2 ** attempt))


class _Pacer:
    """At most `per_min` creates a minute, spaced evenly: bursts are what draws 429s."""

    def __init__(self, per_min: float) -> None:
        self.interval = 60.0 / per_min if per_min > 0 else 0.0
        self.next = 0.0

    async def wait(self) -> None:
        now = time.monotonic()
        slot = max(now, self.next)
        self.next = slot + self.interval
        if slot > now:
            await asyncio.sleep(slot - now)


@dataclass
class _LoopState:
    """What must belong to one event loop: the SDK client (httpx) and the live-sandbox cap."""
    client: AsyncSandboxClient
    live: asyncio.Semaphore
    boxes: dict[str, PrimeSandbox] = field(default_factory=dict)


class PrimeSandbox(ExecOnly):
    def __init__(self, backend: PrimeBackend, state: _LoopState, sandbox_id: str, episode: str) -> None:
        self.backend, self.state, self.id, self.episode = backend, state, sandbox_id, episode
        self._released = False
        self._release_task: asyncio.Task | None = None
        self._holds_slot = True

    @property
    def source_path(self) -> str:
        return self.backend.config.source_path

    @property
    def client(self) -> AsyncSandboxClient:
        return self.state.client

    def _path(self, path: str) -> str:
        return path if path.startswith("/") else f"{self.backend.config.home}/{path}"

    def _died(self, exc: BaseException) -> InfraError:
        return InfraError(Kind.SANDBOX_DIED, f"sandbox {self.id} is no longer running: {exc}")

    async def exec(self, argv: list[str], stdin: bytes | None = None, timeout: float = 300.0) -> ExecResult:
        from prime_sandboxes import APIError, CommandTimeoutError, SandboxNotRunningError

        if self._released:
            raise InfraError(Kind.SANDBOX_RELEASED, f"sandbox {self.id} was already released")
        command = shlex.join(argv)
        if stdin is not None:  # a file read as stdin, removed after (commands run through a shell)
            name = f"run/stdin-{uuid.uuid4().hex[:12]}"
            await self.put_file(name, stdin)
            command = f"{command} < {shlex.quote(name)}; rc=$?; rm -f {shlex.quote(name)}; exit $rc"
        home = self.backend.config.home
        start = time.monotonic()
        try:
            # The SDK's own deadline kills the command; ours is a backstop for a gateway that hangs.
            res = await asyncio.wait_for(
                self.client.execute_command(self.id, command, working_dir=home, env=self.backend.config.sandbox_env(),
                                            timeout=max(1, math.ceil(timeout))), timeout + 30)
        except (CommandTimeoutError, asyncio.TimeoutError):
            raise InfraError(Kind.EXEC_TIMEOUT, f"`{' '.join(argv[:4])}` ran over {timeout:.0f} s in {self.id}") from None
        except SandboxNotRunningError as exc:
            raise self._died(exc) from exc
        except APIError as exc:
            raise InfraError(Kind.SANDBOX_UNREACHABLE, f"sandbox {self.id} did not answer: {exc}") from exc
        return ExecResult(res.exit_code, res.stdout, res.stderr, time.monotonic() - start)

    async def put_file(self, path: str, data: bytes) -> None:
        from prime_sandboxes import APIError, SandboxNotRunningError

        try:
            await self.client.upload_bytes(self.id, self._path(path), data, os.path.basename(path) or "file")
        except SandboxNotRunningError as exc:
            raise self._died(exc) from exc
        except APIError as exc:
            raise InfraError(Kind.FILE_UPLOAD_FAILED, f"{path} into sandbox {self.id}: {exc}") from exc

    async def get_file(self, path: str) -> bytes:
        from prime_sandboxes import APIError, SandboxFileNotFoundError, SandboxNotRunningError

        with tempfile.TemporaryDirectory(prefix="decathlon-prime-") as tmp:
            local = os.path.join(tmp, "file")
            try:
                await self.client.download_file(self.id, self._path(path), local)
                return Path(local).read_bytes()
            except SandboxNotRunningError as exc:
                raise self._died(exc) from exc
            except APIError as exc:
                missing = isinstance(exc, SandboxFileNotFoundError) or _http_status(exc) == 404
                kind = Kind.FILE_MISSING if missing else Kind.FILE_DOWNLOAD_FAILED
                raise InfraError(kind, f"{path} is not readable in sandbox {self.id}: {exc}") from exc

    async def release(self) -> None:
        """Delete, retried with backoff; a sandbox that cannot be deleted is left for `collect` (the run's
        labels find it) and the platform's lifetime limit. Never raises; concurrent calls share one try."""
        if self._release_task is None:
            self._released = True
            self._release_task = asyncio.ensure_future(self._delete())
        try:
            await asyncio.shield(self._release_task)
        except Exception:  # noqa: BLE001 - release never raises
            pass

    async def _delete(self) -> None:
        from prime_sandboxes import UnauthorizedError

        cfg = self.backend.config
        try:
            for attempt in range(cfg.release_attempts):
                try:
                    await self.client.delete(self.id)
                    return
                except Exception as exc:  # noqa: BLE001 - every failure is retried, then left to gc
                    if _http_status(exc) == 404:  # already gone
                        return
                    if isinstance(exc, UnauthorizedError):
                        break
                    log.warning("delete %s failed (attempt %d): %s", self.id, attempt + 1, exc)
                    await asyncio.sleep(_delay(attempt, cfg.backoff_base, cfg.backoff_cap))
            self.backend.undeleted.add(self.id)
            log.error("sandbox %s could not be deleted; `decathlon gc --backend prime` removes it", self.id)
        finally:
            self.state.boxes.pop(self.id, None)
            if self._holds_slot:
                self._holds_slot = False
                self.state.live.release()


_SHARED: dict[PrimeConfig, PrimeBackend] = {}


class PrimeBackend:
    name = "prime"

    def __init__(self, config: PrimeConfig, api_key: str) -> None:
        if not api_key:
            raise InfraError(Kind.NO_API_KEY, "the prime backend needs PRIME_API_KEY (a Prime Intellect API key)")
        self.config = config
        self._api_key = api_key  # handed to the SDK only; never printed, logged or written
        self._states: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = weakref.WeakKeyDictionary()
        self._pacer = _Pacer(config.creates_per_min)
        self.stopped: InfraError | None = None  # set on 401/402/403: no more creates
        self.undeleted: set[str] = set()

    def __repr__(self) -> str:  # the key stays out of every repr and traceback
        return f"PrimeBackend(image={self.config.image!r}, max_live={self.config.max_live})"

    @classmethod
    def from_env(cls) -> PrimeBackend:
        """One backend per configuration per process: callers that build a backend per rollout (the
        verifiers taskset does) still share one pacer, one live-sandbox cap and one SDK client."""
        config, key = PrimeConfig.from_env(), os.environ.get("PRIME_API_KEY", "")
        shared = _SHARED.get(config)
        if shared is None or shared._api_key != key:
            shared = _SHARED[config] = cls(config, key)
        return shared

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._states.get(loop)
        if state is None:
            from prime_sandboxes import AsyncSandboxClient

            state = _LoopState(AsyncSandboxClient(api_key=self._api_key), asyncio.Semaphore(self.config.max_live))
            self._states[loop] = state
        return state

    def _labels(self, spec: SandboxSpec) -> list[str]:
        return [f"{k}={v}" for k, v in {"decathlon.project": self.config.project, **spec.all_labels()}.items()]

    async def _stop(self, state: _LoopState, kind: Kind, exc: BaseException) -> InfraError:
        """The account cannot create (401, 402, 403): stop creating, release what exists, report."""
        if self.stopped is None:
            self.stopped = InfraError(kind, f"Prime refused to create sandboxes ({exc}); no more are created "
                                            "in this run and the live ones are being released", "acquire")
            log.error("%s", self.stopped)
            await asyncio.gather(*(box.release() for box in list(state.boxes.values())))
        return self.stopped

    async def _create(self, state: _LoopState, spec: SandboxSpec, key: str) -> str:
        from prime_sandboxes import APIError, CreateSandboxRequest, PaymentRequiredError, UnauthorizedError

        cfg = self.config
        request = CreateSandboxRequest(
            name=f"decathlon-{spec.episode_id[:16]}", docker_image=cfg.image, cpu_cores=cfg.cpu,
            memory_gb=cfg.memory_gb, disk_size_gb=cfg.disk_gb, timeout_minutes=cfg.lifetime_minutes,
            labels=self._labels(spec), region=cfg.region, idempotency_key=key)
        last: BaseException | None = None
        for attempt in range(cfg.create_attempts):
            if self.stopped is not None:
                raise InfraError(self.stopped.kind, self.stopped.message, "acquire")
            await self._pacer.wait()
            try:
                return (await state.client.create(request)).id
            except UnauthorizedError as exc:
                raise await self._stop(state, Kind.UNAUTHORIZED, exc) from None
            except PaymentRequiredError as exc:
                raise await self._stop(state, Kind.PAYMENT_REQUIRED, exc) from None
            except APIError as exc:
                if _http_status(exc) == 403:  # forbidden for the account (its quota): no create will pass
                    raise await self._stop(state, Kind.QUOTA_EXCEEDED, exc) from None
                if not _transient(exc):
                    raise InfraError(Kind.CREATE_FAILED, f"Prime rejected the sandbox: {exc}", "acquire") from exc
                last = exc
                await asyncio.sleep(_delay(attempt, cfg.backoff_base, cfg.backoff_cap))
        raise InfraError(Kind.CREATE_FAILED, f"no sandbox after {cfg.create_attempts} attempts: {last}", "acquire")

    async def _wait_running(self, state: _LoopState, sandbox_id: str) -> None:
        cfg = self.config
        deadline = time.monotonic() + cfg.start_timeout
        status, poll = "PENDING", 0
        while time.monotonic() < deadline:
            try:
                reply = await state.client.get_sandbox_statuses([sandbox_id])
                if reply.statuses:
                    snap = reply.statuses[0]
                    status = str(getattr(snap.status, "value", snap.status))
                    if status == "RUNNING":
                        return
                    if status in ("ERROR", "TERMINATED", "TIMEOUT"):
                        raise InfraError(Kind.SANDBOX_DIED, f"sandbox {sandbox_id} went {status} while starting "
                                                         f"({snap.error_type}: {snap.error_message})", "acquire")
            except InfraError:
                raise
            except Exception as exc:  # noqa: BLE001 - a failed poll is retried until the deadline
                log.info("status of %s: %s", sandbox_id, exc)
            await asyncio.sleep(min(max(0.0, deadline - time.monotonic()), 0.25 * 1.5 ** min(poll, 6)
                                    * random.uniform(0.75, 1.25)))
            poll += 1
        raise InfraError(Kind.SANDBOX_START_TIMEOUT, f"sandbox {sandbox_id} stayed {status} for "
                                                  f"{cfg.start_timeout:.0f} s", "acquire")

    async def _answers(self, state: _LoopState, sandbox_id: str) -> bool:
        """RUNNING is the control plane's word; a command through the gateway is the sandbox's."""
        deadline = time.monotonic() + self.config.probe_timeout
        attempt = 0
        while True:
            left = deadline - time.monotonic()
            try:
                res = await asyncio.wait_for(state.client.execute_command(
                    sandbox_id, f"mkdir -p {shlex.quote(self.config.home)} && echo ready", timeout=10), 15)
                if res.exit_code == 0 and "ready" in res.stdout:
                    return True
            except Exception as exc:  # noqa: BLE001 - unreachable, for now
                log.info("probe of %s: %s", sandbox_id, exc)
            if left <= 0:
                return False
            await asyncio.sleep(min(left, 0.2 * 2 ** min(attempt, 4)))
            attempt += 1

    async def acquire(self, spec: SandboxSpec) -> PrimeSandbox:
        if self.stopped is not None:
            raise InfraError(self.stopped.kind, self.stopped.message, "acquire")
        state = self._state()
        await state.live.acquire()
        box: PrimeSandbox | None = None
        tried: list[str] = []
        try:
            for attempt in range(1 + self.config.replacements):
                # One key per episode and attempt: a create retried at any layer finds the same sandbox.
                key = f"{spec.run_id}-{spec.episode_id}-{attempt}"
                box = PrimeSandbox(self, state, await self._create(state, spec, key), spec.episode_id)
                state.boxes[box.id] = box
                tried.append(box.id)
                await self._wait_running(state, box.id)
                if await self._answers(state, box.id):
                    return box
                log.warning("sandbox %s is RUNNING but does not answer; replacing it", box.id)
                gone, box = box, None
                gone._holds_slot = False  # the slot passes to the replacement
                await gone.release()
                if gone.id in self.undeleted:  # never two at once for one episode
                    raise InfraError(Kind.SANDBOX_UNREACHABLE, f"sandbox {gone.id} does not answer and could not "
                                                            "be deleted", "acquire")
            raise InfraError(Kind.SANDBOX_UNREACHABLE, f"sandboxes {', '.join(tried)} were RUNNING but never "
                                                    "answered", "acquire")
        except BaseException:
            if box is not None:
                await asyncio.shield(box.release())  # releases the slot too
            else:
                state.live.release()
                if self.stopped is None:
                    # Cancelled mid-create: a sandbox may exist that we never heard of; its labels find it.
                    await asyncio.shield(self._sweep_episode(state, spec))
            raise

    async def _sweep_episode(self, state: _LoopState, spec: SandboxSpec) -> None:
        try:
            await state.client.bulk_delete(labels=[f"decathlon.project={self.config.project}",
                                                   f"decathlon.episode={spec.episode_id}"])
        except Exception as exc:  # noqa: BLE001 - gc is the backstop
            log.warning("sweep of episode %s failed: %s", spec.episode_id, exc)

    async def collect(self, labels: dict[str, str], force: bool = False) -> GcResult:
        """Delete the managed sandboxes with these labels (`decathlon gc --backend prime`): listed first,
        so that those of a run still holding its lease (or another user's) stay, then deleted by id."""
        state = self._state()
        # Only this project's sandboxes, whatever else the account runs.
        wanted = [f"{MANAGED_LABEL}=true", f"decathlon.project={self.config.project}",
                  *(f"{k}={v}" for k, v in labels.items())]
        result = GcResult()
        doomed: dict[str, tuple[str | None, leases.Verdict]] = {}  # id → its run and why it may go
        page = 1
        while True:
            listing = await self._retried(lambda: state.client.list(labels=wanted, page=page, per_page=100,
                                                                    exclude_terminated=True), f"list by {wanted}")
            for box in listing.sandboxes:
                if box.status in ("TERMINATED", "DELETED"):
                    continue
                have = dict(label.split("=", 1) for label in box.labels if "=" in label)
                verdict = leases.judge(have, force, labels)
                if verdict.keep:
                    result.skip(have.get(leases.RUN_LABEL), verdict)
                else:
                    doomed[box.id] = (have.get(leases.RUN_LABEL), verdict)
            if not listing.has_next or not listing.sandboxes:
                break
            page += 1
        ids = sorted(doomed)
        for start in range(0, len(ids), 100):
            chunk = ids[start:start + 100]
            done = await self._retried(lambda: state.client.bulk_delete(sandbox_ids=chunk), "bulk delete")
            self.undeleted.difference_update(done.succeeded)
            if done.failed:
                log.warning("gc: %d sandboxes failed to delete: %s", len(done.failed), done.failed[:5])
            deleted = set(done.succeeded)
            for ident in chunk:
                run, verdict = doomed[ident]
                if ident in deleted:
                    result.took(run, verdict)
                else:
                    result.failed(run, f"{verdict.why}; the delete failed")
        return result

    async def _retried(self, call, what: str):
        cfg = self.config
        for attempt in range(cfg.release_attempts):
            try:
                return await call()
            except Exception as exc:  # noqa: BLE001
                if attempt == cfg.release_attempts - 1 or not _transient(exc):
                    raise InfraError(Kind.GC_FAILED, f"{what}: {exc}") from exc
                await asyncio.sleep(_delay(attempt, cfg.backoff_base, cfg.backoff_cap))

    async def preflight(self, source: Path) -> None:
        """Nothing to check from here: a Prime sandbox's source is its image's checkout, which the control plane
        alone knows."""

    async def close(self) -> None:
        state = self._states.pop(asyncio.get_running_loop(), None)
        if state is not None:
            await state.client.aclose()
