"""The local applications a task's scripts and servers talk to (mail, Canvas, WooCommerce): started for
the episode before its preprocess, checked at every tool call and before grading, stopped at teardown.

Which ones: those behind the MCP servers the task needs (emails → mail, canvas → canvas, woocommerce →
woocommerce; the 16 real tasks that touch these applications all name the server). They run as the
service user (decathlon.sandbox.users: the agent cannot stop them, and whatever it makes them do, they are not
the grader), seeded with the accounts of the episode's own task root (its configs/users_data.json,
copied into their folder), in decathlon/emulators. On
the local backend (TASK_API_PRIVATE_NETNS=1) they get a network namespace of their own, which the
preprocess, the daemon (and its servers) and the evaluator join: two episodes both listen at :10001
and never meet.
"""
from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from decathlon.emulators import registry
from decathlon.emulators.directory import USERS_FILE
from decathlon.sandbox import confine, jail, netns, saas
from decathlon.sandbox.clock import behind
from decathlon.errors import InfraError, Kind
from decathlon.sandbox.output import tail
from decathlon.sandbox.home import Home
from decathlon.sandbox.procs import alive
from decathlon.sandbox.users import Users

# From the vendors' descriptors (decathlon.emulators.registry): the MCP servers behind each local service.
SERVICE_OF_SERVER = {s: v.name for v in registry.service_vendors() for s in v.servers}
WHAT = {**{v.name: v.title for v in registry.service_vendors()},
        "front": "the SaaS front (the episode's emulated " + ", ".join(v.title for v in registry.front_vendors())
                 + ", at their real host names)",
        "confine": "the services' own root (decathlon/sandbox/confine.py)"}
READY_TIMEOUT = 30.0
# What the services take from the environment they are started from: nothing else of the host's (its proxies, its
# DATABASE_URL, its credentials) is theirs to see, and the agent reaches them through SQL and HTTP.
SERVICE_ENV_KEEP = ("LANG", "LC_ALL", "TZ", "DECATHLON_SERVICE_START_TIMEOUT", "DECATHLON_EMULATOR_SEED")
SERVICE_PATH = "/usr/local/bin:/usr/bin:/bin"
STOP_GRACE = 3.0  # the supervisor stops its services on SIGTERM; SIGKILL for the group after that
RECORD = "services.json"


def needed(servers: list[str]) -> list[str]:
    return sorted({SERVICE_OF_SERVER[s] for s in servers if s in SERVICE_OF_SERVER})


def private_netns() -> bool:
    """The backend gives episodes no network of their own (the local backend): TASK_API_PRIVATE_NETNS=1
    for an episode with services, `all` for every episode (the local backend as root)."""
    return os.environ.get("TASK_API_PRIVATE_NETNS") in ("1", "all")


def logs_dir(home: Home) -> Path:
    return home.services_home / "logs"


def _seed_root(home: Home) -> Path:
    """A task root holding only what the services read (decathlon/emulators/directory.py), in their own folder:
    they never read the grader's copy of the task."""
    seed = home.services_home / "root"
    users = home.task_root / USERS_FILE
    (seed / USERS_FILE).parent.mkdir(parents=True)
    if users.is_file():  # absent, the services say so by name when they start
        shutil.copyfile(users, seed / USERS_FILE)
    return seed


def isolate(task: str, names: list[str], users: Users) -> bool:
    """Before anything of the episode starts: its own loopback, where the backend gives it none (for its
    services, or, where the backend asks, for every episode). True if this process is now in it."""
    wanted = os.environ.get("TASK_API_PRIVATE_NETNS")
    if not (names and wanted in ("1", "all") or wanted == "all" and users.separated):
        return False
    try:
        netns.unshare()
    except netns.NetnsError as exc:
        raise InfraError(Kind.SERVICES_NEED_NETNS, f"{task} needs {', '.join(WHAT[n] for n in names)} at the ports its "
                         f"scripts hard-code; on the local backend each episode gets them in a network namespace of its "
                         f"own, which cannot be created here ({exc}). Run decathlon as root, or use --backend compose "
                         "(each sandbox has its own network)") from None
    return True


