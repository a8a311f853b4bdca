"""The agent is an adversary (issue 13): the host trusts no byte from a sandbox.

Each attack is scripted as a hostile policy (an Oracle of tool calls, e.g. `local-python-execute` with
attack code) and run on the local backend against the mini pack, where the agent runs as the host's
own user and can replace the episode daemon's socket. An attack fails its own episode, named, and
never the host, the batch, or another episode.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import httpx
import pytest

from conftest import LAUNCH, MINI, REPO
from decathlon.core.agent_loop import StopLoop
from decathlon.backends.local import LocalBackend
from decathlon.backends.base import SandboxSpec
from decathlon.core.episode import EpisodeConfig, EpisodeResult, run_episode
from decathlon.errors import InfraError
from decathlon.core.oracles import Call, Oracle, variables
from decathlon.core.policies import OraclePolicy, ReplayPolicy, _Chat, _Scripted
from decathlon.core.task_session import SetupResult, TaskSession

pytestmark = pytest.mark.adversarial

ATTACKED = "csv-sales-summary"  # has local-python-execute
VICTIM = "project-deadlines"


class Hostile:
    """A policy that plays the given calls, one per turn, then claims done."""
    name = "hostile"

    def __init__(self, *calls: Call) -> None:
        self.calls = calls

    def start(self, task: str, setup: SetupResult) -> _Scripted:
        steps = [[c] for c in self.calls] + [[Call("local-claim_done", {})]]
        return _Scripted(Oracle(task, steps, "Done."), variables(setup.workspace, setup.launch_time))


def _cfg(task: str, out: Path | None = None) -> EpisodeConfig:
    return EpisodeConfig(task=task, source=MINI, run_id=uuid.uuid4().hex[:12], episode_id=uuid.uuid4().hex,
                         launch_time=LAUNCH, out_dir=out)


def _python(code: str, timeout: int = 60) -> Call:
    return Call("local-python-execute", {"code": code, "timeout": timeout})


def _read_file() -> Call:
    return Call("filesystem-read_file", {"path": "${workspace}/sales.csv"})


# A process started by the agent's python that takes the daemon's socket over and answers every
# request with REPLY (bytes), or with an endless stream. It detaches (new session, stdio closed) so the
# tool call returns, writes its pid where the test can stop it, and gives up after two minutes anyway.
FAKE_DAEMON = textwrap.dedent('''
    import os, socket, sys, time
    from decathlon.sandbox.sockpath import socket_path
    path = socket_path(os.path.dirname(os.getcwd()))  # python-execute runs in the workspace, in the home
    if os.fork():
        time.sleep(0.3)  # the child is in its own session before this process group can be stopped
        sys.exit(0)
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    open({pidfile!r}, "w").write(str(os.getpid()))
    srv = socket.socket(socket.AF_UNIX)
    os.unlink(path)
    srv.bind(path)
    srv.listen(8)
    srv.settimeout(1.0)
    reply, stream = {reply!r}, {stream!r}
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            continue
        try:
            conn.recv(1 << 20)
            if stream:  # 300 MB of one JSON string, 1 MB at a time
                conn.sendall(b'{{"content": "')
                for _ in range(300):
                    conn.sendall(b"x" * (1 << 20))
                conn.sendall(b'", "is_error": false}}')
            else:
                conn.sendall(reply)
        except OSError:
            pass
        conn.close()
''')


def fake_daemon(pidfile: Path, reply: bytes = b"", stream: bool = False) -> Call:
    return _python(FAKE_DAEMON.format(pidfile=str(pidfile), reply=reply, stream=stream))


@pytest.fixture
def pidfile(tmp_path):
    """Where an attacker process writes its pid; it is stopped after the test (the local backend
    isolates files, not processes: a detached process outlives its episode)."""
    # Writable by the attacker, which on the local backend as root is an unprivileged user of its own.
    folder = tmp_path / "attacker"
    folder.mkdir()
    os.chmod(folder, 0o777)
    path = folder / "attacker.pid"
    yield path
    try:
        os.kill(int(path.read_text()), signal.SIGKILL)
    except (OSError, ValueError):
        pass


def _both(hostile: Hostile, out: Path | None = None) -> tuple[EpisodeResult, EpisodeResult]:
    """The attacked episode and an honest one beside it, at the same time, on one backend."""
    async def go() -> list[EpisodeResult]:
        backend = LocalBackend()
        return await asyncio.gather(run_episode(_cfg(ATTACKED, out), backend, hostile),
                                    run_episode(_cfg(VICTIM, out), backend, OraclePolicy(MINI)))
    attacked, victim = asyncio.run(go())
    assert (victim.reward, victim.infra_error, victim.failure) == (1.0, None, None), victim
    return attacked, victim


# --- 5: replies from the sandbox are checked and bounded ---------------------------------------------

@pytest.mark.parametrize(("reply", "kind"), [
    (b"{}", "bad_reply"),
    (b'{"content": "ok", "is_error": false, "context": {"keep_last_turns": -1}}', "bad_reply"),
    (b'{"content": ["not", "a", "string"], "is_error": false}', "bad_reply"),
    (b'{"content": "ok", "is_error": "yes"}', "bad_reply"),
    (b"[" * 100_000, "bad_reply"),
    (b'{"content": "' + b"y" * 300_000 + b'", "is_error": false}', "reply_too_large"),
], ids=["empty", "negative-keep-last-turns", "content-list", "is-error-string", "deep", "over-cap"])
def test_a_fake_daemon_fails_its_own_episode_named(pidfile, reply, kind):
    attacked, _ = _both(Hostile(fake_daemon(pidfile, reply), _read_file()))
    assert attacked.infra_error is None and (attacked.reward, attacked.passed) == (0.0, False), attacked
    assert attacked.failure["kind"] == kind and attacked.failure["phase"] == "execute", attacked.failure


def test_a_sandbox_cannot_forge_an_environment_owned_kind(pidfile):
    """An error the sandbox names as the model endpoint's would mask the run: it is the episode's failure."""
    forged = b'{"error": {"kind": "model_unreachable", "message": "not my fault"}}'
    attacked, _ = _both(Hostile(fake_daemon(pidfile, forged), _read_file()))
    assert attacked.infra_error is None and attacked.failure["kind"] == "model_unreachable", attacked


def test_a_live_sandbox_cannot_forge_a_replay_miss(pidfile):
    """A live episode reads no cassette: a sandbox naming a replay miss is lying, and it is its failure."""
    forged = b'{"error": {"kind": "replay_miss", "message": "not recorded"}}'
    attacked, _ = _both(Hostile(fake_daemon(pidfile, forged), _read_file()))
    assert attacked.infra_error is None and attacked.failure["kind"] == "replay_miss", attacked


def test_replay_kinds_from_a_replaying_sandbox_stay_infra():
    from decathlon.core.blame import environment_owned
    from decathlon.errors import InfraError
    err = InfraError("replay_miss", "x", origin="sandbox")
    assert environment_owned(err, replaying=True) and not environment_owned(err, replaying=False)


def _vm_hwm_kb(pid: int) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    m = re.search(r"VmHWM:\s+(\d+) kB", status)
    return int(m.group(1)) if m else None


def test_a_300mb_reply_is_refused_while_reading_and_the_batch_goes_on(pidfile, tmp_path):
    oracles = tmp_path / "oracles"
    shutil.copytree(MINI / "oracles", oracles)
    attack = FAKE_DAEMON.format(pidfile=str(pidfile), reply=b"", stream=True)
    (oracles / f"{ATTACKED}.json").write_text(json.dumps({"task": ATTACKED, "steps": [
        {"tool": "local-python-execute", "arguments": {"code": attack, "timeout": 60}},
        {"tool": "filesystem-read_file", "arguments": {"path": "${workspace}/sales.csv"}},
        {"tool": "local-claim_done", "arguments": {}}]}))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "decathlon", "run", "--all", "--source", str(MINI), "--oracles",
                             str(oracles), "--launch-time", LAUNCH, "--json", "--out", str(out), "--concurrency", "3"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "DECATHLON_LOCAL_DIR": str(tmp_path / "boxes")})
    peak = 0
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        peak = max(peak, _vm_hwm_kb(proc.pid) or 0)
        time.sleep(0.05)
    stdout, stderr = proc.communicate(timeout=60)
    results = {r["task"]: r for r in map(json.loads, stdout.splitlines())}
    assert proc.returncode == 0, stderr[-3000:]  # a failure is scored, not an infra error
    attacked = results.pop(ATTACKED)
    assert attacked["failure"]["kind"] == "reply_too_large" and attacked["infra_error"] is None, attacked
    assert all((r["reward"], r["infra_error"], r["failure"]) == (1.0, None, None) for r in results.values()), results
    assert 0 < peak < 400_000, f"host peak RSS {peak} kB while the attacker streamed 300 MB"
    assert (out / ATTACKED / "messages.json").stat().st_size < 1 << 20
    assert json.loads((out / ATTACKED / "result.json").read_text())["failure"]["kind"] == "reply_too_large"


def test_an_episode_that_raises_does_not_cancel_the_others(monkeypatch, capsys):
    from decathlon.cli import run as cli_run
    from decathlon.cli.parser import build_parser
    real = cli_run.run_episode

    async def flaky(cfg, backend, policy):
        if cfg.task == ATTACKED:
            raise RuntimeError("an unforeseen bug")
        return await real(cfg, backend, policy)
    monkeypatch.setattr(cli_run, "run_episode", flaky)
    ns = build_parser().parse_args(["run", ATTACKED, VICTIM, "--source", str(MINI), "--launch-time", LAUNCH, "--json"])
    assert asyncio.run(cli_run.run_command(ns)) == 1
    results = {r["task"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert results[ATTACKED]["infra_error"]["kind"] == "internal_error"
    assert "RuntimeError: an unforeseen bug" in results[ATTACKED]["infra_error"]["message"]
    assert results[VICTIM]["reward"] == 1.0


# --- 11: a malformed assistant message is model_error, never a crash ----------------------------------

class Replies:
    """A policy that sends the given replies as they are, however malformed."""
    name = "raw"

    def __init__(self, *replies: object) -> None:
        self.replies = list(replies)

    def start(self, task: str, setup: SetupResult) -> "Replies":
        return self

    async def act(self, messages: list[dict], tools: list[dict]) -> object:
        if not self.replies:
            raise StopLoop("success")
        return self.replies.pop(0)


@pytest.mark.parametrize("reply", [
    "just a string",
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": "local-claim_done"}]},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"arguments": "{}"}}]},
    {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "local-claim_done"}}]},
    {"role": "assistant", "content": None, "tool_calls": {"id": "c1"}},
    {"role": "assistant", "content": {"text": "hi"}},
    {"role": "user", "content": "hi"},
], ids=["string", "no-function", "function-string", "no-name", "no-id", "calls-object", "content-object", "role"])
def test_a_malformed_assistant_message_is_model_error(reply):
    r = asyncio.run(run_episode(_cfg(VICTIM), LocalBackend(), Replies(reply)))
    assert r.infra_error["kind"] == "model_error" and r.infra_error["phase"] == "agent", r
    assert r.failure is None


def test_arguments_as_an_object_are_taken_as_their_json():
    call = {"id": "c1", "type": "function", "function": {"name": "filesystem-list_directory",
                                                         "arguments": {"path": "."}}}
    r = asyncio.run(run_episode(_cfg(VICTIM), LocalBackend(),
                                Replies({"role": "assistant", "content": None, "tool_calls": [call]})))
    assert r.infra_error is None and r.failure is None and r.tool_calls == 1, r


@pytest.mark.parametrize("message", ["a string", {"content": "no role is fine", "tool_calls": [{"id": "x"}]}, None])
def test_a_malformed_chat_completion_is_model_error(message, respx_mock):
    respx_mock.post("http://model.invalid/v1/chat/completions").respond(200, json={"choices": [{"message": message}]})
    client = httpx.AsyncClient(base_url="http://model.invalid/v1")
    with pytest.raises(InfraError) as e:
        asyncio.run(_Chat("m", client).act([{"role": "user", "content": "hi"}], []))
    assert e.value.kind == "model_error"


@pytest.mark.parametrize("reply,kind,said", [
    (httpx.ConnectError("connection refused"), "model_unreachable", "ConnectError"),
    (httpx.ReadTimeout("read timed out"), "model_unreachable", "ReadTimeout"),
    (httpx.Response(429, json={"error": {"message": "rate limited"}}), "model_error", "HTTP 429"),
    (httpx.Response(500, text="upstream exploded"), "model_error", "upstream exploded"),
    (httpx.Response(200, text="<html>not json</html>"), "model_error", "unexpected reply"),
])
def test_the_model_endpoints_failures_are_named_infra_errors(reply, kind, said, respx_mock):
    """The endpoint's faults are the environment's, never the agent's: each an infra error with its cause."""
    route = respx_mock.post("http://model.invalid/v1/chat/completions")
    if isinstance(reply, Exception):
        route.side_effect = reply
    else:
        route.return_value = reply
    client = httpx.AsyncClient(base_url="http://model.invalid/v1")
    with pytest.raises(InfraError) as e:
        asyncio.run(_Chat("m", client).act([{"role": "user", "content": "hi"}], []))
    assert e.value.kind == kind and said in e.value.message and e.value.phase == "agent"
    assert route.call_count == 1


