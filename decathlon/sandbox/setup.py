"""`task-api setup`: Toolathlon's order — workspace, preprocess, per-server folders, servers, prompts."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from datetime import datetime, timezone
from dataclasses import replace
from pathlib import Path
from typing import Any

from decathlon.emulators import registry
from decathlon.sandbox import grader_git, modes, real_keys, runner_shims, saas, saas_credentials, services, task_copy
from decathlon.sandbox import seeds as seed_packs, vendor_seeds
from decathlon.sandbox.catalogue import runnable_servers, split_for_rerun
from decathlon.sandbox.clock import AgentClock, behind, frozen_env
from decathlon.contract.replies import OmittedServer, ReplayedServer, SetupReply, dump
from decathlon.errors import InfraError, Kind
from decathlon.sandbox.output import tail
from decathlon.sandbox.home import Home
from decathlon.sandbox.key_broker import KeyBroker
from decathlon.sandbox.procs import alive
from decathlon.sandbox.prompts import fill_system_prompt
from decathlon.sandbox.servers_config import START_TIMEOUT, Templates, default_servers_dir, load_raw_configs, resolve_servers
from decathlon.sandbox.subproc import missing_module_hint, newer_python_hint, run_module
from decathlon.sandbox.taskdef import TaskDef, load_task
from decathlon.sandbox.users import Users

PREPROCESS_TIMEOUT = float(os.environ.get("DECATHLON_PREPROCESS_TIMEOUT", "600"))
# Folders Toolathlon prepares in the workspace for servers that keep state there.
SERVER_FOLDERS = {"arxiv_local": "arxiv_local_storage", "memory": "memory"}
# How long setup waits for a zygote that is still importing before it starts its daemon itself (it imports
# in about a second; a loaded machine may take several).
ZYGOTE_WAIT = 20.0


def resolve_source(raw: str | None) -> Path:
    value = raw or os.environ.get("TOOLATHLON_ROOT")
    if not value:
        raise InfraError(Kind.BAD_SOURCE, "no task source: pass --source DIR or set TOOLATHLON_ROOT "
                         "(a Toolathlon root, holding configs/ and tasks/)")
    path = Path(value).absolute()
    if not path.is_dir():
        raise InfraError(Kind.BAD_SOURCE, f"task source {path} does not exist")
    return path


def _fresh_workspace(home: Home, task: TaskDef) -> None:
    if home.workspace.exists():
        shutil.rmtree(home.workspace)
    if task.initial_workspace is not None:
        shutil.copytree(task.initial_workspace, home.workspace, symlinks=True)
    else:
        home.workspace.mkdir(parents=True)


def _prepare_home(home: Home, users: Users) -> None:
    """The episode's folders. Where users are separated: run/ is the daemon's (the agent's user), state/
    root's alone, grader/ the grader's alone; the home itself root's, so the agent can add nothing beside."""
    home.run.mkdir(parents=True, exist_ok=True)
    home.state.mkdir(exist_ok=True)
    home.grader_home.mkdir(exist_ok=True)
    if home.server_files.exists():  # an earlier episode's, in a reused home
        shutil.rmtree(home.server_files)
    home.server_files.mkdir()
    os.chmod(home.server_files, 0o755)
    if users.separated and users.agent is not None:
        # Only this episode's agent (its gid is its uid) reads its servers' copies; another episode's cannot.
        os.chown(home.server_files, 0, users.agent)
        os.chmod(home.server_files, 0o750)
    if users.separated:
        os.chmod(home.root, 0o755)
        os.chown(home.root, 0, 0)
        users.give(home.run, "agent", 0o700)
        os.chmod(home.state, 0o700)
        users.give(home.grader_home, "grader", 0o700)
        home.agent_home.mkdir(exist_ok=True)
        users.give(home.agent_home, "agent", 0o700)


def grader_env(home: Home, extra: dict[str, str] | None = None) -> dict[str, str]:
    """preprocess and the evaluator: their own HOME (not the agent's ~/.gitconfig), and no bytecode
    written beside the checkout their episode root links to. Not PYTHONPYCACHEPREFIX: a fresh prefix
    per episode also hides the task environment's compiled site-packages, and recompiling pandas and
    the openai-agents stack cost 2.5 s per process (preflight, preprocess, evaluator). git run by them
    runs no program any config names (decathlon.sandbox.grader_git); the host's GIT_* never reach them (grader_base)."""
    env = {**(extra or {}), "HOME": str(home.grader_home), "PYTHONDONTWRITEBYTECODE": "1", **grader_git.forced()}
    shims = home.grader_home / "bin"
    if shims.is_dir():  # uvx, npx, uv as the scripts call them (decathlon/sandbox/runner_shims.py)
        env["PATH"] = f"{shims}{os.pathsep}{os.environ.get('PATH', os.defpath)}"
    return env


# Imports the evaluator as a module (its `if __name__ == "__main__"` does not run): the only failures
# that count are the ones that mean it cannot run at all. Run by the task's interpreter, so no
# decathlon.sandbox import here.
_PREFLIGHT = ("import importlib, sys\n"
              "try:\n    importlib.import_module(sys.argv[1])\n"
              "except (ImportError, SyntaxError) as exc:\n    print(f'{type(exc).__name__}: {exc}')\n"
              "    print(getattr(exc, 'text', None) or ''); sys.exit(3)\n"
              "except BaseException:\n    pass\n")
PREFLIGHT_TIMEOUT = 120.0


def _start_preflight(home: Home, task: TaskDef, users: Users, clock: dict[str, str]) -> subprocess.Popen | None:
    """Check, before the agent acts, that the evaluator can be imported: afterwards a crash of the grader
    is the episode's (the agent may have provoked or forged it), so this is where a broken grader is
    found and reported as infra. Runs while the servers start."""
    if not task.evaluator.is_file():
        return None  # an imported recorded run: its recorded verdict stands (evaluate says so)
    from decathlon.sandbox.subproc import task_python
    argv0, env = behind(users.prefix("grader"), {**grader_git.scrub(os.environ), **grader_env(home, clock)})
    return subprocess.Popen([*argv0, task_python(), "-c", _PREFLIGHT, task.module("evaluation")],
                            cwd=str(task.source), env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)


def _finish_preflight(proc: subprocess.Popen | None, task: TaskDef) -> None:
    if proc is None:
        return
    try:
        out, _ = proc.communicate(timeout=PREFLIGHT_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise InfraError(Kind.GRADER_PREFLIGHT, f"importing the evaluator of {task.name} took over "
                         f"{PREFLIGHT_TIMEOUT:.0f} s") from None
    if proc.returncode != 0:
        text = out.decode("utf-8", "replace")
        hint = newer_python_hint(text)
        if hint:
            raise InfraError(Kind.TASK_PYTHON_TOO_OLD, f"the evaluator of {task.name} cannot run: {hint}; "
                             f"{tail(text.strip(), 500)}")
        raise InfraError(Kind.GRADER_PREFLIGHT, f"the evaluator of {task.name} cannot be imported (exit "
                         f"{proc.returncode}): {tail(text.strip(), 1500)}; " + (missing_module_hint(text) or
                         "install what it needs into the task environment (DECATHLON_TASK_PYTHON) and run again"))


_NO_SUCH_FILE = re.compile(r"No such file or directory: '([^']+)'")


def missing_task_data(output: str, home: Home, task: TaskDef, original: TaskDef) -> str | None:
    """A file of the task's own that the source lacks (a snapshot without its large files): the path a
    failing script could not open, mapped back to the checkout, where it is missing too."""
    for raw in _NO_SUCH_FILE.findall(output):
        path = Path(raw)
        for copy, origin in ((home.workspace, original.dir / "initial_workspace"), (task.dir, original.dir)):
            try:
                rel = path.relative_to(copy)
            except ValueError:
                continue
            if not (origin / rel).exists():
                return str((origin / rel).relative_to(original.source))
    return None


def _preprocess(home: Home, task: TaskDef, launch: str, env: dict[str, str], users: Users,
                original: TaskDef) -> None:
    if not task.has_preprocess:
        return
    run = run_module(task.module("preprocess"), ["--agent_workspace", str(home.workspace), "--launch_time", launch],
                     cwd=task.source, timeout=PREPROCESS_TIMEOUT, env=grader_env(home, env),
                     prefix=users.prefix("grader"))
    # Some preprocesses leave a server behind for the agent (meeting-assign: `nohup … http.server 30137 &`):
    # it lives until the episode ends, and then goes (teardown, or the local backend's release).
    home.preprocess_pgid.write_text(str(run.pgid), encoding="utf-8")
    if run.exit_code is None:
        raise InfraError(Kind.PREPROCESS_TIMEOUT, f"preprocess of {task.name} ran over {PREPROCESS_TIMEOUT:.0f} s; "
                         f"output tail: {tail(run.output)}")
    if run.exit_code != 0:
        hint = newer_python_hint(run.output)
        if hint:
            raise InfraError(Kind.TASK_PYTHON_TOO_OLD, f"preprocess of {task.name} cannot run: {hint}; "
                             f"{tail(run.output, 500)}")
        lacking = missing_task_data(run.output, home, task, original)
        if lacking:
            raise InfraError(Kind.TASK_DATA_MISSING, f"preprocess of {task.name} failed: the source lacks the task's "
                             f"own {lacking} (a checkout without its large files?); not something an episode can "
                             f"fix. Output tail: {tail(run.output, 500)}")
        missing = missing_module_hint(run.output)
        raise InfraError(Kind.PREPROCESS_FAILED, f"preprocess of {task.name} exited {run.exit_code}; "
                         f"{missing + '; ' if missing else ''}output tail: {tail(run.output)}")


def _daemon_alive(home: Home) -> bool:
    pid = home.daemon_pid()
    return pid is not None and alive(pid)


class DaemonHandle:
    """The episode daemon being started: spawned here, or forked by a zygote (TASK_API_ZYGOTE)."""

    def __init__(self, pid: int, spec_stream, proc: subprocess.Popen | None = None) -> None:
        self.pid = pid
        self.spec_stream = spec_stream
        self.proc = proc

    def send_spec(self, spec: dict) -> None:
        try:
            self.spec_stream.write(json.dumps(spec).encode())
            self.spec_stream.close()
        except (BrokenPipeError, OSError):
            pass  # it died; reported with its log by whoever waits for it

    def exited(self) -> bool:
        return self.proc.poll() is not None if self.proc is not None else not alive(self.pid)

    def kill_group(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.proc is not None:
            self.proc.wait()


def _zygote_connection(path: str) -> socket.socket | None:
    """A connection to the zygote at `path`, or None (start the daemon the ordinary way). A zygote still
    importing (TASK_API_ZYGOTE_PID names it: the local backend starts it on first use) is waited for, while it
    lives and for at most ZYGOTE_WAIT: a daemon spawned meanwhile would import the same modules again (~0.8 s of
    CPU, per episode that starts before the zygote is ready), on a host whose episodes already share its cores."""
    try:
        starting = int(os.environ.get("TASK_API_ZYGOTE_PID", ""))
    except ValueError:
        starting = 0
    deadline = time.monotonic() + ZYGOTE_WAIT
    while True:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(30)
        try:
            conn.connect(path)
            return conn
        except (FileNotFoundError, ConnectionRefusedError):  # not bound yet, or bound but not listening yet
            conn.close()
        except OSError:
            conn.close()
            return None
        if starting <= 1 or not alive(starting) or time.monotonic() > deadline:
            return None
        time.sleep(0.01)


def _spawn_daemon(home: Home) -> DaemonHandle:
    """Start the daemon first: it loads the MCP SDK (most of its start-up) while setup prepares the
    workspace and runs preprocess, then waits for its spec."""
    home.ready.unlink(missing_ok=True)
    zygote = os.environ.get("TASK_API_ZYGOTE")
    conn = _zygote_connection(zygote) if zygote else None
    if conn is not None:
        try:
            conn.sendall(json.dumps({"home": str(home.root), "env": dict(os.environ)}).encode() + b"\n")
            pid = json.loads(conn.makefile("rb").readline())["pid"]
            return DaemonHandle(pid, conn.makefile("wb"))
        except (OSError, ValueError, KeyError):
            conn.close()  # a zygote that is gone or confused: start the daemon the ordinary way
    with open(home.daemon_log, "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "decathlon.sandbox.daemon", "--home", str(home.root)],
                                stdin=subprocess.PIPE, stdout=log, stderr=log, start_new_session=True,
                                cwd=str(home.root))
    return DaemonHandle(proc.pid, proc.stdin, proc)


def _wait_ready(home: Home, daemon: DaemonHandle, spec: dict) -> dict:
    daemon.send_spec(spec)
    deadline = time.monotonic() + START_TIMEOUT + 30
    while time.monotonic() < deadline:
        if home.ready.exists():
            ready = json.loads(home.ready.read_text(encoding="utf-8"))
            if not ready.get("ok"):
                err = ready.get("error", {})
                raise InfraError(err.get("kind", "server_start"), err.get("message", "the daemon failed"))
            return ready
        if daemon.exited():
            raise InfraError(Kind.DAEMON_CRASH, "the episode daemon exited before it was ready; "
                             f"log tail: {tail(home.daemon_log.read_text(errors='replace'))}")
        time.sleep(0.005)
    raise InfraError(Kind.DAEMON_TIMEOUT, "the episode daemon was not ready in time; see run/daemon.log")


def _step(home: Home, name: str) -> None:
    """Say which step setup is at (decathlon.core.task_session polls it for the host's progress display)."""
    try:
        home.phase.write_text(name, encoding="utf-8")
    except OSError:
        pass  # progress is a courtesy: never a reason for setup to fail


def _public(record: dict | None) -> dict:
    """What the host hears of the episode's services: which, at which ports."""
    return {n: {"ports": i["ports"]} for n, i in sorted((record or {}).get("services", {}).items())}


def setup(home: Home, task_id: str, source: str | None, launch_time: str | None, mode: str,
          cassette: str | None = None, omit_unavailable: bool = False, frozen_clock: bool = False,
          saas_mode: str = "emulated", seeds: str | None = None) -> dict[str, Any]:
    began = time.monotonic()
    timings: dict[str, float] = {}
    src = resolve_source(source)
    task = load_task(src, task_id)
    if _daemon_alive(home):
        raise InfraError(Kind.ALREADY_SET_UP, f"an episode is already set up in {home.root}; run `task-api teardown` first")
    servers, omitted, replayed = task.servers, list[dict[str, str]](), list[dict[str, str]]()
    # The episode's root copies configs/ as it is: the definitions read here are the ones it starts.
    raw_configs = load_raw_configs(src) if mode != "replay" else {}
    if mode == "rerun":
        servers, replayed = split_for_rerun(raw_configs, task.servers, default_servers_dir())
    elif mode != "replay":
        # A server that cannot run live is named now, not after the preprocess and a start timeout.
        servers, omitted = runnable_servers(raw_configs, task.servers, default_servers_dir(), omit_unavailable)
    users = Users.from_env()
    _prepare_home(home, users)
    _step(home, "task copy")
    runner_shims.install(home.grader_home / "bin")
    t = time.monotonic()
    original, (task, config_modules) = task, task_copy.make(task, home.task_root)
    users.give(home.task_root, "grader")
    timings["task_copy"] = time.monotonic() - t
    tape = modes.open_cassette(home, original, mode, cassette)
    modes.hand_http(home, mode, users)
    launch = modes.launch_time(tape, launch_time)
    clock = frozen_env(launch) if frozen_clock else {}
    # The agent's own processes (python-execute) start later, in the daemon: they read the same clock, moved on by
    # the time the episode has run, as a recorded run's code read the recording's clock.
    agent_clock = AgentClock.start(clock)
    # An imported recorded run (no scripts of its own) talks to no service: its tools are replayed.
    scripted = task.has_preprocess or task.evaluator.is_file()
    wanted = services.needed(task.servers) if scripted else []
    eager = saas.emulators_for(task, saas_mode) if scripted else None
    withheld: frozenset[Path] = frozenset()
    if eager is not None:
        wanted.append("front")
        saas_credentials.write(home.task_root / "configs")
        users.give(home.task_root / "configs", "grader")
    elif saas_mode == "real" and mode != "replay" and saas.emulators_for(task) is not None:
        configs = home.task_root / "configs"
        withheld = real_keys.withheld(configs, real_keys.gather(configs))
        users.give(configs, "grader")
    # Relative to the episode's home, as the host puts a run's seed packs there (decathlon/core/seeds.py).
    seeds_dir = (Path(seeds) if Path(seeds).is_absolute() else home.root / seeds).resolve() if seeds else None
    if scripted and mode != "replay" and saas_mode == "emulated":
        # A template the preprocess copies from the authors' account is in no checkout: without its pack the
        # preprocess would fail part-way against an emulator that never held it. Said now, naming it.
        vendor_seeds.require(task.name, seeds_dir, vendor_seeds.needs(src, task.name))
    seeded = seed_packs.emulators(seeds_dir)
    if seeded:
        seed_packs.check_running(seeded, wanted, eager)
        # A seeded vendor behind the front starts with it, so that its seed is in before the preprocess.
        eager = sorted({*(eager or []), *(n for n in seeded if registry.get(n).reach == "front")}) \
            if eager is not None else None
    own_netns = services.isolate(task.name, wanted, users)
    daemon = _spawn_daemon(home)
    home.daemon_record.write_text(str(daemon.pid), encoding="ascii")
    preflight = None
    service_record = None
    broker: KeyBroker | None = None
    try:
        t = time.monotonic()
        if wanted:
            _step(home, "services")
        service_record = services.start(home, task.name, wanted, users, clock, eager)
        saas_env = services.saas_env(home, service_record) if saas_mode == "emulated" else saas.passthrough_env(
            dict(os.environ))
        if service_record:
            timings["services_start"] = time.monotonic() - t
        if seeded:
            t = time.monotonic()
            _step(home, "seeds")
            assert seeds_dir is not None
            seed_packs.load(home, seeds_dir, seeded, users)
            timings["seeds"] = time.monotonic() - t
        if saas_env:
            # A server the task's own scripts start (MCPServerManager through `uvx …`) gets the SDK's bare
            # environment: the front's variables go into the runners themselves, or its client meets no network.
            runner_shims.install(home.grader_home / "bin", saas_env)

        t = time.monotonic()
        _fresh_workspace(home, task)
        users.give(home.workspace, "grader")
        timings["workspace"] = time.monotonic() - t

        t = time.monotonic()
        _step(home, "preprocess")
        _preprocess(home, task, launch, {**modes.http_env(home, mode, "preprocess"), **services.http_live(service_record),
                                         **saas_env, **clock}, users, original)
        modes.check_http_misses(home, mode, "preprocess")
        timings["preprocess"] = time.monotonic() - t

        for server, folder in SERVER_FOLDERS.items():
            if server in task.servers:  # as Toolathlon does for a needed server, live or not
                (home.workspace / folder).mkdir(exist_ok=True)
        users.give(home.workspace, "agent", 0o700)
        preflight = _start_preflight(home, task, users, clock)

        t = time.monotonic()
        _step(home, "servers")
        skipped = {o["name"] for o in omitted}
        specs = modes.server_specs(home, mode, clock, resolve_servers(
            raw_configs, servers, Templates(task.source, home.workspace, task.dir, private=home.task_root,
                                           shared=home.server_files, withheld=withheld),
            default_cwd=home.workspace)
            if mode != "replay" else modes.replayed_specs(servers))
        if saas_env:  # the MCP SDK starts a server with a bare environment: the front's variables go in its spec
            specs = [replace(s, env={**s.env, **saas_env}) if s.command != "<replay>" else s for s in specs]
        if saas_mode == "real" and mode != "replay":
            # The user's keys reach our servers through the broker alone; it closes once they have started (no
            # process of the agent runs before that). Where users are not separated, the agent is this very uid.
            broker = KeyBroker(users.agent if users.agent is not None else os.geteuid(), home.root)
            specs = real_keys.broker_specs(specs, broker)
            if not broker.unclaimed():  # no server of this task takes a key
                broker.close()
                broker = None
        specs += modes.replayed_specs([r["name"] for r in replayed])
        ready = _wait_ready(home, daemon, {"workspace": str(home.workspace), "servers": [s.to_json() for s in specs],
                                           "server_order": [s for s in task.servers if s not in skipped],
                                           "local_tools": task.local_tools, "services": service_record,
                                           "mode": mode, "cassette": str(home.cassette_in) if tape else None,
                                           "agent_clock": agent_clock.to_json() if agent_clock else None,
                                           # Where the daemon starts as root (the local backend's): the
                                           # namespace to join, what to hide, the agent's HOME.
                                           "netns": os.getpid() if own_netns else None,
                                           "hide": [str(src)], "agent_home": str(home.agent_home)})
        if broker is not None:
            broker.close()
        timings["servers"] = time.monotonic() - t
        t = time.monotonic()
        _finish_preflight(preflight, task)
        timings["preflight_wait"] = time.monotonic() - t
    except BaseException:
        # No half-set-up episode: the daemon (and any server it started) goes with the failure.
        if broker is not None:
            broker.close()
        daemon.kill_group()
        services.stop(home)
        if preflight is not None and preflight.poll() is None:
            os.killpg(preflight.pid, signal.SIGKILL)
            preflight.wait()
        raise

    system_prompt = fill_system_prompt(task.read_doc("agent_system_prompt.md"), home.workspace, launch)
    prompt = task.read_doc("task.md")
    timings["total"] = time.monotonic() - began
    reply = SetupReply(
        task=task.name, mode=mode, tools=ready["tools"], system_prompt=system_prompt, prompt=prompt,
        launch_time=launch, workspace=str(home.workspace), servers=ready["servers"],
        omitted_servers=[OmittedServer(**o) for o in omitted], replayed_servers=[ReplayedServer(**r) for r in replayed],
        services=_public(service_record), timings={k: round(v, 4) for k, v in timings.items()},
    )
    result = dump(reply)
    session = {**result, "services": service_record, "frozen_clock": bool(clock), "source": str(src),
               "task_root": str(task.source), "config_modules": config_modules,
               "config": task.config, "cassette": str(home.cassette_in) if tape else None,
               "cassette_meta": tape["meta"] if tape else None,
               "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    tmp = home.session.with_suffix(".tmp")
    tmp.write_text(json.dumps(session, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, home.session)
    return result
