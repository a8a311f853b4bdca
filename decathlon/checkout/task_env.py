"""The task environment: the interpreter that runs a checkout's preprocess and evaluators, with the
checkout's own dependencies, installed from its `uv.lock` at the locked versions.

Only what the lock's root project reaches on this interpreter and platform is installed (markers
evaluated for the target Python, not ours). A package that cannot be installed here (no wheel or
sdist for this Python, a build that fails) is skipped and reported, never silently: its importers
then fail the grader preflight with a named `ModuleNotFoundError`.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from packaging.markers import InvalidMarker, Marker
from packaging.utils import canonicalize_name

from decathlon.checkout import wheelhouse
from decathlon.errors import InfraError, Kind

REPORT = "decathlon-task-env.json"
INSTALL_TIMEOUT = 1800.0
MAX_SKIPS = 40
# What the target interpreter says about itself, for evaluating the lock's markers as it would.
_ENV_PROBE = ("import json, os, platform, sys\n"
              "print(json.dumps({'implementation_name': sys.implementation.name, 'implementation_version': "
              "platform.python_version(), 'os_name': os.name, 'platform_machine': platform.machine(), "
              "'platform_python_implementation': platform.python_implementation(), 'platform_release': "
              "platform.release(), 'platform_system': platform.system(), 'platform_version': platform.version(), "
              "'python_full_version': platform.python_version(), "
              "'python_version': '.'.join(platform.python_version_tuple()[:2]), "
              "'sys_platform': sys.platform}))\n")
# The installer's words for a requirement it could not satisfy or build: uv's (which installs it), and pip's.
_NAME = r"([A-Za-z0-9_.\-]+)"
_PIP_FAILED = (re.compile(rf"there is no version of {_NAME}"),
               re.compile(rf"Because {_NAME}==\S+ has no"),
               re.compile(rf"and {_NAME}==\S+ depends on Python"),
               re.compile(rf"Failed to (?:download and )?build `{_NAME}"),
               re.compile(rf"No matching distribution found for {_NAME}"),
               re.compile(rf"Failed to build {_NAME}"),
               re.compile(rf"Could not find a version that satisfies the requirement {_NAME}"),
               re.compile(rf"Failed building wheel for {_NAME}"),
               re.compile(rf"metadata-generation-failed.*?\n.*?{_NAME}", re.S))
_WHY = ("ERROR", "error:", "×", "Because")


@dataclass
class TaskEnvReport:
    python: str
    python_version: str
    lock_sha256: str
    venv: str
    installed: list[str] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)  # {"package", "version", "why"}
    compiled: bool = False  # installed with its bytecode (an environment made before that is made again)

    def to_json(self) -> dict:
        return asdict(self)


def default_dir(lock_sha: str, python_version: str) -> Path:
    return env_base() / f"py{python_version}-{lock_sha[:12]}"


def env_base() -> Path:
    """Where task environments go. Root's own cache (/root, 0700) would be out of reach of the unprivileged
    users the local backend runs episodes as when it runs as root: root's go to /var/cache instead."""
    named = os.environ.get("DECATHLON_TASK_ENV_DIR")
    if named:
        return Path(named)
    if os.geteuid() == 0:
        return Path("/var/cache/decathlon/task-envs")
    return Path.home() / ".cache" / "decathlon" / "task-envs"


def probe(python: str) -> dict[str, str]:
    try:
        out = subprocess.run([python, "-c", _ENV_PROBE], capture_output=True, text=True, timeout=60, check=True)
        return json.loads(out.stdout)
    except FileNotFoundError:
        raise InfraError(Kind.BAD_PYTHON, f"no interpreter {python!r}: give --python the path of a Python "
                         "(≥ 3.12 for the evaluators that need it; Debian 13's python3.13 is one)") from None
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, ValueError) as exc:
        raise InfraError(Kind.BAD_PYTHON, f"{python} does not run as a Python interpreter: {exc}") from None


def read_lock(source: Path) -> tuple[dict, str]:
    path = source / "uv.lock"
    try:
        raw = path.read_bytes()
        return tomllib.loads(raw.decode("utf-8")), hashlib.sha256(raw).hexdigest()
    except FileNotFoundError:
        raise InfraError(Kind.BAD_SOURCE, f"{source} has no uv.lock: the task environment is built from the "
                         "checkout's own lock file") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InfraError(Kind.BAD_SOURCE, f"{path} is not a readable uv lock file: {exc}") from None


def _applies(dep: dict, env: dict[str, str]) -> bool:
    marker = dep.get("marker")
    if not marker:
        return True
    try:
        return Marker(marker).evaluate({**env, "extra": ""})
    except InvalidMarker:
        return True  # installing one package too many beats dropping a needed one


