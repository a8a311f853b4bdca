"""The agent attacks the grader and the sandbox (issue 13, findings 1-3, 5, 6, 7, 12), on every backend
that runs a real sandbox here (local; compose where Docker is).

Each attack is what a hostile policy would send: a script written with filesystem-write_file and run
with the terminal server's python3 (the tools the mini tasks give the agent). Each asserts the safe
outcome: the episode fails (or the attack is refused), nothing the agent wrote ran as root or as the
grader, and the next tool call still reaches the real daemon.
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import uuid
from pathlib import Path

import pytest

from conformance import require
from conftest import LAUNCH, MINI
from decathlon.backends.base import SandboxSpec
from decathlon.core.episode import EpisodeConfig, run_episode
from decathlon.core.oracles import Call, Oracle
from decathlon.core.policies import _Scripted
from decathlon.core.task_session import TaskSession
from hostile import Episode

pytestmark = pytest.mark.adversarial


@pytest.fixture
def compose_backend():
    """The compose backend alone: these attacks need its user boundary (on local the agent is the host's
    user, and the host's own reply checks are what protect it: tests/test_adversarial_host.py)."""
    from conformance import compose as mod
    require(mod)
    from decathlon.backends.compose import ComposeBackend
    backend = ComposeBackend.from_env()
    yield backend
    asyncio.run(backend.close())


def _run(coro):
    return asyncio.run(coro)


@pytest.mark.docker
def test_1_the_session_record_and_replay_data_are_not_the_agents(compose_backend):
    """Finding 1 (compose): the agent rewrites what evaluate trusts, to grade a fake task of its own (or to
    claim a recorded pass). It cannot write the record, and a copy where the old one was is ignored.
    (On local the agent is the host's user: it could as well edit the evaluator; nothing to prove there.)"""
    backend = compose_backend

    async def go():
        async with Episode(backend, "contacts-dedupe") as ep:
            marker = f"/tmp/decathlon-fake-evaluator-ran-{uuid.uuid4().hex[:8]}"
            out = await ep.run_script(f"""
import json, os, pathlib
ws = pathlib.Path({ep.ws!r})
home = ws.parent
fake = ws / "fake"
ev = fake / "tasks" / "finalpool" / "contacts-dedupe" / "evaluation"
ev.mkdir(parents=True)
(ev / "main.py").write_text("import os, sys\\nopen({marker!r}, 'w').write(str(os.getuid()))\\nsys.exit(0)\\n")
forged = {{"source": str(fake), "task": "contacts-dedupe", "workspace": str(ws), "launch_time": "x",
          "mode": "replay", "cassette_meta": {{"imported": True, "recorded_pass": True}}}}
for target in (home / "state" / "session.json", home / "run" / "session.json"):
    try:
        target.write_text(json.dumps(forged))
        print("WROTE", target)
    except OSError as exc:
        print("REFUSED", target, type(exc).__name__)
print("UID", os.getuid())
""")
            ev = await ep.evaluate()
            assert ev.passed is False, (ev, out)
            assert not Path(marker).exists()
            assert "REFUSED" in out and f"{ep.ws.rsplit('/', 1)[0]}/state/session.json" in out, out
            assert "UID 1500" in out, out
            assert (await ep.sh(f"cat {marker} 2>/dev/null; echo end")).strip() == "end"
    _run(go())


def test_2_a_link_to_the_ground_truth_is_not_graded(backend):
    """Finding 2: the agent cannot read the ground truth, but links to it; the grader would follow."""
    async def go():
        async with Episode(backend, "contacts-dedupe") as ep:
            truth = f"{ep.source_path}/tasks/finalpool/contacts-dedupe/groundtruth_workspace/contacts_clean.csv"
            out = await ep.run_script(f"""
import os
os.symlink({truth!r}, "contacts_clean.csv")
os.symlink("contacts_clean.csv", "chain.csv")
print("LINKED")
""")
            assert "LINKED" in out, out
            ev = await ep.evaluate()
            assert ev.passed is False, ev
            assert "a link that leaves the workspace" in ev.output_tail and "contacts_clean.csv" in ev.output_tail
    _run(go())


def test_2_a_link_inside_the_workspace_is_kept(backend):
    """The freeze removes only what leaves the workspace: the oracle's file reached through a link inside
    it still passes (links are legitimate workspace content)."""
    async def go():
        async with Episode(backend, "contacts-dedupe") as ep:
            truth = (MINI / "tasks/finalpool/contacts-dedupe/groundtruth_workspace/contacts_clean.csv").read_text()
            out = await ep.run_script(f"""
import os, pathlib
pathlib.Path("real.csv").write_text({truth!r})
os.symlink("real.csv", "contacts_clean.csv")
print("LINKED")
""")
            assert "LINKED" in out, out
            ev = await ep.evaluate()
            assert ev.passed is True, ev
    _run(go())


def test_3_git_config_programs_never_run_in_the_graders_context(backend, tmp_path):
    """Finding 3: the evaluator of git-release-notes runs git in the agent's repository; the agent's
    .git/config names programs (fsmonitor, gpg.program with log.showSignature, a pager, an alias) and
    a hook. None may run when the evaluator's git does."""
    async def go():
        async with Episode(backend, "git-release-notes") as ep:
            marker = f"/tmp/decathlon-git-pwned-{uuid.uuid4().hex[:8]}"
            out = await ep.run_script(f"""
import os, pathlib, stat
ws = pathlib.Path({ep.ws!r})
evil = ws / "evil.sh"
evil.write_text("#!/bin/sh\\nid -u >> {marker}\\nexit 1\\n")
evil.chmod(0o755)
git = ws / "project" / ".git"
with open(git / "config", "a") as f:
    f.write("[core]\\n\\tfsmonitor = %s\\n\\tpager = %s\\n[gpg]\\n\\tprogram = %s\\n[log]\\n\\tshowSignature = true\\n"
            "[include]\\n\\tpath = %s\\n" % (evil, evil, evil, ws / "more.cfg"))
(ws / "more.cfg").write_text("[diff]\\n\\texternal = %s\\n" % evil)
hook = git / "hooks" / "post-checkout"
hook.write_text("#!/bin/sh\\nid -u >> {marker}\\n")
hook.chmod(0o755)
print("PLANTED", os.getuid())
""")
            assert "PLANTED" in out, out
            ev = await ep.evaluate()
            assert ev.passed is False, ev
            assert "git config key dropped before grading" in ev.output_tail and "core.fsmonitor" in ev.output_tail
            ran = (await ep.sh(f"cat {marker} 2>/dev/null; echo end")).split()
            assert ran == ["end"], f"the agent's program ran as uid(s) {ran[:-1]}"
    _run(go())


def test_grader_runs_as_its_own_user_and_reads_the_ground_truth(backend, tmp_path):
    """Where users are separated (compose; local as root) the evaluator is the grader, never root; everywhere
    it can read the ground truth while the agent's tools cannot (where users are separated)."""
    from conftest import write_task
    import shutil
    source = tmp_path / "src"
    shutil.copytree(MINI / "configs", source / "configs")
    write_task(source, "whoami", servers=["filesystem"], local_tools=["claim_done"],
               files={"groundtruth_workspace/answer.txt": "42"}, evaluator="""
import argparse, json, os, pathlib
p = argparse.ArgumentParser()
for a in ("--res_log_file", "--agent_workspace", "--groundtruth_workspace", "--launch_time"):
    p.add_argument(a)
a = p.parse_args()
answer = pathlib.Path(a.groundtruth_workspace, "answer.txt").read_text()
pathlib.Path(os.environ["DECATHLON_METRICS_FILE"]).write_text(json.dumps({"uid": os.getuid(), "answer": int(answer)}))
""")

    async def go():
        async with Episode(backend, "whoami", source) as ep:
            read = await ep.session.execute("filesystem-read_file", json.dumps(
                {"path": f"{ep.source_path}/tasks/finalpool/whoami/groundtruth_workspace/answer.txt"}))
            ev = await ep.evaluate()
            assert ev.passed is True and ev.metrics["answer"] == 42.0, ev
            if backend.name == "compose":
                assert ev.metrics["uid"] == 1502.0, ev
                assert read.is_error or "42" not in read.content, read
            elif os.geteuid() == 0:  # the local backend as root: users of the episode's own, the source hidden
                from decathlon.backends.local_users import UID_BASE
                assert ev.metrics["uid"] >= UID_BASE, ev
                assert read.is_error or "42" not in read.content, read
            else:
                assert ev.metrics["uid"] == float(os.getuid())
    _run(go())


@pytest.mark.docker
def test_5_the_agent_cannot_replace_the_daemons_socket(compose_backend):
    """Finding 5 (sandbox side): the agent removes or renames the daemon's socket to put its own there.
    The folder is locked after setup, and the next call still reaches the daemon."""
    backend = compose_backend

    async def go():
        async with Episode(backend, "contacts-dedupe") as ep:
            out = await ep.run_script("""
import os
for f in (os.unlink, lambda p: os.rename(p, p + ".old")):
    try:
        f("/run/decathlon/channel/daemon.sock")
        print("REPLACED")
    except OSError as exc:
        print("REFUSED", type(exc).__name__)
try:
    open("/run/decathlon/channel/other.sock", "w").write("x")
    print("WROTE")
except OSError as exc:
    print("REFUSED", type(exc).__name__)
""")
            assert "REPLACED" not in out and "WROTE" not in out and out.count("REFUSED") == 3, out
            again = await ep.session.execute("filesystem-list_allowed_directories", "{}")
            assert not again.is_error and ep.ws in again.content
            assert ep.box.direct, "the direct channel must still be in use"
    _run(go())


FILL_DISK = """
n = 0
try:
    with open("big.bin", "wb") as f:
        for _ in range(200):
            f.write(b"x" * (1 << 20))
            f.flush()
            n += 1
except OSError as exc:
    print("STOPPED", n, exc.strerror)
else:
    print("WROTE", n)
import shutil
print("DISK", shutil.disk_usage("/episodes").total // (1 << 20))
"""


def _hostile(task: str, calls: list[list[Call]]):
    oracle = Oracle(task, calls, "Done.")

    class Hostile:
        name = "hostile"

        def start(self, task, setup):
            return _Scripted(oracle, {"workspace": setup.workspace})
    return Hostile()


@pytest.mark.docker
def test_12_the_workspace_is_bounded_in_size(compose_backend, tmp_path):
    """Finding 12 (compose): what the agent writes fills a quota of its sandbox, not the host's disk; a
    sandbox it filled (so full that the evaluation cannot even be handed its messages) is its failure."""
    backend = compose_backend
    backend.disk = "48m"
    policy = _hostile("contacts-dedupe", [
        [Call("filesystem-write_file", {"path": "${workspace}/fill.py", "content": FILL_DISK})],
        [Call("terminal-run_command", {"command": "python3 fill.py"})],
        [Call("local-claim_done", {})]])
    cfg = EpisodeConfig(task="contacts-dedupe", source=MINI, run_id=uuid.uuid4().hex[:12],
                        episode_id=uuid.uuid4().hex, launch_time=LAUNCH, out_dir=tmp_path / "out")
    result = asyncio.run(run_episode(cfg, backend, policy))
    assert result.infra_error is None and result.reward == 0.0 and result.passed is not True, result
    shown = json.loads((tmp_path / "out" / "contacts-dedupe" / "messages.json").read_text())[5]["content"]
    assert "STOPPED" in shown and "No space left on device" in shown, shown
    assert int(shown.split("STOPPED", 1)[1].split()[0]) < 48 and "DISK 48" in shown, shown


FORK_BOMB = """
import os, time
n = 0
for _ in range(4000):
    try:
        pid = os.fork()
    except OSError as exc:
        print("STOPPED", n, exc.strerror, flush=True)
        break
    if pid == 0:  # lets go of the tool's output pipe, then holds its pid
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        time.sleep(600)
        os._exit(0)
    n += 1
else:
    print("FORKED", n, flush=True)
"""


@pytest.mark.docker
def test_4_an_agent_that_exhausts_pids_scores_zero_not_infra(compose_backend, tmp_path):
    """Finding 4 (compose): the agent fills its sandbox's pid limit and leaves the processes running;
    whatever that breaks afterwards is the episode's own failure, never a masked infra error, and the
    batch's host is untouched."""
    policy = _hostile("contacts-dedupe", [
        [Call("filesystem-write_file", {"path": "${workspace}/bomb.py", "content": FORK_BOMB})],
        [Call("terminal-run_command", {"command": "python3 bomb.py"})],
        [Call("filesystem-read_file", {"path": "${workspace}/bomb.py"})],
        [Call("local-claim_done", {})]])
    cfg = EpisodeConfig(task="contacts-dedupe", source=MINI, run_id=uuid.uuid4().hex[:12],
                        episode_id=uuid.uuid4().hex, launch_time=LAUNCH, out_dir=tmp_path / "out")
    result = asyncio.run(run_episode(cfg, compose_backend, policy))
    assert result.infra_error is None and result.reward == 0.0 and result.passed is not True, result
    shown = json.loads((tmp_path / "out" / "contacts-dedupe" / "messages.json").read_text())
    assert any("STOPPED" in str(m.get("content")) for m in shown), "the bomb never reached the pid limit"


SECRET = "sk-planted-host-secret-0123456789"


def test_6_host_secrets_never_reach_the_agent_nor_disk(tmp_path, monkeypatch):
    """Finding 6 (local): the host's credentials are not in the agent's environment, its parent's, nor in
    any artifact the run writes."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("PRIME_API_KEY", SECRET)
    monkeypatch.setenv("DECATHLON_LOCAL_DIR", str(tmp_path / "eps"))
    from decathlon.backends import local
    probe = ("import os\n"
             "print('ENV', 'sk-planted' in repr(dict(os.environ)))\n"
             "for pid in ('self', str(os.getppid())):\n"
             "    try:\n"
             "        print('PROC', pid, b'sk-planted' in open(f'/proc/{pid}/environ', 'rb').read())\n"
             "    except OSError as exc:\n"
             "        print('PROC', pid, 'unreadable', exc)\n")
    hostile = _hostile("csv-sales-summary", [[Call("local-python-execute", {"code": probe})],
                                             [Call("local-claim_done", {})]])
    out = tmp_path / "out"
    cfg = EpisodeConfig(task="csv-sales-summary", source=MINI, run_id="secrets", episode_id=uuid.uuid4().hex,
                        launch_time=LAUNCH, out_dir=out)
    result = asyncio.run(run_episode(cfg, local.LocalBackend(), hostile))
    assert result.infra_error is None, result
    messages = json.loads((out / "csv-sales-summary" / "messages.json").read_text())
    shown = messages[3]["content"]
    assert "ENV False" in shown and "PROC self False" in shown, shown
    assert "True" not in shown, shown
    for f in out.rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f


LINGER = """
import os, subprocess, sys, time
code = "import time\\nwhile True: time.sleep(0.05)"
p = subprocess.Popen([sys.executable, "-c", code], start_new_session=True, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if os.fork() == 0:          # a double fork: the grandchild is nobody's child
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    if os.fork() == 0:
        time.sleep(600)
    os._exit(0)
time.sleep(0.3)
open("pids.txt", "w").write(str(p.pid))
print("STARTED", p.pid)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"


def _lingering(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = open(f"/proc/{entry}/cmdline", "rb").read()
            except OSError:
                continue
            if marker.encode() in cmd and _alive(int(entry)):
                found.append(int(entry))
    return found


@pytest.mark.parametrize("how", ["release", "daemon_killed"])
def test_7_processes_the_agent_starts_die_with_the_episode(tmp_path, monkeypatch, how):
    """Finding 7 (local): children in sessions of their own, and double-forked ones, do not outlive the
    episode: not after release, and not when the agent killed its own daemon first."""
    monkeypatch.setenv("DECATHLON_LOCAL_DIR", str(tmp_path / "eps"))
    from decathlon.backends.local import LocalBackend
    tag = uuid.uuid4().hex[:10]
    script = LINGER.replace("time.sleep(600)", f"time.sleep(600)  # {tag}").replace(
        "while True: time.sleep(0.05)", f"while True: time.sleep(0.05)  # {tag}")

    async def go():
        box = await LocalBackend().acquire(SandboxSpec("linger", uuid.uuid4().hex, "csv-sales-summary", MINI))
        try:
            s = TaskSession(box)
            await s.setup("csv-sales-summary", LAUNCH)
            res = await s.execute("local-python-execute", json.dumps({"code": f"exec({script!r})"}))
            assert "STARTED" in res.content, res
            assert len(_lingering(tag)) >= 1
            if how == "daemon_killed":
                pid = int((box.root / "run" / "daemon.pid").read_text())
                os.kill(pid, signal.SIGKILL)
        finally:
            await box.release()
    asyncio.run(go())
    deadline = time.monotonic() + 5
    while _lingering(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _lingering(tag) == []


def test_6_the_verifiers_taskset_says_when_its_backend_isolates_nothing():
    """Finding 6: the taskset's default backend is local (no engine needed), but never silently."""
    from decathlon.training import env
    import warnings
    with warnings.catch_warnings():
        # Building configs says nothing: the taskset's default one is built at import, whatever a run asks for.
        warnings.simplefilter("error", UnisolatedBackendWarning := env.UnisolatedBackendWarning)
        assert env.DecathlonTaskConfig(backend="compose").backend == "compose"
        env.DecathlonTaskConfig()
        env.say_isolation("compose")  # a rollout on compose: nothing to say
    env._SAID.discard("local")
    with pytest.warns(UnisolatedBackendWarning, match="compose"):
        env.say_isolation("local")  # a rollout on local: said, naming the way out