def test_a_malformed_replayed_turn_is_named_before_the_agent_starts(tmp_path):
    path = tmp_path / "t.trajectory.json"
    path.write_text(json.dumps({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]}]}))
    setup = SetupResult(tools=[], system_prompt="", prompt="", launch_time=LAUNCH, workspace=str(tmp_path))
    with pytest.raises(InfraError) as e:
        ReplayPolicy(tmp_path, path).start(VICTIM, setup)
    assert e.value.kind == "bad_trajectory" and "turn 1" in e.value.message


# --- 13: the exec path carries any tool call ----------------------------------------------------------

def _session_on_exec_path():
    async def make():
        backend = LocalBackend(direct=False)
        box = await backend.acquire(SandboxSpec(uuid.uuid4().hex[:12], uuid.uuid4().hex, ATTACKED, MINI))
        session = TaskSession(box)
        return box, session, await session.setup(ATTACKED, LAUNCH)
    return make()


def test_exec_path_carries_big_arguments_and_any_tool_name():
    async def go() -> None:
        box, session, setup = await _session_on_exec_path()
        try:
            big = "z" * 300_000
            res = await session.execute("filesystem-write_file",
                                        json.dumps({"path": f"{setup.workspace}/big.txt", "content": big}))
            assert not res.is_error, res.content
            assert (Path(setup.workspace) / "big.txt").read_text() == big
            for name in ("filesystem-read\0file", "-", "--help", "local-\ud800"):
                res = await session.execute(name, "{}")
                assert res.is_error and "not found" in res.content, (name, res)
        finally:
            await box.release()
    asyncio.run(go())


