"""A Toolathlon root in the checkout's own conventions (fixtures/toolathlon-conventions): upstream
launchers, configs from their examples, a utils/ package, scripts that write into their task folder,
a Python 3.12 evaluator. Each episode runs them against a private copy; the source never changes."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LAUNCH, REPO

PACK = REPO / "fixtures" / "toolathlon-conventions"


def decathlon(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "decathlon", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def results(proc: subprocess.CompletedProcess) -> list[dict]:
    assert "Traceback" not in proc.stderr, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def tree_digest(root: Path) -> dict[str, str]:
    """Every entry under root (files by content, links by target, folders by name)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            out[rel] = "link:" + os.readlink(path)
        elif path.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    dest = tmp_path / "checkout"
    shutil.copytree(PACK, dest, symlinks=True)
    return dest


def test_the_pack_has_only_the_example_config_modules():
    configs = PACK / "configs"
    assert (configs / "global_configs_example.py").is_file() and not (configs / "global_configs.py").exists()
    assert (configs / "token_key_session_example.py").is_file() and not (configs / "token_key_session.py").exists()


def test_runs_leave_the_source_byte_identical(pack):
    before = tree_digest(pack)
    for policy in ("oracle", "null"):
        proc = decathlon("run", "--all", "--source", str(pack), "--policy", policy, "--json",
                         "--launch-time", LAUNCH)
        rows = {r["task"]: r for r in results(proc)}
        assert sorted(rows) == ["fstring-report", "notes-index"], proc.stderr
        assert rows["notes-index"]["infra_error"] is None, rows["notes-index"]
        assert rows["notes-index"]["pass"] is (policy == "oracle"), rows["notes-index"]
    assert tree_digest(pack) == before, "the source changed (a script wrote into it, or bytecode landed there)"


def test_concurrent_episodes_of_one_task_each_see_their_own_task_folder(pack):
    # The preprocess regenerates the ground truth for its own workspace and the evaluator checks it was
    # made for its episode: episodes sharing one task folder overwrite each other and fail.
    proc = decathlon("run", "notes-index", "notes-index", "notes-index", "--source", str(pack), "--policy", "oracle",
                     "--concurrency", "3", "--json")
    rows = results(proc)
    assert len(rows) == 3
    assert all(r["pass"] is True and r["infra_error"] is None for r in rows), rows


def test_config_modules_come_from_the_examples_or_the_files_the_user_names(pack, tmp_path, task_api):
    task_api.ok("setup", "notes-index", "--source", str(pack), "--launch-time", LAUNCH)
    session = json.loads((task_api.home / "state" / "session.json").read_text())
    assert session["config_modules"] == {"global_configs.py": "example", "token_key_session.py": "example"}
    readme = (Path(session["workspace"]) / "notes" / "README.txt").read_text()
    # The task's own token_key_session.py overrides the global (example) one.
    assert readme == "Title: Weekly notes\nOwner: Ada Lovelace\n"
    task_api.ok("teardown")

    mine = tmp_path / "mine.py"
    mine.write_text("global_configs = {'report_title': 'Quarterly notes'}\n")
    env = {**os.environ, "TASK_API_HOME": str(task_api.home), "DECATHLON_GLOBAL_CONFIGS": str(mine)}
    proc = subprocess.run([sys.executable, "-m", "decathlon.sandbox", "setup", "notes-index", "--source", str(pack),
                           "--launch-time", LAUNCH], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    session = json.loads((task_api.home / "state" / "session.json").read_text())
    assert session["config_modules"]["global_configs.py"] == "DECATHLON_GLOBAL_CONFIGS"
    assert (Path(session["workspace"]) / "notes" / "README.txt").read_text().startswith("Title: Quarterly notes\n")
    assert not (pack / "configs" / "global_configs.py").exists(), "never written into the source"


def test_a_named_config_file_that_does_not_exist_is_named(pack, tmp_path):
    proc = decathlon("run", "notes-index", "--source", str(pack), "--policy", "null", "--json",
                     env={"DECATHLON_GLOBAL_CONFIGS": str(tmp_path / "absent.py")})
    [row] = results(proc)
    assert row["infra_error"]["kind"] == "bad_config", row
    assert "DECATHLON_GLOBAL_CONFIGS" in row["infra_error"]["message"]


def test_a_source_without_its_config_modules_says_which_and_how(pack):
    (pack / "configs" / "global_configs_example.py").unlink()
    proc = decathlon("run", "notes-index", "--source", str(pack), "--policy", "null", "--json")
    [row] = results(proc)
    assert row["infra_error"]["kind"] == "preprocess_failed", row
    message = row["infra_error"]["message"]
    assert "configs.global_configs" in message and "DECATHLON_GLOBAL_CONFIGS" in message, message


def test_an_evaluator_import_that_fails_names_the_package_and_the_way_to_add_it(pack):
    evaluator = pack / "tasks" / "finalpool" / "notes-index" / "evaluation" / "main.py"
    evaluator.write_text("import decathlon_no_such_package\n" + evaluator.read_text())
    proc = decathlon("run", "notes-index", "--source", str(pack), "--policy", "null", "--json")
    [row] = results(proc)
    assert row["infra_error"]["kind"] == "grader_preflight", row
    message = row["infra_error"]["message"]
    assert "decathlon_no_such_package" in message and "decathlon task-env" in message, message


def _task_python_version() -> tuple[int, int]:
    python = os.environ.get("DECATHLON_TASK_PYTHON") or sys.executable
    out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True, text=True,
                         check=True)
    major, minor = out.stdout.split()
    return int(major), int(minor)