def locked_requirements(lock: dict, env: dict[str, str]) -> list[tuple[str, str]]:
    """(name, version) of every package the root project reaches here, in name order."""
    packages: dict[str, dict] = {canonicalize_name(p["name"]): p for p in lock.get("package") or [] if "name" in p}
    roots = [p for p in packages.values() if (p.get("source") or {}).get("virtual") is not None
             or (p.get("source") or {}).get("editable") is not None]
    if not roots:
        raise InfraError(Kind.BAD_SOURCE, "uv.lock has no root project (a `virtual` or `editable` source)")
    seen: set[str] = set()
    stack = [canonicalize_name(r["name"]) for r in roots]
    root_names = set(stack)
    while stack:
        name = stack.pop()
        if name in seen or name not in packages:
            continue
        seen.add(name)
        pkg = packages[name]
        deps = list(pkg.get("dependencies") or [])
        for dep in list(deps):
            for extra in dep.get("extra") or []:
                target = packages.get(canonicalize_name(dep["name"])) or {}
                deps.extend((target.get("optional-dependencies") or {}).get(extra) or [])
        stack.extend(canonicalize_name(d["name"]) for d in deps if "name" in d and _applies(d, env))
    return sorted((packages[n]["name"], str(packages[n]["version"])) for n in seen - root_names
                  if "version" in packages[n])


def _failed_package(output: str, wanted: dict[str, str]) -> str | None:
    for pattern in _PIP_FAILED:
        for match in pattern.finditer(output):
            name = canonicalize_name(match.group(1).split("==")[0])
            if name in wanted:
                return name
    return None


def build(source: Path, python: str, dest: Path | None, say: Callable[[str], None]) -> TaskEnvReport:
    lock, lock_sha = read_lock(source)
    env = probe(python)
    dest = dest or default_dir(lock_sha, env["python_full_version"])
    stamp = dest / REPORT
    if stamp.is_file():
        try:
            old = json.loads(stamp.read_text())
            if old.get("lock_sha256") == lock_sha and old.get("python_version") == env["python_full_version"] \
                    and old.get("compiled"):
                say(f"task environment up to date: {dest}")
                return TaskEnvReport(**old)
        except (ValueError, TypeError):
            pass
    reqs = locked_requirements(lock, env)
    wanted: dict[str, str] = {canonicalize_name(n): v for n, v in reqs}
    names: dict[str, str] = {canonicalize_name(n): n for n, _ in reqs}
    # The report is written last: a folder without it is an interrupted build, and is started over
    # (built in place because a venv's scripts carry its absolute path).
    if dest.exists() and any(dest.iterdir()) and not (dest / "pyvenv.cfg").is_file():
        raise InfraError(Kind.USAGE, f"{dest} exists and is not a task environment: name a new folder (it is "
                         "replaced when rebuilt)")
    shutil.rmtree(dest, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    say(f"creating {dest} with {python} ({env['python_full_version']}) …")
    # uv: no ensurepip, files linked from its cache; the wheelhouse's wheels (the image's, say) before PyPI's.
    try:
        uv = str(wheelhouse.uv_binary(say))
    except wheelhouse.WheelhouseError as exc:
        raise InfraError(Kind.TASK_ENV_FAILED, f"no uv to build the task environment with: {exc}") from None
    uv_env = {**os.environ, **wheelhouse.uv_env(offline=False)}
    subprocess.run([uv, "venv", "--quiet", "--python", python, str(dest)], check=True, timeout=120, env=uv_env)
    target = str(dest / "bin" / "python")
    skipped: list[dict] = []
    try:
        while wanted:  # a lock whose root needs nothing (stdlib-only scripts) installs nothing
            req_file = dest / "requirements.txt"
            req_file.write_text("".join(f"{names[k]}=={v}\n" for k, v in sorted(wanted.items())))
            say(f"installing {len(wanted)} locked packages into {dest} …")
            # With bytecode: preprocess and the evaluator run with PYTHONDONTWRITEBYTECODE, and would otherwise
            # compile pandas and Google's clients at every start (3 s a process).
            proc = subprocess.run([uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", target, "--no-deps",
                                   "-r", str(req_file)], capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
                                  env=uv_env)
            if proc.returncode == 0:
                break
            output = proc.stdout + proc.stderr
            bad = _failed_package(output, wanted)
            if bad is None or len(skipped) >= MAX_SKIPS:
                raise InfraError(Kind.TASK_ENV_FAILED, f"uv could not install the task environment: "
                                 f"{output.strip()[-1500:]}")
            why = next((line.strip() for line in output.splitlines() if any(w in line for w in _WHY)), "uv failed")
            skipped.append({"package": names[bad], "version": wanted.pop(bad), "why": why[:300]})
            say(f"skipping {names[bad]}: {why[:200]}")
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    report = TaskEnvReport(python=python, python_version=env["python_full_version"], lock_sha256=lock_sha,
                           venv=str(dest), installed=[f"{names[k]}=={v}" for k, v in sorted(wanted.items())],
                           skipped=skipped, compiled=True)
    tmp = dest / (REPORT + ".tmp")
    tmp.write_text(json.dumps(report.to_json(), indent=2))
    os.replace(tmp, stamp)
    return report