def test_task_api_execute_reads_the_call_from_stdin(task_api):
    task_api.ok("setup", ATTACKED, "--source", str(MINI), "--launch-time", LAUNCH)
    env = {**os.environ, "TASK_API_HOME": str(task_api.home)}
    run = subprocess.run([sys.executable, "-m", "decathlon.sandbox", "execute", "-"], env=env, capture_output=True,
                         input=json.dumps({"tool": "local-claim_done", "args": {}}).encode(), timeout=60)
    assert run.returncode == 0 and json.loads(run.stdout)["is_error"] is False, run
    run = subprocess.run([sys.executable, "-m", "decathlon.sandbox", "execute", "-"], env=env, capture_output=True,
                         input=b"not json", timeout=60)
    assert run.returncode == 1 and json.loads(run.stdout)["error"]["kind"] == "bad_request", run


# --- 14: the daemon answers every request -------------------------------------------------------------

def test_the_daemon_answers_deep_and_object_arguments_and_stays_up():
    deep = "[" * 10_000 + "]" * 10_000

    async def go() -> None:
        box, session, setup = await _session_on_exec_path()
        try:
            res = await session.execute("filesystem-list_directory", deep)  # through task-api: the exec path
            assert res.is_error and "Invalid JSON input" in res.content, res
            box.direct = True
            res = await session.execute("filesystem-list_directory", '{"path": ' * 5000 + "1" + "}" * 5000)
            assert res.is_error and "Invalid JSON input" in res.content, res
            as_object = await box.daemon_request({"op": "execute", "tool": "filesystem-list_directory",
                                                  "args": {"path": setup.workspace}}, 30)
            assert as_object["is_error"] is False and "sales.csv" in as_object["content"], as_object
            raw = '{"op": "execute", "tool": "x", "args": ' + "[" * 10_000 + "]" * 10_000 + "}"
            reader, writer = await asyncio.open_unix_connection(str(Path(box.root) / "run" / "daemon.sock"))
            writer.write(raw.encode())
            writer.write_eof()
            reply = json.loads(await asyncio.wait_for(reader.read(), 30))
            writer.close()
            assert reply["error"]["kind"] == "bad_request", reply
            for bad in ({"op": "execute", "tool": {"a": 1}}, {"op": 7}, ["op"]):
                with pytest.raises(InfraError) as e:
                    await _raw_request(box, bad)
                assert e.value.kind == "bad_request"
            status = await box.daemon_request({"op": "status"}, 10)
            assert status["alive"] is True
        finally:
            await box.release()
    asyncio.run(go())