def start(home: Home, task: str, names: list[str], users: Users, env: dict[str, str],
          eager: list[str] | None = None) -> dict | None:
    """Start the services; return the record setup keeps in the session (pids, ports, netns). `eager`: the
    emulators the SaaS front starts at once (the rest start on first use)."""
    if not names:
        return None
    for folder in (home.services_home, home.saas):
        if folder.exists():  # an earlier episode's, in a reused home
            shutil.rmtree(folder)
    logs = logs_dir(home)
    logs.mkdir(parents=True)
    seed = _seed_root(home)
    tmp = home.services_home / "tmp"
    tmp.mkdir()
    users.give(home.services_home, "service", 0o700)
    extra = {}
    writable = [str(home.services_home)]
    interpreters = [sys.executable]
    if "front" in names:
        home.saas.mkdir()
        users.give(home.saas, "service", 0o755)
        saas.write_sign_in(home.saas)
        extra = {"DECATHLON_SAAS_PYTHON": saas_python(), "DECATHLON_FRONT_EAGER": ",".join(eager or [])}
        writable.append(str(home.saas))
        interpreters.append(saas_python())
    argv0, full_env = behind(_prefix(users, writable, interpreters, env),
                             {**service_env(home), **env, **extra})
    with open(logs / "supervisor.log", "ab") as log:
        proc = subprocess.Popen([*argv0, sys.executable, "-m", "decathlon.emulators", "--root", str(seed),
                                 "--logs", str(logs), "--services", ",".join(names), "--home", str(home.root),
                                 "--watch", str(home.services_home)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, env=full_env,
                                start_new_session=True, cwd=str(home.root))
    line = _first_line(proc, READY_TIMEOUT)
    if not line.startswith("ready "):
        _kill(proc.pid)
        proc.wait()
        raise InfraError(Kind.SERVICE_START, _start_failure(task, line, logs))
    record = {"supervisor": proc.pid, "services": json.loads(line[6:])["services"],
              "netns": proc.pid if private_netns() else None, "logs": str(logs)}
    path = home.state / RECORD
    path.write_text(json.dumps(record, sort_keys=True), encoding="utf-8")
    return record


def service_env(home: Home) -> dict[str, str]:
    """The services' environment, built rather than inherited: a fixed PATH, their own HOME and TMPDIR (their state
    folder: what they write goes with the episode), and the few settings of ours they read."""
    kept = {k: os.environ[k] for k in SERVICE_ENV_KEEP if k in os.environ}
    return {**kept, "PATH": SERVICE_PATH, "HOME": str(home.services_home), "TMPDIR": str(home.services_home / "tmp"),
            "PYTHONDONTWRITEBYTECODE": "1"}


def confined(users: Users) -> bool:
    """The services get a root of their own (decathlon.sandbox.confine) where the backend runs setup as root on the
    host and hides the host from the episode (the local backend as root); in a container there is nothing of the
    host to hide."""
    return users.separated and os.geteuid() == 0 and bool(os.environ.get(jail.HIDE_ENV))


def _prefix(users: Users, writable: list[str], interpreters: list[str], env: dict[str, str]) -> list[str]:
    """How the supervisor starts: as the service user, in its own root where the backend wants that."""
    if not confined(users):
        return users.prefix("service")
    uid = users.uid("service")
    assert uid is not None  # separated
    code = [str(Path(__file__).resolve().parents[1])]  # this package's code, nothing else of its tree
    preload = [p for p in env.get("LD_PRELOAD", "").split() if os.path.isabs(p)]  # the frozen clock's library
    plan = confine.standard_plan(uid, writable, interpreters, code + preload)
    return [sys.executable, "-m", "decathlon.sandbox.confine", "--uid", str(uid),
            *(a for p in plan.readonly for a in ("--ro", p)), *(a for p in plan.writable for a in ("--rw", p)), "--"]


def saas_python() -> str:
    """The interpreter of the SaaS emulators: their own virtualenv (ci/servers/saas.txt), whose pins (the
    checkout's protobuf < 7 among them) cannot share the sandbox's."""
    from decathlon.sandbox.servers_config import default_servers_dir
    return os.environ.get("DECATHLON_SAAS_PYTHON") or str(default_servers_dir() / "saas" / "bin" / "python")


def _first_line(proc: subprocess.Popen, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    buf = b""
    assert proc.stdout is not None  # started with stdout=PIPE
    fd = proc.stdout.fileno()
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            return ""
        readable, _, _ = select.select([fd], [], [], left)
        if readable:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            buf += chunk
    return buf.split(b"\n", 1)[0].decode("utf-8", "replace")


def _start_failure(task: str, line: str, logs: Path) -> str:
    if line.startswith("failed "):
        try:
            info = json.loads(line[7:])
        except ValueError:
            info = {"service": "?", "reason": line[7:]}
        name = info.get("service", "?")
        return (f"{WHAT.get(name, name)} did not start for {task}: {info.get('reason')}; "
                f"log tail: {tail(info.get('log_tail') or '', 800)}")
    sup = (logs / "supervisor.log").read_text(errors="replace") if (logs / "supervisor.log").exists() else ""
    return (f"the services of {task} did not report ready within {READY_TIMEOUT:.0f} s; "
            f"supervisor log tail: {tail(sup, 800)}")


def http_live(record: dict | None) -> dict[str, str]:
    """For a script whose HTTP is recorded or replayed (decathlon/sandbox/http): its requests to the episode's own
    services go to them for real, as they run in every mode."""
    ports = sorted({p for info in (record or {}).get("services", {}).values() for p in info["ports"].values()})
    if not ports:
        return {}
    live = [f"{h}:{p}" for p in ports for h in ("localhost", "127.0.0.1")]
    if "front" in (record or {}).get("services", {}):
        live += saas.live_hosts()
    return {"DECATHLON_HTTP_LIVE": ",".join(live)}


def saas_env(home: Home, record: dict | None) -> dict[str, str]:
    """The SaaS front's variables for a process of the episode (decathlon/sandbox/saas.py); none without it."""
    return saas.env(record, home.saas_bundle)


def check(record: dict | None, when: str) -> None:
    """Every service still running; else the episode is infra's, naming the service that went."""
    if not record:
        return
    died = _died(record)
    if died:
        raise InfraError(Kind.SERVICE_DIED, f"{died} {when}; the episode's results cannot stand")


def _died(record: dict) -> str | None:
    for name, info in sorted(record.get("services", {}).items()):
        if not alive(int(info["pid"])):
            detail = ""
            try:
                d = json.loads((Path(record["logs"]) / "died.json").read_text()).get(name, {})
                detail = f" ({d.get('how', 'exited')}; log tail: {tail(d.get('log_tail', ''), 600)})"
            except (OSError, ValueError, KeyError):
                pass  # the logs are the grader's; the daemon (the agent's user) cannot read them
            return f"{WHAT.get(name, name)}, pid {info['pid']}, exited{detail}"
    if not alive(int(record["supervisor"])):
        return f"the services' supervisor (pid {record['supervisor']}) exited"
    return None


def join(record: dict | None) -> None:
    """Into the services' network namespace (evaluate, the daemon), where they have one of their own."""
    if record and record.get("netns"):
        try:
            netns.enter(int(record["netns"]))
        except netns.NetnsError as exc:
            raise InfraError(Kind.SERVICE_DIED, f"the services' network namespace is gone ({exc}): their supervisor "
                             f"(pid {record['netns']}) exited") from None


def stop(home: Home) -> None:
    try:
        pid = int(json.loads((home.state / RECORD).read_text())["supervisor"])
    except (OSError, ValueError, KeyError, TypeError):
        return  # none were started
    _kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    _kill(pid)


def _kill(pid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
