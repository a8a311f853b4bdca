"""The compose backend's sandboxes: who can read what, how they are bounded and labelled, and the
CLI path end to end (rewards, nothing left behind, gc after a SIGKILLed run, a quick cached build)."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from conftest import LAUNCH, MINI, REPO
from conformance import compose as compose_mod, require
from decathlon.backends.base import SandboxSpec
from decathlon.core.task_session import TaskSession

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def backend():
    require(compose_mod)
    from decathlon.backends.compose import ComposeBackend
    return ComposeBackend.from_env()


def _spec(task: str, run: str | None = None) -> SandboxSpec:
    return SandboxSpec(run or uuid.uuid4().hex[:12], uuid.uuid4().hex, task, MINI)


def _secret_line(task: str) -> str:
    """A line of the task's evaluator that no tool output could contain by chance."""
    lines = [line.strip() for line in (MINI / "tasks/finalpool" / task / "evaluation/main.py").read_text().splitlines()]
    return max(lines, key=len)


READ_GRADER = """
import os, pathlib
for p in ["/episodes/source/tasks/finalpool/{task}/evaluation/main.py",
          "/episodes/source/tasks/finalpool/{task}/groundtruth_workspace",
          "/opt/decathlon/src/fixtures/toolathlon-mini/tasks/finalpool/{task}/evaluation/main.py"]:
    try:
        print("READ", p, pathlib.Path(p).read_text()[:2000] if pathlib.Path(p).is_file() else os.listdir(p))
    except PermissionError as e:
        print("DENIED", p)
print("UID", os.getuid())
"""


def test_the_agents_python_cannot_read_the_grader(backend):
    task = "csv-sales-summary"

    async def go() -> str:
        box = await backend.acquire(_spec(task))
        try:
            s = TaskSession(box)
            await s.setup(task, LAUNCH)
            res = await s.execute("local-python-execute", json.dumps({"code": READ_GRADER.format(task=task)}))
            return res.content
        finally:
            await box.release()
    out = asyncio.run(go())
    assert out.count("DENIED") == 3 and "READ" not in out, out
    assert "UID 1500" in out
    assert _secret_line(task) not in out


def test_the_agents_terminal_cannot_read_the_grader(backend):
    task = "contacts-dedupe"
    evaluator = f"/episodes/source/tasks/finalpool/{task}/evaluation/main.py"

    async def go() -> list[str]:
        box = await backend.acquire(_spec(task))
        try:
            s = TaskSession(box)
            await s.setup(task, LAUNCH)
            outs = []
            for cmd in (f"cat {evaluator}", f"python3 -c \"print(open('{evaluator}').read())\"",
                        f"ls /episodes/source/tasks/finalpool/{task}/groundtruth_workspace"):
                res = await s.execute("terminal-run_command", json.dumps({"command": cmd}))
                outs.append(res.content)
            # The evaluator itself, run as the task user, still reads all of it: the episode passes.
            return outs
        finally:
            await box.release()
    outs = asyncio.run(go())
    for out in outs:
        assert _secret_line(task) not in out, out
        assert "ermission denied" in out or "not allowed" in out.lower() or "outside" in out.lower(), out


