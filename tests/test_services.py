"""The tasks' local services (mail, Canvas, WooCommerce) per episode, through our own three tasks in the
checkout's conventions (fixtures/toolathlon-services): real preprocess and evaluator scripts talking
to the services at the fixed ports, the MCP servers launched as upstream launches them."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import LAUNCH, REPO, TaskApi, need_emails_mcp

PACK = REPO / "fixtures" / "toolathlon-services"
TASKS = ["canvas-quiz-reminder", "mail-budget-forward", "woo-restock"]

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the local backend gives an episode's services a network "
                                "namespace of its own, which needs root (CI runs as root)")


def decathlon(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """A run's every step is bounded by decathlon itself (setup, preprocess and the evaluator at 600 s each at most):
    the bound here only keeps a wedged run from holding the suite, and says where it was when it is hit. On CI the
    image build runs beside the tests, and three concurrent episodes there have taken minutes, not seconds."""
    try:
        return subprocess.run([sys.executable, "-m", "decathlon", *args], cwd=REPO, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        pytest.fail(f"decathlon {' '.join(args)} ran over {timeout:.0f} s; its progress so far:\n{err[-6000:]}")


def rows(proc: subprocess.CompletedProcess) -> list[dict]:
    assert "Traceback" not in proc.stderr, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"


def test_null_policy_runs_the_real_scripts_against_the_services_and_scores_zero():
    proc = decathlon("run", *TASKS, "--source", str(PACK), "--policy", "null", "--json", "--launch-time", LAUNCH)
    by_task = {r["task"]: r for r in rows(proc)}
    assert sorted(by_task) == TASKS, proc.stderr
    for task, r in by_task.items():
        assert r["infra_error"] is None, (task, r)
        assert r["pass"] is False, (task, r)


@pytest.mark.parametrize("task", ["canvas-quiz-reminder", "woo-restock", "mail-budget-forward"])
def test_the_oracle_passes_through_the_mcp_servers(task):
    if task == "mail-budget-forward":
        need_emails_mcp()
    proc = decathlon("run", task, "--source", str(PACK), "--policy", "oracle", "--json", "--launch-time", LAUNCH)
    (r,) = rows(proc)
    assert r["infra_error"] is None and r["pass"] is True, r


@pytest.mark.parametrize("task", ["canvas-quiz-reminder", "woo-restock"])
def test_concurrent_episodes_of_one_task_each_have_their_own_service_state(task):
    # Each preprocess deletes what it finds of the task's objects and creates them again, and each
    # evaluator wants exactly its own: episodes sharing one Canvas or one store break each other.
    proc = decathlon("run", task, task, task, "--source", str(PACK), "--policy", "oracle", "--concurrency", "3",
                     "--json", "--launch-time", LAUNCH)
    got = rows(proc)
    assert len(got) == 3
    assert all(r["pass"] is True and r["infra_error"] is None for r in got), got


@pytest.fixture
def private_netns(monkeypatch):
    monkeypatch.setenv("TASK_API_PRIVATE_NETNS", "1")


def _record(api: TaskApi) -> dict:
    return json.loads((api.home / "state" / "services.json").read_text())


def test_a_service_that_dies_mid_episode_is_named(task_api, private_netns):
    out = task_api.ok("setup", "canvas-quiz-reminder", "--source", str(PACK), "--launch-time", LAUNCH)
    assert out["services"] == {"canvas": {"ports": {"http": 10001, "https": 20001}}}
    assert out["timings"]["services_start"] < 5
    record = _record(task_api)
    os.kill(record["services"]["canvas"]["pid"], signal.SIGKILL)
    err = task_api.error("execute", "canvas-canvas_list_courses", "{}")
    assert err["kind"] == "service_died" and "Canvas LMS emulator" in err["message"], err
    messages = task_api.home.parent / "messages.json"
    messages.write_text(json.dumps([{"role": "user", "content": "x"}]))
    err = task_api.error("evaluate", "--messages", str(messages), "--status", "success")
    assert err["kind"] == "service_died" and "Canvas LMS emulator" in err["message"] and "SIGKILL" in err["message"], err


def test_teardown_stops_the_services_and_the_ports_were_the_episodes_own(task_api, private_netns):
    task_api.ok("setup", "woo-restock", "--source", str(PACK), "--launch-time", LAUNCH)
    record = _record(task_api)
    pids = [record["supervisor"], *(s["pid"] for s in record["services"].values())]
    assert all(alive(p) for p in pids)
    # The services listen in the episode's own network namespace, not the host's (nor the test's).
    theirs = {os.stat(f"/proc/{p}/ns/net").st_ino for p in pids}
    assert len(theirs) == 1 and os.stat("/proc/self/ns/net").st_ino not in theirs
    task_api.ok("teardown")
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)


def test_a_source_without_the_accounts_file_fails_setup_naming_the_service_and_the_file(tmp_path, task_api,
                                                                                         private_netns):
    src = tmp_path / "pack"
    shutil.copytree(PACK, src)
    (src / "configs" / "users_data.json").unlink()
    err = task_api.error("setup", "woo-restock", "--source", str(src), "--launch-time", LAUNCH)
    assert err["kind"] == "service_start", err
    assert "WooCommerce emulator" in err["message"] and "users_data.json" in err["message"], err
    assert not (task_api.home / "state" / "services.json").exists()


def test_supervisor_refuses_an_unknown_service(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "decathlon.emulators", "--root", str(PACK), "--logs", str(tmp_path),
                           "--services", "mail,ftp"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "unknown service(s) ftp" in proc.stderr, proc.stderr


def test_a_supervisor_killed_outright_leaves_no_service_behind(tmp_path):
    """Its services are forked by its forkserver, which ends with it and takes them along (a teardown that never
    came, a SIGKILL from outside: nothing listens on afterwards)."""
    from decathlon.sandbox import netns
    # In a network namespace of its own, as an episode's: the services' fixed ports never meet the host's.
    proc = subprocess.Popen([sys.executable, "-m", "decathlon.emulators", "--root", str(PACK), "--logs",
                             str(tmp_path / "logs"), "--services", "canvas,mail"], stdout=subprocess.PIPE, text=True,
                            preexec_fn=netns.unshare)
    try:
        line = proc.stdout.readline()  # bounded: the supervisor says ready or failed within its start timeout
        assert line.startswith("ready "), line
        services = json.loads(line[6:])["services"]
        pids = [s["pid"] for s in services.values()]
        assert all(alive(p) for p in pids)
        parents = {int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1]) for p in pids}
        assert len(parents) == 1 and proc.pid not in parents  # one forkserver's children, not the supervisor's
        assert (tmp_path / "control").stat().st_mode & 0o777 == 0o700
    finally:
        proc.kill()
        proc.wait(10)
    deadline = time.monotonic() + 10
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)


# ------------------------------------------------------------- the real checkout (TOOLATHLON_ROOT; never in CI)

@pytest.mark.checkout
@pytest.mark.slow
@pytest.mark.parametrize("task", ["canvas-do-quiz", "woocommerce-update-cover"])
def test_two_concurrent_reruns_of_a_real_task_each_pass_on_their_own_services(task, tmp_path_factory):
    # Both preprocesses wipe and re-create the course's quizzes or the store's products and orders;
    # on one shared Canvas or store (upstream's) the second would break the first. Each episode here
    # re-executes the recorded passing run on its own services and is graded by the real evaluator.
    from recorded_runs import import_runs
    root = os.environ.get("TOOLATHLON_ROOT")
    if not root:
        pytest.fail("set TOOLATHLON_ROOT to an unmodified Toolathlon checkout to run the checkout tests")
    if not os.environ.get("DECATHLON_TASK_PYTHON"):
        pytest.fail("set DECATHLON_TASK_PYTHON to the checkout's task environment (decathlon task-env, docs/checkout.md)")
    imported = import_runs(tmp_path_factory)
    proc = decathlon("run", task, task, "--source", root, "--mode", "rerun", "--policy", "replay",
                     "--cassettes", str(imported / "cassettes"), "--concurrency", "2", "--json", timeout=1200)
    got = rows(proc)
    assert len(got) == 2, proc.stderr[-3000:]
    for r in got:
        assert r["recorded_pass"] is True
        assert r["infra_error"] is None and r["pass"] is True, (r, proc.stderr[-3000:])
