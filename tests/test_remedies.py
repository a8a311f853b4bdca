"""Each mistake names its own fix: a rerun without cassettes says how to import them, an imported cassette
replayed on a checkout says to rerun or to use its import, a checkout's script in the plain sandbox image
says to build the image that carries the checkout."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import MINI, REPO
from decathlon.sandbox import subproc


def decathlon(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "decathlon", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_a_rerun_without_cassettes_says_to_import_them(tmp_path):
    proc = decathlon("run", "csv-sales-summary", "--source", str(MINI), "--mode", "rerun", "--policy", "replay",
                     "--backend", "local", "--trust-recorded-code", "--cassettes", str(tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert "import-trajectories" in proc.stderr and "decathlon record" not in proc.stderr, proc.stderr


def test_an_imported_cassette_replayed_on_a_task_source_says_rerun_or_use_the_import(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "csv-sales-summary.json").write_text(json.dumps({"pass": True, "messages": [
        {"role": "user", "content": "go"}, {"role": "assistant", "content": "done"}]}))
    assert decathlon("cassettes", "import-trajectories", str(runs), "--out", str(tmp_path / "imp")).returncode == 0
    proc = decathlon("run", "csv-sales-summary", "--source", str(MINI), "--policy", "replay", "--cassettes",
                     str(tmp_path / "imp" / "cassettes"), "--json")
    err = json.loads(proc.stdout)["infra_error"]
    assert err["kind"] == "cassette_mismatch", err
    assert "--mode rerun" in err["message"] and "--source IMPORT_DIR" in err["message"], err
    assert "run/cassette.json" not in err["message"] and "re-record" not in err["message"], err


def test_a_missing_module_in_the_sandbox_image_names_the_checkout_image(monkeypatch):
    output = "Traceback (most recent call last):\nModuleNotFoundError: No module named 'google.oauth2'\n"
    monkeypatch.delenv(subproc.IN_IMAGE, raising=False)
    assert "decathlon task-env" in subproc.missing_module_hint(output)
    monkeypatch.setenv(subproc.IN_IMAGE, "1")
    monkeypatch.delenv("DECATHLON_TASK_PYTHON", raising=False)
    hint = subproc.missing_module_hint(output)
    assert "image build --source" in hint and "DECATHLON_IMAGE" in hint and "task-env" not in hint
    monkeypatch.setenv("DECATHLON_TASK_PYTHON", "/opt/decathlon/task-env/bin/python")  # the checkout image
    assert "decathlon task-env" in subproc.missing_module_hint(output)


def test_task_env_without_python_never_builds_on_one_the_checkout_cannot_run(tmp_path):
    """A checkout that asks for Python >= 3.12, on a 3.11 host: task-env picks a new enough one and says so."""
    from decathlon.checkout import portable_python
    from decathlon.cli.task_env import default_python
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nrequires-python = "==3.12.11"\n')
    said: list[str] = []
    chosen = default_python(tmp_path, said.append, current=(3, 11))
    assert chosen in ("3.12", portable_python.VERSION) and said and ">= 3.12" in said[0]
    assert default_python(tmp_path, said.append, current=(3, 13)) == sys.executable
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')  # says nothing: this interpreter
    assert default_python(tmp_path, said.append, current=(3, 11)) == sys.executable


def test_an_import_says_at_once_that_it_only_replays(tmp_path):
    """A live policy on an import fails at once, naming a checkout as the way (it used to fail every rollout
    with unknown_server); replaying it still works."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "csv-sales-summary.json").write_text(json.dumps({"pass": True, "messages": [
        {"role": "user", "content": "go"}, {"role": "assistant", "content": "done"}]}))
    imp = tmp_path / "imp"
    assert decathlon("cassettes", "import-trajectories", str(runs), "--out", str(imp)).returncode == 0
    proc = decathlon("run", "--all", "--source", str(imp), "--policy", "null", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "only replays" in proc.stderr and "checkout" in proc.stderr, proc.stderr
    assert not (tmp_path / "o").exists() or not list((tmp_path / "o").rglob("result.json"))
    replayed = decathlon("run", "--all", "--source", str(imp), "--policy", "replay", "--json")
    assert replayed.returncode == 0 and json.loads(replayed.stdout)["pass"] is True, replayed.stderr

    import pytest
    from decathlon.training.env import DecathlonTaskset, DecathlonTasksetConfig
    with pytest.raises(ValueError, match="only replays"):
        list(DecathlonTaskset(DecathlonTasksetConfig(source=str(imp))).load())


def test_cassettes_diff_shows_what_was_recorded_differently_not_timing_noise(tmp_path):
    """Two recordings of the same calls differ in how long each took (and so in their seal): `diff` says they
    are identical; a changed answer is shown; --timings compares the timings too."""
    from decathlon.tape.store import load, save
    a = REPO / "fixtures" / "cassettes" / "csv-sales-summary.cassette.json"
    tape = load(a)
    for server in tape["servers"].values():
        for call in server["interactions"]:
            call["elapsed_ms"] = call.get("elapsed_ms", 0) + 17.5
    slower = tmp_path / "slower.cassette.json"
    save(slower, tape)
    same = decathlon("cassettes", "diff", str(a), str(slower))
    assert same.returncode == 0 and same.stdout.strip() == "identical", same.stdout[-2000:]
    assert decathlon("cassettes", "diff", str(a), str(slower), "--timings").returncode == 1
    first = next(iter(tape["servers"].values()))["interactions"][0]["result"]["content"][0]
    first["text"] = "answered otherwise"
    other = tmp_path / "other.cassette.json"
    save(other, tape)
    changed = decathlon("cassettes", "diff", str(a), str(other))
    assert changed.returncode == 1 and "answered otherwise" in changed.stdout and "elapsed_ms" not in changed.stdout
