"""The task environment (`decathlon task-env`): what a checkout's uv.lock says to install on a given
interpreter, and the portable Python 3.13 its scripts need where the machine has 3.11."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from decathlon.checkout import portable_python
from decathlon.errors import InfraError
from decathlon.checkout.task_env import _failed_package, locked_requirements, read_lock

PACK = REPO / "fixtures" / "toolathlon-conventions"
PY311 = {"python_version": "3.11", "python_full_version": "3.11.7", "sys_platform": "linux", "os_name": "posix",
         "platform_system": "Linux", "platform_machine": "x86_64", "implementation_name": "cpython",
         "platform_python_implementation": "CPython", "implementation_version": "3.11.7", "platform_release": "",
         "platform_version": ""}
PY313 = {**PY311, "python_version": "3.13", "python_full_version": "3.13.5", "implementation_version": "3.13.5"}
# Written from scratch in uv's lock format: a root project, a marker-guarded dependency, an extra.
LOCK = """
version = 1
requires-python = ">=3.11"

[[package]]
name = "root-project"
version = "0.1.0"
source = { virtual = "." }
dependencies = [
    { name = "pandas" },
    { name = "colorama", marker = "sys_platform == 'win32'" },
    { name = "tomli", marker = "python_full_version < '3.12'" },
    { name = "httpx", extra = ["http2"] },
]

[[package]]
name = "pandas"
version = "2.2.3"
source = { registry = "https://pypi.org/simple" }
dependencies = [{ name = "numpy" }]

[[package]]
name = "numpy"
version = "2.2.6"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "colorama"
version = "0.4.6"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "tomli"
version = "2.2.1"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "httpx"
version = "0.28.1"
source = { registry = "https://pypi.org/simple" }

[package.optional-dependencies]
http2 = [{ name = "h2" }]

