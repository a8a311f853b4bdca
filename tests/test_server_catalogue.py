"""The server catalogue: upstream launchers (npx/uvx/uv run/node/local binaries) resolved to how each
server runs here, `decathlon servers`, and the named errors of a definition that cannot run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import MINI, PASSING_EVALUATOR, REPO, write_task
from decathlon.sandbox.catalogue import plan_server, plan_servers
from decathlon.errors import InfraError
from decathlon.sandbox.launchers import parse_launch


def decathlon(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "decathlon", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def _yaml(source: Path, stem: str, name: str, command: str, args: list[str], **params) -> None:
    """A definition written the way upstream writes them (quoted args, cwd the workspace)."""
    body = {"type": "stdio", "name": name,
            "params": {"command": command, "args": args, "cwd": "${agent_workspace}", **params},
            "client_session_timeout_seconds": 60, "cache_tools_list": True}
    (source / "configs" / "mcp_servers" / f"{stem}.yaml").write_text(yaml.safe_dump(body, sort_keys=False))


# --- launches, parsed as written -------------------------------------------------------------------------

@pytest.mark.parametrize("command,args,kind,package,entry,module,rest", [
    ("npx", ["-y", "@modelcontextprotocol/server-filesystem", "${agent_workspace}"], "npx",
     "@modelcontextprotocol/server-filesystem", "@modelcontextprotocol/server-filesystem", None, ["${agent_workspace}"]),
    ("npx", ["-y", "@scope/pkg@1.2.3", "--flag"], "npx", "@scope/pkg", "@scope/pkg", None, ["--flag"]),
    ("uvx", ["cli-mcp-server"], "uvx", "cli-mcp-server", "cli-mcp-server", None, []),
    ("uvx", ["--from", "office-word-mcp-server", "word_mcp_server"], "uvx", "office-word-mcp-server",
     "word_mcp_server", None, []),
    ("uvx", ["pdf-tools-mcp@0.1.4", "--workspace_path", "/w"], "uvx", "pdf-tools-mcp", "pdf-tools-mcp@0.1.4", None,
     ["--workspace_path", "/w"]),
    ("uv", ["run", "excel-mcp-server", "stdio"], "uv-run", None, "excel-mcp-server", None, ["stdio"]),
    ("uv", ["run", "-m", "mcp_server_time", "--local-timezone=UTC"], "uv-run", None, None, "mcp_server_time",
     ["--local-timezone=UTC"]),
    ("/usr/bin/uv", ["--quiet", "run", "--with", "x", "-m", "mcp_server_git"], "uv-run", None, None,
     "mcp_server_git", []),
])
def test_upstream_launches_are_parsed_into_package_and_server_arguments(command, args, kind, package, entry,
                                                                         module, rest):
    launch = parse_launch("s", command, args)
    assert (launch.kind, launch.package, launch.entry, launch.module, launch.args) == (
        kind, package, entry, module, rest)


@pytest.mark.parametrize("command,args", [
    ("node", ["${local_servers_paths}/youtube-mcp-server/dist/index.js"]),
    ("${local_binary_paths}/github-mcp-server", ["stdio"]),
    ("uv", ["run", "${local_servers_paths}/yahoo-finance-mcp/server.py"]),
    ("uv", ["--directory", "${local_servers_paths}/arxiv-latex-mcp", "run", "arxiv-latex-mcp.py"]),
])
def test_servers_from_the_checkouts_own_tree_are_local(command, args):
    assert parse_launch("s", command, args).kind == "local"


@pytest.mark.parametrize("command,args,words", [
    ("bunx", ["some-server"], "unknown launcher 'bunx'"),
    ("npx", ["-y"], "names no npm package"),
    ("uv", ["sync"], "only `uv run"),
    ("uv", ["run", "-m"], "-m names no module"),
])
def test_a_launch_that_cannot_be_read_is_named(command, args, words):
    with pytest.raises(InfraError) as err:
        parse_launch("odd", command, args)
    assert err.value.kind == "unknown_launcher" and words in err.value.message and "odd" in err.value.message


# --- the table --------------------------------------------------------------------------------------------

def _raw(command: str, args: list[str]) -> dict:
    return {"type": "stdio", "name": "s", "params": {"command": command, "args": args}}


def test_catalogued_packages_resolve_to_their_virtualenv_or_stand_in():
    cases = {
        ("npx", ("-y", "@modelcontextprotocol/server-filesystem", "/ws")):
            ("${decathlon_python}", ["-m", "decathlon.standins.filesystem", "/ws"]),
        ("npx", ("-y", "@modelcontextprotocol/server-memory")): ("${decathlon_python}", ["-m", "decathlon.standins.memory"]),
        ("npx", ("-y", "@tokenizin/mcp-npx-fetch")): ("${decathlon_python}", ["-m", "decathlon.standins.fetch"]),
        ("uvx", ("cli-mcp-server",)): ("${decathlon_servers}/terminal/bin/cli-mcp-server", []),
        ("uvx", ("--from", "office-word-mcp-server", "word_mcp_server")):
            ("${decathlon_servers}/word/bin/word_mcp_server", []),
        ("uvx", ("--from", "office-powerpoint-mcp-server", "ppt_mcp_server")):
            ("${decathlon_servers}/pptx/bin/ppt_mcp_server", []),
        ("uv", ("run", "excel-mcp-server", "stdio")): ("${decathlon_servers}/excel/bin/excel-mcp-server", ["stdio"]),
        ("uv", ("run", "-m", "mcp_server_git")): ("${decathlon_servers}/git/bin/python", ["-m", "mcp_server_git"]),
        ("uvx", ("Mcp_Server.Git",)): None,  # PyPI names compare normalised, but the script name must exist
    }
    for (command, args), want in cases.items():
        if want is None:
            with pytest.raises(InfraError) as err:
                plan_server("s", _raw(command, list(args)))
            assert err.value.kind == "unknown_server_package" and "has no command 'Mcp_Server.Git'" in err.value.message
            continue
        plan = plan_server("s", _raw(command, list(args)))
        assert (plan.runs, plan.command, plan.args) == ("live", *want), (command, args)


def test_replay_only_servers_say_why_and_a_live_plan_refuses_them():
    plan = plan_server("playwright_with_chunk", _raw("npx", ["-y", "@lockon0927/playwright-mcp-with-chunk",
                                                             "--headless"]))
    assert plan.runs == "replay" and "browser" in plan.how
    with pytest.raises(InfraError) as err:
        plan_servers({"playwright_with_chunk": _raw("npx", ["-y", "@lockon0927/playwright-mcp-with-chunk"])},
                     ["playwright_with_chunk"])
    assert err.value.kind == "replay_only_server"
    assert "'playwright_with_chunk'" in err.value.message and "--cassettes" in err.value.message


def test_an_unknown_package_is_named_with_the_way_to_add_it():
    with pytest.raises(InfraError) as err:
        plan_server("weather", _raw("npx", ["-y", "@someone/weather-mcp"]))
    assert err.value.kind == "unknown_server_package"
    assert "'@someone/weather-mcp'" in err.value.message and "server_catalogue.yaml" in err.value.message
    with pytest.raises(InfraError) as err:
        plan_server("weather", _raw("uv", ["run", "weather-mcp"]))
    assert err.value.kind == "unknown_server_package" and "'weather-mcp'" in err.value.message


def test_the_mini_pack_is_written_with_upstream_launchers_and_runs_live():
    configs = {}
    for path in sorted((MINI / "configs" / "mcp_servers").glob("*.yaml")):
        raw = yaml.safe_load(path.read_text())
        configs[raw["name"]] = raw
        assert raw["params"]["command"] in ("npx", "uvx", "uv"), path  # as upstream writes them
    plans = plan_servers(configs, sorted(configs))
    assert {p.server: p.runs for p in plans} == dict.fromkeys(sorted(configs), "live")


# --- `decathlon servers` ----------------------------------------------------------------------------------

def test_servers_lists_every_definition_of_the_mini_pack():
    proc = decathlon("servers", "--source", str(MINI), "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert sorted(rows) == ["excel", "filesystem", "git", "terminal", "word"]
    assert all(r["runs"] == "live" and r["available"] for r in rows.values()), rows
    assert rows["filesystem"]["how"] == "stand-in decathlon.standins.filesystem"
    assert rows["filesystem"]["runs_here"] == "stand-in" and rows["filesystem"]["against"] == "the episode's workspace"
    assert rows["excel"]["runs_here"] == "package" and rows["excel"]["what"].startswith("excel-mcp-server ")
    assert rows["excel"]["version"] == rows["excel"]["installed"]  # what ci/servers pins is what is installed
    assert rows["excel"]["package"] == "excel-mcp-server" and rows["excel"]["installed"]
    assert rows["terminal"]["tasks"] == ["contacts-dedupe", "git-release-notes"]
    assert rows["git"]["launcher"] == "uv run -m mcp_server_git"


def test_servers_reports_replay_only_broken_and_pinned_definitions(source):
    _yaml(source, "playwright", "playwright_with_chunk", "npx", ["-y", "@lockon0927/playwright-mcp-with-chunk"])
    _yaml(source, "github", "github", "${local_binary_paths}/github-mcp-server", ["stdio"],
          env={"GITHUB_PERSONAL_ACCESS_TOKEN": "${token.github_token}"})
    _yaml(source, "excel", "excel", "uv", ["run", "excel-mcp-server", "stdio"])
    _yaml(source, "word", "word", "uvx", ["--from", "office-word-mcp-server", "word_mcp_server"])
    _yaml(source, "odd", "odd", "bunx", ["odd-server"])
    (source / "uv.lock").write_text('version = 1\n[[package]]\nname = "excel-mcp-server"\nversion = "0.0.1"\n')
    (source / "Dockerfile").write_text("RUN uv tool install office-word-mcp-server@9.9.9 \\\n"
                                       "    && uv tool install git+https://github.com/o/cli-mcp-server@abcdef0123456789\n")
    write_task(source, "uses-excel", servers=["excel"], evaluator=PASSING_EVALUATOR)
    proc = decathlon("servers", "--source", str(source), "--json")
    assert proc.returncode == 1, "a broken definition makes the listing fail"
    assert "odd.yaml" in proc.stderr and "unknown launcher 'bunx'" in proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert rows["playwright_with_chunk"]["runs"] == "replay" and not rows["playwright_with_chunk"]["available"]
    assert rows["github"]["runs"] == "replay"
    assert rows["odd"]["runs"] == "error" and rows["odd"]["how"] == "unknown_launcher"
    assert rows["excel"]["pin"] == {"version": "0.0.1", "from": "uv.lock"}
    assert "the checkout pins 0.0.1 (uv.lock)" in rows["excel"]["note"]
    assert rows["excel"]["tasks"] == ["uses-excel"]
    assert rows["word"]["pin"] == {"version": "9.9.9", "from": "Dockerfile"}
    assert rows["playwright_with_chunk"]["runs_here"] == "replay"
    assert rows["playwright_with_chunk"]["against"] == "nothing: its answers come from recorded cassettes"
    table = decathlon("servers", "--source", str(source)).stdout
    assert "5 server definitions: 2 run here, 2 replay only, 1 broken" in table


def test_servers_needs_a_toolathlon_root(tmp_path):
    (tmp_path / "tasks" / "finalpool").mkdir(parents=True)
    proc = decathlon("servers", "--source", str(tmp_path))
    assert proc.returncode == 2 and "no configs/mcp_servers" in proc.stderr and "Traceback" not in proc.stderr


# --- a live episode -------------------------------------------------------------------------------------

def _run(source: Path, task: str, env: dict | None = None, policy: str = "oracle") -> tuple[dict, float]:
    """Oracle by default: a policy that calls tools, so its servers must run (setup fails before the
    oracle file is ever looked for)."""
    if policy == "oracle":  # an oracle exists, so the run gets past the run-level check to the servers
        oracle = source / "oracles" / f"{task}.json"
        if not oracle.exists():
            oracle.parent.mkdir(exist_ok=True)
            oracle.write_text(json.dumps({"task": task, "steps": [{"tool": "local-claim_done", "arguments": {}}]}))
    started = time.monotonic()
    proc = decathlon("run", task, "--source", str(source), "--policy", policy, "--json", env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), time.monotonic() - started


def test_a_live_episode_needing_a_replay_only_server_fails_at_once(source):
    _yaml(source, "playwright", "playwright_with_chunk", "npx", ["-y", "@lockon0927/playwright-mcp-with-chunk"])
    marker = source / "preprocess-ran"
    write_task(source, "browse", servers=["playwright_with_chunk"], evaluator=PASSING_EVALUATOR,
               preprocess=f"open({str(marker)!r}, 'w').write('x')\n")
    result, took = _run(source, "browse")
    assert result["infra_error"]["kind"] == "replay_only_server", result
    assert "playwright_with_chunk" in result["infra_error"]["message"]
    assert "--cassettes" in result["infra_error"]["message"]
    assert not marker.exists(), "named before the preprocess runs"
    assert took < 30, "at once, not after a server-start timeout"


def test_a_policy_that_calls_no_tool_runs_without_the_servers_that_cannot_run(source, tmp_path):
    _yaml(source, "playwright", "playwright_with_chunk", "npx", ["-y", "@lockon0927/playwright-mcp-with-chunk"])
    _yaml(source, "excel", "excel", "uv", ["run", "excel-mcp-server", "stdio"])
    _yaml(source, "filesystem", "filesystem", "npx", ["-y", "@modelcontextprotocol/server-filesystem",
                                                      "${agent_workspace}"])
    write_task(source, "browse", servers=["playwright_with_chunk", "excel", "filesystem"],
               evaluator=PASSING_EVALUATOR)
    empty = tmp_path / "no-servers"
    empty.mkdir()
    result, _ = _run(source, "browse", env={"DECATHLON_SERVERS_DIR": str(empty)}, policy="null")
    assert result["infra_error"] is None and result["pass"] is True, result
    omitted = {o["name"]: o["kind"] for o in result["omitted_servers"]}
    assert omitted == {"playwright_with_chunk": "replay_only_server", "excel": "server_not_installed"}


def test_a_live_episode_with_an_unknown_package_is_named(source):
    _yaml(source, "weather", "weather", "uvx", ["weather-mcp-server"])
    write_task(source, "forecast", servers=["weather"], evaluator=PASSING_EVALUATOR)
    result, _ = _run(source, "forecast")
    assert result["infra_error"]["kind"] == "unknown_server_package", result
    assert "'weather-mcp-server'" in result["infra_error"]["message"]


def test_a_live_package_that_is_not_installed_is_named(source, tmp_path):
    _yaml(source, "excel", "excel", "uv", ["run", "excel-mcp-server", "stdio"])
    write_task(source, "sheet", servers=["excel"], evaluator=PASSING_EVALUATOR)
    empty = tmp_path / "no-servers"
    empty.mkdir()
    result, took = _run(source, "sheet", env={"DECATHLON_SERVERS_DIR": str(empty)})
    assert result["infra_error"]["kind"] == "server_not_installed", result
    assert "excel-mcp-server" in result["infra_error"]["message"]
    assert "ci/install_servers.py" in result["infra_error"]["message"]
    assert took < 30


# --- the real checkout (TOOLATHLON_ROOT; never in CI) ----------------------------------------------------

@pytest.mark.checkout
def test_the_checkout_lists_all_its_definitions_and_runs_the_offline_ones_live():
    root = os.environ.get("TOOLATHLON_ROOT")
    if not root:
        pytest.fail("set TOOLATHLON_ROOT to an unmodified Toolathlon checkout to run the checkout tests")
    proc = decathlon("servers", "--source", root, "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert len(rows) == 34
    live = sorted(n for n, r in rows.items() if r["runs"] == "live")
    assert live == ["canvas", "emails", "excel", "fetch", "filesystem", "git", "google-cloud", "google_sheet", "memory",
                    "pdf-tools", "pptx", "snowflake", "terminal", "time", "woocommerce", "word"]
    assert rows["filesystem"]["tasks"] and len(rows["filesystem"]["tasks"]) == 86
    # What actually runs, and against what (issue 31): google-cloud is the real PyPI package through our wrapper.
    cloud = rows["google-cloud"]
    assert (cloud["runs_here"], cloud["package"], cloud["version"]) == ("package through a stand-in",
                                                                       "google-cloud-mcp", "1.0.0")
    assert cloud["what"] == "google-cloud-mcp 1.0.0 (PyPI), started by our decathlon.standins.google_cloud"
    assert "emulated BigQuery, Cloud Storage, Cloud Logging" in cloud["against"]
    assert rows["snowflake"]["runs_here"] == "stand-in" and "emulated Snowflake" in rows["snowflake"]["against"]
    assert rows["emails"]["what"] == "emails-mcp 0.1.12 (PyPI)" and "mail server" in rows["emails"]["against"]
    assert rows["notion"]["runs_here"] == "replay"
    title = decathlon("servers", "--source", root).stdout
    assert "34 server definitions: 16 run here, 18 replay only" in title and "broken" not in title
