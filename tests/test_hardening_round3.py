"""Issue 21 (hardening, round 3): findings R1, R2, R3 and H1, each through the CLI or the Python API as a
user meets them. (C1: tests/test_adversarial_grader.py and tests/test_grader_git.py; H2, H3, L1:
tests/test_adversarial_local.py; M1, M2, L2, L3 beside the code they concern.)"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LAUNCH, PASSING_EVALUATOR, REPO, write_task

pytestmark = pytest.mark.adversarial


def _decathlon(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "decathlon", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=REPO, env={**os.environ, **(env or {})})


def _episodes(proc: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def test_r3_a_local_tool_the_sandbox_lacks_is_named_not_run(tmp_path):
    """R3: a task asking for a built-in tool group we do not implement used to run to "success"; now the
    run says which group, before anything starts."""
    source = tmp_path / "src"
    write_task(source, "wants-teleport", local_tools=["claim_done", "teleport"], evaluator=PASSING_EVALUATOR)
    proc = _decathlon("run", "wants-teleport", "--source", str(source), "--policy", "null", "--json",
                      "--launch-time", LAUNCH)
    [ep] = _episodes(proc)
    assert ep["infra_error"]["kind"] == "unknown_local_tools", ep
    assert "teleport" in ep["infra_error"]["message"] and "claim_done" in ep["infra_error"]["message"], ep
    assert ep["reward"] == 0.0 and proc.returncode != 0


DOCKER_CASE = "tests/test_compose_sandbox.py::test_the_agents_python_cannot_read_the_grader"


@pytest.mark.parametrize("required", [True, False])
def test_r2_a_required_docker_tier_without_an_engine_fails(required):
    """R2: with no engine reachable, the docker cases used to skip and CI stayed green. Where the tier is
    required (.ci/run sets DECATHLON_REQUIRE_DOCKER=1), they fail; elsewhere they still skip, saying why."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "DECATHLON_REQUIRE_DOCKER")}
    env["DOCKER_HOST"] = "unix:///nonexistent/docker.sock"
    if required:
        env["DECATHLON_REQUIRE_DOCKER"] = "1"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-m", "docker", "-p", "no:randomly", "-q", "-rsf", DOCKER_CASE],
                          capture_output=True, text=True, timeout=300, cwd=REPO, env=env)
    out = proc.stdout + proc.stderr
    if required:
        assert proc.returncode != 0 and "required here" in out, out
    else:
        assert proc.returncode == 0 and "no Docker engine reachable" in out, out


def test_r2_ci_test_docker_refuses_a_required_tier_without_an_engine(tmp_path):
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent/docker.sock", "DECATHLON_REQUIRE_DOCKER": "1"}
    proc = subprocess.run([str(REPO / "ci" / "test-docker"), "--setup-only"], capture_output=True, text=True,
                          timeout=600, cwd=REPO, env=env)
    assert proc.returncode != 0 and "required here" in proc.stderr, (proc.stdout, proc.stderr)


def test_r1_an_import_in_replay_grades_only_the_recording_itself(imported, tmp_path):
    """R1: on an imported task in replay mode the recorded verdict used to come back whatever the policy
    did: "All done." with no tool call got reward 1.0. Now a run that did not make the recorded calls is
    named not gradable (and kept out of the reward); the recording itself still gets its verdict."""
    from decathlon.recordings.cassettes import cassette_path
    passing = sorted(t for t in (p.name for p in (imported / "tasks" / "finalpool").iterdir())
                     if json.loads(cassette_path(imported / "cassettes", t).read_text())["meta"]["recorded_pass"])
    task = passing[0]
    oracles = tmp_path / "oracles"  # the do-nothing policy: "All done.", no tool call
    oracles.mkdir()
    (oracles / f"{task}.json").write_text(json.dumps({"task": task, "steps": [], "final": "All done."}))
    proc = _decathlon("run", task, "--source", str(imported), "--mode", "replay", "--policy", "oracle",
                      "--oracles", str(oracles), "--json")
    [ep] = _episodes(proc)
    assert ep["reward"] == 0.0 and ep["pass"] is None, ep
    assert ep["infra_error"]["kind"] == "not_gradable" and "recorded calls" in ep["infra_error"]["message"], ep
    replayed = _decathlon("run", task, "--source", str(imported), "--policy", "replay", "--json")
    [ep] = _episodes(replayed)
    assert (ep["reward"], ep["pass"], ep["infra_error"]) == (1.0, True, None), ep


def _rerun_source(tmp_path: Path, marker: Path) -> tuple[Path, Path]:
    """A task of our own and a recorded run of it whose one python call writes `marker` on whatever host
    runs it: the recorded code a rerun would execute."""
    source = tmp_path / "src"
    write_task(source, "rerun-me", local_tools=["claim_done", "python_execute"], evaluator=PASSING_EVALUATOR)
    run = {"pass": True, "messages": [
        {"role": "user", "content": "Do the thing."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "local-python-execute", "arguments": json.dumps({"code": f"open({str(marker)!r}, 'w').write('ran')"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "=== STDOUT ===\n"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c2", "type": "function", "function": {
            "name": "local-claim_done", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "done"},
        {"role": "assistant", "content": "Done."}]}
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "rerun-me.json").write_text(json.dumps(run))
    imported = tmp_path / "imported"
    proc = _decathlon("cassettes", "import-trajectories", str(runs), "--out", str(imported))
    assert proc.returncode == 0, proc.stderr
    return source, imported / "cassettes"


def test_h1_a_rerun_by_default_runs_no_recorded_code_on_the_host(tmp_path):
    """H1: a rerun re-executes the recorded run's python for real, and its default backend was local: the
    code ran on the host as the invoking user. By default it now goes to compose (here an engine that is
    not there: the run stops before any episode, naming it, and nothing ran)."""
    marker = tmp_path / "recorded-code-ran"
    os.chmod(tmp_path, 0o777)  # so that a run as an unprivileged user could write it, if it ran at all
    source, tapes = _rerun_source(tmp_path, marker)
    proc = _decathlon("run", "rerun-me", "--source", str(source), "--cassettes", str(tapes), "--mode", "rerun",
                      "--policy", "replay", "--json", env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
    assert proc.returncode == 2 and "Docker engine is unreachable" in proc.stderr, (proc.stdout, proc.stderr)
    assert not marker.exists()


def test_h1_the_local_backend_refuses_a_rerun_it_cannot_isolate(monkeypatch):
    """Not root, the local backend runs the agent as the user: a rerun there is refused unless the user
    says the recording is trusted; as root it runs, each episode as unprivileged users of its own."""
    import argparse

    from decathlon.backends import local_users
    from decathlon.cli.run import _backend_for
    from decathlon.errors import InfraError
    ns = argparse.Namespace(backend="local", mode="rerun", trust_recorded_code=False)
    monkeypatch.setattr(local_users, "isolating", lambda: False)
    with pytest.raises(InfraError) as refused:
        _backend_for(ns)
    assert refused.value.kind == "usage" and "--trust-recorded-code" in refused.value.message
    assert _backend_for(argparse.Namespace(backend="local", mode="rerun", trust_recorded_code=True)) == "local"
    assert _backend_for(argparse.Namespace(backend=None, mode="rerun", trust_recorded_code=False)) == "compose"
    assert _backend_for(argparse.Namespace(backend=None, mode="live", trust_recorded_code=False)) == "local"
    monkeypatch.setattr(local_users, "isolating", lambda: True)
    assert _backend_for(ns) == "local"