[[package]]
name = "h2"
version = "4.2.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "unreached"
version = "1.0"
source = { registry = "https://pypi.org/simple" }
"""


def _lock(tmp_path: Path) -> dict:
    (tmp_path / "uv.lock").write_text(LOCK)
    return read_lock(tmp_path)[0]


def test_the_lock_is_walked_from_its_root_with_markers_for_the_target_python(tmp_path):
    lock = _lock(tmp_path)
    assert locked_requirements(lock, PY311) == [("h2", "4.2.0"), ("httpx", "0.28.1"), ("numpy", "2.2.6"),
                                                ("pandas", "2.2.3"), ("tomli", "2.2.1")]
    # tomli only below 3.12, colorama only on Windows, `unreached` by nothing.
    assert [n for n, _ in locked_requirements(lock, PY313)] == ["h2", "httpx", "numpy", "pandas"]


def test_a_lock_without_a_root_or_a_source_without_a_lock_is_named(tmp_path):
    with pytest.raises(InfraError) as err:
        read_lock(tmp_path)
    assert err.value.kind == "bad_source" and "uv.lock" in err.value.message
    (tmp_path / "uv.lock").write_text('version = 1\n[[package]]\nname = "x"\nversion = "1"\n')
    with pytest.raises(InfraError) as err:
        locked_requirements(read_lock(tmp_path)[0], PY311)
    assert "root project" in err.value.message
    (tmp_path / "uv.lock").write_text("this is [not toml")
    with pytest.raises(InfraError) as err:
        read_lock(tmp_path)
    assert err.value.kind == "bad_source"


@pytest.mark.parametrize("output,expected", [
    ("ERROR: Could not find a version that satisfies the requirement snowflake==1.0 (from versions: none)\n"
     "ERROR: No matching distribution found for snowflake==1.0", "snowflake"),
    ("error: subprocess-exited-with-error\n  Failed to build Weird_Pkg\nERROR: ...", "weird-pkg"),
    ("ERROR: Something unrelated happened", None),
    # uv's words (it installs the task environment)
    ("  × No solution found when resolving dependencies:\n  ╰─▶ Because there is no version of snowflake==1.0 and "
     "you require snowflake==1.0, we can conclude that your requirements are unsatisfiable.", "snowflake"),
    ("  ╰─▶ Because weird-pkg==2.0 has no wheels with a matching Python ABI tag (e.g., `cp313`) and you require "
     "weird-pkg==2.0, we can conclude that your requirements are unsatisfiable.", "weird-pkg"),
    ("  × Failed to build `Weird_Pkg==2.0`\n  ├─▶ The build backend returned an error", "weird-pkg"),
])
def test_the_package_the_installer_could_not_install_is_found_in_its_output(output, expected):
    assert _failed_package(output, {"snowflake": "1.0", "weird-pkg": "2.0"}) == expected


def test_task_env_on_a_missing_interpreter_is_named(tmp_path):
    shutil.copytree(PACK, tmp_path / "pack")
    proc = subprocess.run([sys.executable, "-m", "decathlon", "task-env", "--source", str(tmp_path / "pack"),
                           "--python", str(tmp_path / "no-python"), "--dir", str(tmp_path / "env")],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "no interpreter" in proc.stderr and "Traceback" not in proc.stderr


# --- Python 3.13 (portable, from Debian 13 packages; ci/test builds it) ------------------------------------

REQUIRED = os.environ.get("DECATHLON_REQUIRE_PY313") == "1"
PY313_BIN = portable_python.interpreter(portable_python.default_dir())
HOW = (f"no portable Python 3.13 at {PY313_BIN}: build it with `python -m decathlon.checkout.portable_python` "
       "(mmdebstrap and patchelf from Debian; ci/test does it when run as root)")


@pytest.fixture
def py313() -> Path:
    if not PY313_BIN.exists():
        pytest.fail(HOW) if REQUIRED else pytest.skip(HOW)
    return PY313_BIN


def test_the_portable_python_runs_here_with_its_own_libraries(py313, tmp_path):
    out = subprocess.run([str(py313), "-c", "import ssl, sqlite3, ctypes, sys; print(*sys.version_info[:2])"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.split() == ["3", "13"], out.stderr
    # Its venvs and its subprocesses (sys.executable) run too: that is what the task scripts do.
    subprocess.run([str(py313), "-m", "venv", "--without-pip", str(tmp_path / "v")], check=True, timeout=120)
    child = subprocess.run([str(tmp_path / "v" / "bin" / "python"), "-c",
                            "import subprocess, sys; print(subprocess.run([sys.executable, '-c', 'print(42)'], "
                            "capture_output=True, text=True).stdout.strip())"], capture_output=True, text=True, timeout=60)
    assert child.stdout.strip() == "42", child.stderr


def test_a_task_env_on_313_runs_the_312_evaluator_the_host_python_cannot(py313, tmp_path):
    pack = tmp_path / "pack"
    shutil.copytree(PACK, pack)
    before = sorted(p.name for p in pack.rglob("*"))
    built = subprocess.run([sys.executable, "-m", "decathlon", "task-env", "--source", str(pack), "--python",
                            str(py313), "--dir", str(tmp_path / "env"), "--json"], cwd=REPO, capture_output=True,
                           text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    report = json.loads(built.stdout)
    assert report["python_version"].startswith("3.13") and report["installed"] == [] and report["skipped"] == []
    env = {**os.environ, "DECATHLON_TASK_PYTHON": str(tmp_path / "env" / "bin" / "python")}
    run = subprocess.run([sys.executable, "-m", "decathlon", "run", "--all", "--source", str(pack), "--policy",
                          "oracle", "--json"], cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    rows = {r["task"]: r for r in map(json.loads, filter(None, run.stdout.splitlines()))}
    assert rows["fstring-report"]["pass"] is True and rows["fstring-report"]["infra_error"] is None, rows
    assert rows["notes-index"]["pass"] is True, rows
    assert sorted(p.name for p in pack.rglob("*")) == before


def test_task_env_never_replaces_a_folder_that_is_not_one(tmp_path):
    shutil.copytree(PACK, tmp_path / "pack")
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    proc = subprocess.run([sys.executable, "-m", "decathlon", "task-env", "--source", str(tmp_path / "pack"),
                           "--dir", str(precious)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "is not a task environment" in proc.stderr, proc.stderr
    assert (precious / "thesis.tex").read_text() == "years of work"