async def _raw_request(box, payload: object) -> None:
    reply = await box.daemon_request(payload, 30)
    if "error" in reply:
        raise InfraError(reply["error"]["kind"], reply["error"]["message"])


# --- 15: a catastrophic regex stays off the daemon's event loop ---------------------------------------

def test_a_catastrophic_search_pattern_is_stopped_and_the_daemon_stays_responsive(monkeypatch):
    monkeypatch.setenv("DECATHLON_REGEX_TIMEOUT", "3")  # the daemon inherits setup's environment

    async def go() -> None:
        box, session, setup = await _session_on_exec_path()
        box.direct = True
        try:
            res = await session.execute("local-python-execute", json.dumps({"code": "print('x' * 150000)"}))
            uid = re.search(r"shortuuid identifier: (\w+)", res.content).group(1)
            loop = asyncio.get_running_loop()
            start = loop.time()
            search = asyncio.ensure_future(session.execute(
                "local-search_overlong_tooloutput", json.dumps({"shortuuid": uid, "pattern": "(x+x+)+y"})))
            await asyncio.sleep(0.5)
            status = await asyncio.wait_for(box.daemon_request({"op": "status"}, 10), 2)
            assert status["alive"] is True and not search.done()  # answered while the search runs
            res = await asyncio.wait_for(search, 30)
            assert res.is_error and "did not finish within 3 s" in res.content, res
            assert loop.time() - start < 15
            res = await asyncio.wait_for(session.execute("local-search_overlong_tooloutput", json.dumps(
                {"shortuuid": uid, "pattern": "x{10}\\n"})), 10)
            assert not res.is_error and "Total matches: 1" in res.content, res.content[:500]
        finally:
            await box.release()
    asyncio.run(go())