def test_a_python_312_evaluator_runs_where_312_is_and_is_named_where_it_is_not(pack):
    proc = decathlon("run", "fstring-report", "--source", str(pack), "--policy", "oracle", "--json")
    [row] = results(proc)
    if _task_python_version() >= (3, 12):
        assert row["pass"] is True and row["infra_error"] is None, row
    else:
        assert row["infra_error"]["kind"] == "task_python_too_old", row
        message = row["infra_error"]["message"]
        assert "Python >= 3.12" in message and "decathlon task-env" in message and "SyntaxError" in message


def test_the_packs_servers_are_written_as_upstream_and_run_live():
    proc = decathlon("servers", "--source", str(PACK), "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert {n: r["runs"] for n, r in rows.items()} == {n: "live" for n in LIVE_SERVERS}
    assert all(r["available"] for r in rows.values()), rows
    assert rows["filesystem"]["launcher"].startswith("npx -y @modelcontextprotocol/server-filesystem")


LIVE_SERVERS = ("excel", "fetch", "filesystem", "git", "memory", "pdf-tools", "pptx", "terminal", "time", "word")


def every_server_task(pack: Path) -> str:
    """A task of the pack that needs every server the pack defines: setup starts each one and lists its tools."""
    from conftest import write_task
    write_task(pack, "every-server", servers=list(LIVE_SERVERS), evaluator="import sys; sys.exit(1)")
    return "every-server"


def test_every_live_server_of_the_catalogue_starts_from_its_upstream_launch(pack):
    [row] = results(decathlon("run", every_server_task(pack), "--source", str(pack), "--policy", "null", "--json"))
    assert row["infra_error"] is None and row["pass"] is False, row
    assert row.get("omitted_servers", []) == [], row


# --- the frozen clock ---------------------------------------------------------------------------------

CLOCK_PREPROCESS = """
import argparse, datetime, pathlib
p = argparse.ArgumentParser()
p.add_argument("--agent_workspace"); p.add_argument("--launch_time")
a = p.parse_args()
pathlib.Path(a.agent_workspace, "seeded_at.txt").write_text(datetime.datetime.now().isoformat())
"""
CLOCK_EVALUATOR = """
import argparse, datetime, pathlib, sys, time
p = argparse.ArgumentParser()
for arg in ("--res_log_file", "--agent_workspace", "--groundtruth_workspace", "--launch_time"):
    p.add_argument(arg)
a = p.parse_args()
launch = datetime.datetime.strptime(a.launch_time[:19], "%Y-%m-%d %H:%M:%S")
seeded = datetime.datetime.fromisoformat(pathlib.Path(a.agent_workspace, "seeded_at.txt").read_text())
now = datetime.datetime.now()
print(f"launch {launch} seeded {seeded} now {now}")
started = time.monotonic(); time.sleep(0.2); slept = time.monotonic() - started
ok = abs((seeded - launch).total_seconds()) < 120 and abs((now - launch).total_seconds()) < 600 and 0.15 < slept < 5
sys.exit(0 if ok else 1)
"""


def test_a_frozen_clock_starts_the_tasks_own_processes_at_launch_time(source):
    from conftest import write_task
    write_task(source, "dated", preprocess=CLOCK_PREPROCESS, evaluator=CLOCK_EVALUATOR)
    args = ("run", "dated", "--source", str(source), "--policy", "null", "--json", "--launch-time", "2021-06-01 08:30:00")
    [frozen] = results(decathlon(*args, "--frozen-clock"))
    assert frozen["infra_error"] is None and frozen["pass"] is True, frozen
    [real] = results(decathlon(*args))
    assert real["infra_error"] is None and real["pass"] is False, "without it, the same grader sees today's date"


def test_a_frozen_clock_without_libfaketime_is_named(source, tmp_path):
    from conftest import write_task
    write_task(source, "dated", preprocess=CLOCK_PREPROCESS, evaluator=CLOCK_EVALUATOR)
    [row] = results(decathlon("run", "dated", "--source", str(source), "--policy", "null", "--json", "--frozen-clock",
                              env={"DECATHLON_LIBFAKETIME": str(tmp_path / "nope.so")}))
    assert row["infra_error"]["kind"] == "faketime_missing", row


@pytest.mark.skipif(os.geteuid() != 0, reason="switching users needs root (the compose tier covers it in a container)")
def test_a_frozen_clock_survives_the_switch_to_the_grader_user(tmp_path):
    """libfaketime's first process creates a semaphore only its user can open: loaded into the root
    `setpriv`, the grader it turns into died at start. The clock is now set up behind the switch."""
    from decathlon.sandbox.clock import behind, frozen_env
    from decathlon.sandbox.users import Users
    prefix = Users(agent=65534, grader=65534).prefix("grader")
    env = {**os.environ, **frozen_env("2021-06-01 08:30:00")}
    probe = ["date", "+%F"]  # the test's own interpreter may sit where the other user cannot read
    argv0, moved = behind(prefix, env)
    fixed = subprocess.run([*argv0, *probe], env=moved, capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert fixed.returncode == 0 and fixed.stdout.strip() == "2021-06-01", fixed.stderr


def test_server_templates_read_the_config_modules_with_the_task_interpreter(pack, task_api):
    """${token.*} comes from the task's token_key_session.py over the global one (here: the example
    copied for this episode), loaded by the task's interpreter from the episode's root."""
    from conftest import TEST_SERVERS, write_server
    write_server(pack, "toy", sys.executable, [str(TEST_SERVERS / "toy_server.py")],
                 env={"OWNER": "${token.notes_owner}", "TITLE_FROM": "${config.report_title}"})
    task = pack / "tasks" / "finalpool" / "notes-index" / "task_config.json"
    config = json.loads(task.read_text())
    task.write_text(json.dumps({**config, "needed_mcp_servers": ["filesystem", "toy"]}))
    task_api.ok("setup", "notes-index", "--source", str(pack), "--launch-time", LAUNCH)
    owner = task_api.ok("execute", "toy-env", json.dumps({"name": "OWNER"}))
    title = task_api.ok("execute", "toy-env", json.dumps({"name": "TITLE_FROM"}))
    assert "Ada Lovelace" in owner["content"] and "Weekly notes" in title["content"], (owner, title)


def test_a_task_whose_own_data_is_missing_says_so(source):
    """As a snapshot without its large files: the preprocess cannot open the task's tarball."""
    from conftest import write_task
    write_task(source, "needs-tarball", evaluator="import sys\nsys.exit(1)\n", preprocess="""
import argparse, pathlib, sys, tarfile
p = argparse.ArgumentParser(); p.add_argument("--agent_workspace"); p.add_argument("--launch_time")
a = p.parse_args()
try:
    tarfile.open(pathlib.Path(a.agent_workspace) / "files.tar.gz").extractall(a.agent_workspace)
except Exception as exc:
    print(f"Failed to extract: {exc}"); sys.exit(1)
""", files={"initial_workspace/README.md": "the tarball is a large file this snapshot lacks\\n"})
    [row] = results(decathlon("run", "needs-tarball", "--source", str(source), "--policy", "null", "--json"))
    assert row["infra_error"]["kind"] == "task_data_missing", row
    assert "tasks/finalpool/needs-tarball/initial_workspace/files.tar.gz" in row["infra_error"]["message"]
