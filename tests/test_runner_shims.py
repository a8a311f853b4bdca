"""uvx, npx, uv and python for the task's own scripts (decathlon/sandbox/runner_shims.py): resolved through the
server catalogue, as the episode's servers are; anything else is named, exit 127."""
from __future__ import annotations

import subprocess
import sys

import pytest

from decathlon.sandbox import runner_shims


def test_uv_run_python_and_scripts_run_on_the_task_interpreter(monkeypatch):
    monkeypatch.setenv("DECATHLON_TASK_PYTHON", "/opt/task/bin/python")
    assert runner_shims.resolve("uv", ["run", "python", "-m", "http.server", "30137"]) == \
        ["/opt/task/bin/python", "-m", "http.server", "30137"]
    assert runner_shims.resolve("uv", ["--quiet", "run", "--directory", "x", "send.py", "-s", "a"]) == \
        ["/opt/task/bin/python", "send.py", "-s", "a"]


def test_npx_of_a_stand_in_runs_our_module():
    assert runner_shims.resolve("npx", ["-y", "canvas-mcp-server"]) == [sys.executable, "-m", "decathlon.standins.canvas"]


def test_replay_only_and_unknown_packages_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="Notion SaaS"):
        runner_shims.resolve("npx", ["-y", "@notionhq/notion-mcp-server"])
    with pytest.raises(ValueError, match="not in the server catalogue"):
        runner_shims.resolve("uvx", ["no-such-package"])


def test_installed_shims_exec_and_report_what_cannot_run(tmp_path, monkeypatch):
    monkeypatch.setenv("DECATHLON_TASK_PYTHON", sys.executable)
    folder = runner_shims.install(tmp_path / "bin")
    env = {"PATH": f"{folder}:/usr/bin:/bin", "DECATHLON_TASK_PYTHON": sys.executable}
    ran = subprocess.run(["uv", "run", "python", "-c", "import sys; print(sys.prefix)"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and ran.stdout.strip() == sys.prefix, ran.stderr
    # `python` is the task interpreter too, its venv intact (a script, not a symlink)
    ran = subprocess.run(["python", "-c", "import sys; print(sys.prefix)"], env=env, capture_output=True, text=True,
                         timeout=60)
    assert ran.stdout.strip() == sys.prefix, ran.stderr
    refused = subprocess.run(["npx", "-y", "howtocook-mcp"], env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 127 and "`npx -y howtocook-mcp` cannot run offline here" in refused.stderr


def test_shims_started_with_a_bare_environment_find_the_servers_and_interpreter_of_their_install(tmp_path, monkeypatch):
    """The checkout's MCPServerManager starts `uvx emails-mcp …` through the MCP SDK, which hands the
    child only HOME, PATH and a few more: DECATHLON_SERVERS_DIR (the sandbox image's /opt/decathlon/servers)
    was lost, and the shim looked beside decathlon.sandbox, found nothing and exited 127."""
    servers = tmp_path / "servers"
    fake = servers / "emails" / "bin" / "emails-mcp"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\necho \"emails server here, $1\"\n")
    fake.chmod(0o755)
    monkeypatch.setenv("DECATHLON_SERVERS_DIR", str(servers))
    monkeypatch.setenv("DECATHLON_TASK_PYTHON", sys.executable)
    folder = runner_shims.install(tmp_path / "bin")
    bare = {"HOME": str(tmp_path), "PATH": f"{folder}:/usr/bin:/bin"}
    ran = subprocess.run(["uvx", "emails-mcp", "--config_file", "c.json"], env=bare, capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode == 0 and ran.stdout.strip() == "emails server here, --config_file", ran.stderr
    ran = subprocess.run(["uv", "run", "python", "-c", "import sys; print(sys.prefix)"], env=bare,
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and ran.stdout.strip() == sys.prefix, ran.stderr


def test_a_server_a_script_starts_with_a_bare_environment_still_reaches_the_saas_front(tmp_path, monkeypatch):
    """payable-invoice-checker's preprocess starts `uvx mcp_snowflake_server …` through the MCP SDK's bare
    environment: without the front's variables fixed into the runner, its connector met no network and retried
    for minutes. The variables given at install reach what the runner starts."""
    monkeypatch.setenv("DECATHLON_TASK_PYTHON", sys.executable)
    saas = {"HTTPS_PROXY": "http://127.0.0.1:9", "SSL_CERT_FILE": str(tmp_path / "ca.pem")}
    folder = runner_shims.install(tmp_path / "bin", saas)
    bare = {"HOME": str(tmp_path), "PATH": f"{folder}:/usr/bin:/bin"}
    show = "import os; print(os.environ['HTTPS_PROXY'], os.environ['SSL_CERT_FILE'])"
    ran = subprocess.run(["uv", "run", "python", "-c", show], env=bare, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and ran.stdout.split() == [saas["HTTPS_PROXY"], saas["SSL_CERT_FILE"]], ran.stderr