# --- 8: SIGTERM cleans up as Ctrl-C does --------------------------------------------------------------

def _held_by_processes(folder: Path) -> list[str]:
    """Processes with a file open under `folder` (episode daemons and servers keep their logs there)."""
    held = []
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            links = [os.readlink(fd) for fd in fd_dir.iterdir()]
        except OSError:
            continue
        if any(link.startswith(str(folder)) for link in links):
            try:
                cmd = (fd_dir.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
            except OSError:
                cmd = "?"
            held.append(f"{fd_dir.parent.name}: {cmd} {[link for link in links if link.startswith(str(folder))]}")
    return held


def _zygotes_of(pid: int) -> list[str]:
    found = []
    for cmd in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmd.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"decathlon.sandbox.zygote" in argv and str(pid).encode() in argv:
            found.append(cmd.parent.name)
    return found


@pytest.mark.parametrize("when", ["setup", "agent"])
def test_sigterm_releases_every_sandbox_and_says_so(tmp_path, when):
    boxes = tmp_path / "boxes"
    proc = subprocess.Popen([sys.executable, "-m", "decathlon", "run", "--all", "--source", str(MINI), "--backend",
                             "local", "--json", "--launch-time", LAUNCH], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "DECATHLON_LOCAL_DIR": str(boxes)})
    # setup: as soon as an episode folder exists; agent: once a setup is done (session.json) and a moment on.
    pattern = "decathlon-ep-*" if when == "setup" else "decathlon-ep-*/state/session.json"
    deadline = time.monotonic() + 120
    while not list(boxes.glob(pattern)) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be terminated"
    if when == "agent":
        time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM and "terminated" in err, (proc.returncode, err[-2000:])
    assert not list(boxes.glob("decathlon-ep-*")), "an episode folder outlived the run"
    # A server the daemon started in a session of its own exits on its stdin's end, a moment after.
    deadline = time.monotonic() + 15
    while _held_by_processes(boxes) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _held_by_processes(boxes) == [], "a daemon or server outlived the run"
    assert _zygotes_of(proc.pid) == [], "the run's zygote outlived it"