def test_labels_limits_and_no_privileges(backend):
    run = uuid.uuid4().hex[:12]

    async def go() -> dict:
        box = await backend.acquire(_spec("csv-sales-summary", run))
        try:
            attrs = backend.client.api.inspect_container(box.container.id)
            sock = await box.exec(["sh", "-c", "ls -l /var/run/docker.sock /run/docker.sock 2>&1; id -u; "
                                   "cat /proc/self/status | grep -E '^(CapEff|NoNewPrivs)'"])
            return {"attrs": attrs, "inside": sock.stdout}
        finally:
            await box.release()
    got = asyncio.run(go())
    labels, host = got["attrs"]["Config"]["Labels"], got["attrs"]["HostConfig"]
    assert labels["decathlon.managed"] == "true" and labels["decathlon.run"] == run
    assert labels["decathlon.task"] == "csv-sales-summary" and len(labels["decathlon.episode"]) == 32
    assert host["NanoCpus"] > 0 and host["Memory"] > 0 and host["PidsLimit"] > 0
    assert host["Privileged"] is False and host["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in host["SecurityOpt"] and host["ReadonlyRootfs"] is True
    assert host["NetworkMode"] == "none" and not host.get("Binds")
    assert "docker.sock" not in json.dumps(got["attrs"]["Mounts"])
    inside = got["inside"]
    assert "No such file" in inside and "\n1500\n" in inside and "CapEff:\t0000000000000000" in inside
    assert "NoNewPrivs:\t1" in inside
    assert backend.client.containers.list(all=True, filters={"label": f"decathlon.run={run}"}) == []


def _cli(*args: str, tag: str | None = None, timeout: float | None = None) -> subprocess.CompletedProcess:
    """The command, run to its end; one that outlives `timeout` fails the test with where each of its threads
    was (the CLI's SIGUSR1 dump) and the end of what it printed, then is killed."""
    env = {**os.environ, **({"DECATHLON_COMPOSE_LABELS": f"decathlon.test={tag}"} if tag else {})}
    proc = subprocess.Popen([sys.executable, "-m", "decathlon", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)
        time.sleep(3)
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"`decathlon {' '.join(args[:2])} …` ran over {timeout} s; its stderr ends:\n{err[-12000:]}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _tagged(client, tag: str) -> list[dict]:
    # The engine's own list (one call): docker-py's models inspect each container after listing, which
    # fails when a run being stopped removes one in between.
    return client.api.containers(all=True, filters={"label": f"decathlon.test={tag}"})


def test_cli_run_gives_full_rewards_and_leaves_nothing(backend):
    tag = uuid.uuid4().hex
    proc = _cli("run", "--all", "--source", str(MINI), "--backend", "compose", "--policy", "oracle", "--json",
                "--launch-time", LAUNCH, tag=tag, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(rows) == 5 and all(r["reward"] == 1.0 and r["infra_error"] is None for r in rows), rows
    assert _tagged(backend.client, tag) == []


def test_gc_after_a_sigkilled_run(backend):
    tag = uuid.uuid4().hex
    proc = subprocess.Popen([sys.executable, "-m", "decathlon", "run", "--all", "--source", str(MINI), "--backend",
                             "compose", "--json"], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "DECATHLON_COMPOSE_LABELS": f"decathlon.test={tag}"})
    deadline = time.monotonic() + 120
    while not _tagged(backend.client, tag) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # mid-episode: containers up, setup under way
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = _tagged(backend.client, tag)
    assert left, "a SIGKILLed run leaves its containers (or this test proves nothing)"
    run = left[0]["Labels"]["decathlon.run"]
    gc = _cli("gc", "--backend", "compose", "--run", run, timeout=120)
    assert gc.returncode == 0, gc.stderr
    assert json.loads(gc.stdout)["removed"] >= 1
    assert _tagged(backend.client, tag) == []


def test_a_container_still_being_created_when_every_task_is_cancelled_is_removed(backend):
    """What asyncio.run does on Ctrl-C: cancel every task at once, the acquire and whatever it awaits.
    The engine finishes a container it was asked for regardless; it must not outlive the run."""
    tag = uuid.uuid4().hex
    backend._check_image()

    async def go() -> None:
        acquiring = asyncio.create_task(backend.acquire(SandboxSpec("cancel", uuid.uuid4().hex, "csv-sales-summary",
                                                                    MINI, {"decathlon.test": tag})))
        await asyncio.sleep(0.1)  # the create call is with the engine now
        assert not acquiring.done()
        others = asyncio.all_tasks() - {asyncio.current_task()}
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
    asyncio.run(go())
    deadline = time.monotonic() + 30
    while _tagged(backend.client, tag) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _tagged(backend.client, tag) == []


@pytest.mark.parametrize("pool", ["0", "2"])
def test_ctrl_c_leaves_nothing(backend, tmp_path, pool):
    """SIGINT at several points of a run (containers being created, set up, mid-episode): every
    container, pooled ones too, and every channel folder is gone when the process has exited."""
    channels = tmp_path / "channels"
    for delay in (1.5, 3.0):
        tag = uuid.uuid4().hex
        proc = subprocess.Popen([sys.executable, "-m", "decathlon", "run", "--all", "--source", str(MINI), "--backend",
                                 "compose", "--json"], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env={**os.environ, "DECATHLON_COMPOSE_LABELS": f"decathlon.test={tag}",
                                     "DECATHLON_COMPOSE_POOL": pool, "DECATHLON_COMPOSE_CHANNELS": str(channels)})
        deadline = time.monotonic() + 120
        while not _tagged(backend.client, tag) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err[-2000:]
        assert _tagged(backend.client, tag) == [], f"left after Ctrl-C at +{delay} s"
        assert not any(channels.iterdir()), f"channel folders left after Ctrl-C at +{delay} s"


def test_image_build_from_cache_builds_nothing(backend):
    # How quick that is (budget 30 s) is bench/bench_budgets.py's to say.
    proc = _cli("image", "build", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "up to date" in proc.stderr, proc.stderr


def test_missing_image_names_the_build_command():
    from decathlon.backends.compose import ComposeBackend
    from decathlon.errors import InfraError
    reason = compose_mod.unavailable()
    if reason and "no Docker engine" in reason:
        require(compose_mod)
    os.environ["DECATHLON_IMAGE"] = "decathlon-sandbox:does-not-exist"
    try:
        b = ComposeBackend.from_env()
        with pytest.raises(InfraError) as e:
            asyncio.run(b.acquire(_spec("csv-sales-summary")))
    finally:
        del os.environ["DECATHLON_IMAGE"]
    assert e.value.kind == "image_missing" and "decathlon image build" in e.value.message


def test_unreachable_engine_is_a_clear_error(monkeypatch):
    from decathlon.backends.compose import ComposeBackend
    from decathlon.errors import InfraError
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(InfraError) as e:
        ComposeBackend.from_env()
    assert e.value.kind == "engine_unreachable" and "unreachable" in e.value.message
    proc = _cli("gc", "--backend", "compose", timeout=60)  # DOCKER_HOST is inherited
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "unreachable" in proc.stderr


# --- a source in Toolathlon's conventions, on compose (issue 10) ------------------------------------------

CONVENTIONS = REPO / "fixtures" / "toolathlon-conventions"


def test_a_source_in_the_checkouts_conventions_runs_on_compose(backend, tmp_path):
    """Upstream launchers, configs from examples, utils/ imported by the scripts, writes into the task
    folder: all inside the container, as the grader; the host's copy of the source never changes."""
    import shutil
    pack = tmp_path / "pack"
    shutil.copytree(CONVENTIONS, pack)
    before = sorted((str(p.relative_to(pack)), p.stat().st_size) for p in pack.rglob("*") if p.is_file())
    tag = uuid.uuid4().hex
    proc = _cli("run", "notes-index", "notes-index", "fstring-report", "--source", str(pack), "--backend",
                "compose", "--policy", "oracle", "--json", "--concurrency", "2", tag=tag, timeout=900)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    notes = [r for r in rows if r["task"] == "notes-index"]
    assert len(notes) == 2 and all(r["pass"] is True and r["infra_error"] is None for r in notes), rows
    [fstring] = [r for r in rows if r["task"] == "fstring-report"]
    # The plain sandbox image's task interpreter is Debian 12's 3.11 (the checkout image has 3.13).
    assert fstring["infra_error"]["kind"] == "task_python_too_old", fstring
    assert sorted((str(p.relative_to(pack)), p.stat().st_size) for p in pack.rglob("*") if p.is_file()) == before
    assert _tagged(backend.client, tag) == []


def test_the_frozen_clock_works_inside_the_container(backend, tmp_path):
    from conftest import write_task
    from test_checkout_conventions import CLOCK_EVALUATOR, CLOCK_PREPROCESS
    source = tmp_path / "src"
    (source / "configs" / "mcp_servers").mkdir(parents=True)
    write_task(source, "dated", preprocess=CLOCK_PREPROCESS, evaluator=CLOCK_EVALUATOR)
    proc = _cli("run", "dated", "--source", str(source), "--backend", "compose", "--policy", "null", "--json",
                "--launch-time", "2021-06-01 08:30:00", "--frozen-clock", timeout=600)
    [row] = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert row["infra_error"] is None and row["pass"] is True, row


def test_every_live_server_of_the_catalogue_starts_inside_the_container(backend, tmp_path):
    """The stand-ins and PyPI servers run with the image's interpreters (the fetch stand-in once lacked
    httpx there). pdf-tools needs Python >= 3.12, which only the checkout image carries."""
    import shutil
    from test_checkout_conventions import every_server_task
    pack = tmp_path / "pack"
    shutil.copytree(CONVENTIONS, pack)
    proc = _cli("run", every_server_task(pack), "--source", str(pack), "--backend", "compose", "--policy", "null",
                "--json", timeout=600)
    [row] = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert row["infra_error"] is None and row["pass"] is False, row
    assert [(o["name"], o["kind"]) for o in row.get("omitted_servers", [])] == [("pdf-tools", "server_not_installed")], row


# A stdio MCP server in one `-c`: its tool answers with the file its launch names (argv[1]), as upstream's
# emails server reads its `--config_file`, and says whether that file was writable and by whom it was read.
CONFIG_READER = """
import os, sys, anyio, mcp.types as t
from mcp.server import Server
from mcp.server.stdio import stdio_server
async def tools(ctx, params):
    return t.ListToolsResult(tools=[t.Tool(name="config", description="The launch's config file.",
                                           input_schema={"type": "object", "properties": {}})])
async def call(ctx, params):
    try:
        text = open(sys.argv[1]).read()
    except OSError as e:
        text = "unreadable: " + type(e).__name__
    try:
        open(sys.argv[1], "a").close()
        writable = "writable"
    except OSError:
        writable = "read-only"
    return t.CallToolResult(content=[t.TextContent(type="text", text="\\n".join(
        [sys.argv[1], f"uid {os.getuid()}", writable, text]))])
async def main():
    s = Server("config-reader", version="1", on_list_tools=tools, on_call_tool=call)
    async with stdio_server() as (r, w):
        await s.run(r, w, s.create_initialization_options())
anyio.run(main)
"""


def test_a_config_file_of_the_graders_task_folder_reaches_the_agents_server_as_a_read_only_copy(backend, tmp_path):
    """Upstream starts the emails server with `--config_file ${token.emails_config_file}`, a file of the
    task's folder, which is the grader's alone in the container (the agent's server once failed to start
    on it). The agent's server gets a copy it can read and not change; the task folder stays the grader's."""
    import shutil
    from conftest import write_server
    pack = tmp_path / "pack"
    shutil.copytree(CONVENTIONS, pack)
    task = pack / "tasks" / "finalpool" / "notes-index"
    write_server(pack, "config-reader", "${decathlon_python}", ["-c", CONFIG_READER, "${token.reader_config}"])
    (task / "reader_config.json").write_text('{"account": "reader@example.com"}')
    (task / "token_key_session.py").write_text(
        "import os\n"
        "all_token_key_session = {\"notes_owner\": \"Ada Lovelace\",\n"
        "    \"reader_config\": os.path.join(os.path.dirname(__file__), \"reader_config.json\")}\n")
    config = json.loads((task / "task_config.json").read_text())
    config["needed_mcp_servers"] = [*config["needed_mcp_servers"], "config-reader"]
    (task / "task_config.json").write_text(json.dumps(config))

    async def go() -> tuple[str, str]:
        box = await backend.acquire(SandboxSpec(uuid.uuid4().hex[:12], uuid.uuid4().hex, "notes-index", pack))
        try:
            s = TaskSession(box)
            await s.setup("notes-index", LAUNCH)
            # Toolathlon's shape of a server's answer: the JSON of its text content.
            read = json.loads((await s.execute("config-reader-config", "{}")).content)["text"]
            folder = os.path.dirname(read.split("\n")[0])
            code = (f"import os\ntry:\n    open({folder!r} + '/planted.json', 'w')\n    print('PLANTED')\n"
                    f"except OSError as e:\n    print('DENIED', type(e).__name__)\n")
            plant = await s.execute("local-python-execute", json.dumps({"code": code}))
            return read, plant.content
        finally:
            await box.release()
    read, plant = asyncio.run(go())
    path, uid, writable, text = read.split("\n", 3)
    assert text == '{"account": "reader@example.com"}', read
    assert "/server-files/" in path and path.endswith("/reader_config.json"), read
    assert uid == "uid 1500" and writable == "read-only", read
    assert "DENIED PermissionError" in plant and "PLANTED" not in plant, plant