# --- 9: --out is checked first, and saving artifacts cannot leak a sandbox -----------------------------

@pytest.mark.parametrize("kind", ["file", "under-a-file"])
def test_an_unusable_out_is_a_usage_error_before_anything_starts(tmp_path, kind):
    target = tmp_path / "taken"
    target.write_text("a file")
    out = target if kind == "file" else target / "sub"
    proc = subprocess.run([sys.executable, "-m", "decathlon", "run", VICTIM, "--source", str(MINI), "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "DECATHLON_LOCAL_DIR": str(tmp_path / "boxes")})
    assert proc.returncode == 2 and "--out" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "boxes").exists() or not any((tmp_path / "boxes").iterdir())


def test_artifacts_that_cannot_be_saved_never_leak_the_sandbox(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("DECATHLON_LOCAL_DIR", str(tmp_path / "boxes"))
    out = tmp_path / "taken"
    out.write_text("a file where the artifacts' folder should be")
    r = asyncio.run(run_episode(_cfg(VICTIM, out), LocalBackend(), OraclePolicy(MINI)))
    assert (r.reward, r.infra_error) == (1.0, None), r
    assert not list((tmp_path / "boxes").glob("decathlon-ep-*")), "the sandbox leaked"
    assert "could not save the artifacts" in capfd.readouterr().err


# --- attribution: after the agent acted, its sandbox's faults are its own -----------------------------

KILL_DAEMON = ("import os, signal\n"
               "os.killpg(os.getpgid(os.getppid()), signal.SIGKILL)\n")  # python-execute's parent: the daemon


def test_an_agent_that_kills_its_daemon_fails_its_episode(tmp_path):
    attacked, _ = _both(Hostile(_python(KILL_DAEMON), _read_file()), tmp_path / "out")
    assert attacked.infra_error is None and (attacked.reward, attacked.passed) == (0.0, False), attacked
    assert attacked.failure["kind"] in ("daemon_died", "no_session") and attacked.failure["phase"] == "execute"
    saved = json.loads((tmp_path / "out" / ATTACKED / "result.json").read_text())
    assert saved["failure"] == attacked.failure and saved["infra_error"] is None


class FailsAtTurn:
    """A model endpoint that goes away at the given turn: the environment's fault, even after acting."""
    name = "flaky-model"

    def __init__(self, turn: int) -> None:
        self.turn = turn

    def start(self, task: str, setup: SetupResult) -> "FailsAtTurn":
        self.inner = OraclePolicy(MINI).start(task, setup)
        self.seen = 0
        return self

    async def act(self, messages: list[dict], tools: list[dict]) -> dict:
        self.seen += 1
        if self.seen == self.turn:
            raise InfraError("model_unreachable", "connection refused", "agent")
        return await self.inner.act(messages, tools)


def test_environment_owned_faults_stay_infra_errors_after_the_agent_acted():
    r = asyncio.run(run_episode(_cfg(VICTIM), LocalBackend(), FailsAtTurn(2)))
    assert r.failure is None and r.infra_error["kind"] == "model_unreachable", r


def test_faults_before_the_agent_acted_stay_infra_errors(tmp_path):
    class Refuses:
        name = "refuses"

        def start(self, task: str, setup: SetupResult):
            raise InfraError("no_oracle", "nothing to play")
    r = asyncio.run(run_episode(_cfg(VICTIM), LocalBackend(), Refuses()))
    assert r.failure is None and r.infra_error["kind"] == "no_oracle", r
