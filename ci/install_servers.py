#!/usr/bin/env python3
"""Install the real MCP servers our fixture tasks use, each in its own virtualenv.

They pin different `mcp` versions from ours and from each other, so each gets an isolated env
under $DECATHLON_SERVERS_DIR (default: .servers/ in the checkout), built from the exact pins in
ci/servers/<name>.txt. A stamp of those pins makes a second run instant (and offline).

It also installs the HTTP record/replay shim (vcrpy and its dependencies, pinned in
ci/http-shim.txt) as a plain directory, $DECATHLON_SERVERS_DIR/_http, that decathlon/sandbox/http's
sitecustomize appends to the sys.path of any process it records or replays (docs/http-cassettes.md).
"""
from __future__ import annotations

import compileall
import hashlib
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "ci" / "servers"
SHIM_PINS = ROOT / "ci" / "http-shim.txt"
SHIM_DIR = "_http"  # not a server: the leading underscore keeps it apart from ci/servers/*.txt names
SHIM_SITE = ROOT / "decathlon" / "sandbox" / "http" / "site"  # the sitecustomize every recorded/replayed process loads


def target_dir() -> Path:
    return Path(os.environ.get("DECATHLON_SERVERS_DIR") or ROOT / ".servers")


def required_python(pins: Path) -> tuple[int, int] | None:
    """A pins file may start with `# requires-python: >=3.12` (pdf-tools-mcp does not install on 3.11)."""
    first = (pins.read_text().splitlines() or [""])[0]
    m = re.match(r"#\s*requires-python:\s*>=\s*(\d+)\.(\d+)", first)
    return (int(m.group(1)), int(m.group(2))) if m else None


def newer_python(need: tuple[int, int]) -> str | None:
    """An interpreter of at least `need`: DECATHLON_SERVER_PYTHON, the portable Debian 13 Python
    (decathlon/checkout/portable_python.py; DECATHLON_PORTABLE_PYTHON_DIR), or python3.1x on PATH."""
    portable = Path(os.environ.get("DECATHLON_PORTABLE_PYTHON_DIR") or "/opt/decathlon/python3.13")
    candidates = [os.environ.get("DECATHLON_SERVER_PYTHON"), str(portable / "usr" / "bin" / "python3.13"),
                  shutil.which("python3.13"), shutil.which("python3.12")]
    for python in filter(None, candidates):
        try:
            out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True,
                                 text=True, timeout=30)
            if out.returncode == 0 and tuple(int(x) for x in out.stdout.split()) >= need:
                return python
        except (OSError, ValueError, subprocess.TimeoutExpired):
            continue
    return None


def install(name: str, pins: Path, dest: Path) -> bool:
    stamp = dest / ".pins-sha256"
    need = required_python(pins)
    python = sys.executable if need is None or sys.version_info[:2] >= need else newer_python(need)
    # The interpreter a venv is built on is part of what it is: another one (the project's venv made
    # again from Debian's python, say) means building it again.
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable)) if python == sys.executable else python
    want = hashlib.sha256(pins.read_bytes() + str(base).encode()).hexdigest()
    if stamp.is_file() and stamp.read_text().strip() == want:
        return False
    if python is None:
        print(f"skipping MCP server {name!r}: it needs Python >= {need[0]}.{need[1]} and there is none here "
              "(`python -m decathlon.checkout.portable_python` builds one from Debian 13 packages); episodes that need it "
              "are told so", flush=True)
        return False
    print(f"installing MCP server {name!r} into {dest} …", flush=True)
    if python == sys.executable:
        venv.EnvBuilder(with_pip=True, clear=True).create(dest)
        cmd = [str(dest / "bin" / "python"), "-m", "pip"]
    else:
        # Another interpreter's venv, filled by a pip that runs under it: ours (`pip --python`), or a pip
        # wheel named in DECATHLON_PIP_WHEEL where ours is gone (the image removes pip from its venvs).
        shutil.rmtree(dest, ignore_errors=True)
        subprocess.run([python, "-m", "venv", "--without-pip", str(dest)], check=True, timeout=300)
        wheel = os.environ.get("DECATHLON_PIP_WHEEL")
        cmd = ([str(dest / "bin" / "python"), f"{wheel}/pip"] if wheel
               else [sys.executable, "-m", "pip", "--python", str(dest / "bin" / "python")])
    subprocess.run([*cmd, "install", "--quiet", "--disable-pip-version-check", "--no-deps", "-r", str(pins)],
                   check=True, timeout=900)
    stamp.write_text(want)
    return True


PROJECT_MARK = "# imports: decathlon"
PROJECT_PTH = "decathlon-src.pth"


def add_project(pins: Path, dest: Path) -> None:
    """A pins file with the line `# imports: decathlon` is the venv of our own code run on other pins than the
    sandbox's (a stand-in, the SaaS emulators): the project's root goes on its sys.path through a .pth, after its
    own site-packages, so its pins are never shadowed. The root is this script's (in the image, /opt/decathlon/src,
    where decathlon/ is copied beside ci/)."""
    if PROJECT_MARK not in pins.read_text().splitlines():
        return
    for site in sorted(dest.glob("lib/python3*/site-packages")):
        pth = site / PROJECT_PTH
        if not pth.is_file() or pth.read_text().strip() != str(ROOT):
            pth.write_text(f"{ROOT}\n")


def install_shim(pins: Path, dest: Path) -> bool:
    """pip install --target: a bare directory any same-version interpreter can add to sys.path.

    Built next to `dest` and swapped in, so a process starting meanwhile never sees half of it.
    """
    stamp = dest / ".pins-sha256"
    want = hashlib.sha256(pins.read_bytes()).hexdigest()
    if stamp.is_file() and stamp.read_text().strip() == want:
        return False
    print(f"installing the HTTP shim into {dest} …", flush=True)
    fresh = dest.with_name(dest.name + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
           "--target", str(fresh), "-r", str(pins)]
    subprocess.run(cmd, check=True, timeout=900)
    (fresh / ".pins-sha256").write_text(want)
    shutil.rmtree(dest, ignore_errors=True)
    fresh.rename(dest)
    return True


# Files a server writes beside its own package: shared by every episode's copy of the server, and not
# writable by the unprivileged users the local backend runs episodes as (as root). Sent nowhere instead
# (the image points them at the container's own /tmp).
BESIDE_PACKAGE = {"excel": "lib/python3.11/excel-mcp.log"}


def route_package_writes(dest_root: Path) -> None:
    for name, rel in sorted(BESIDE_PACKAGE.items()):
        path = dest_root / name / rel
        if path.parent.is_dir() and not (path.is_symlink() and os.readlink(path) == os.devnull):
            path.unlink(missing_ok=True)
            path.symlink_to(os.devnull)


def main() -> int:
    dest_root = target_dir()
    dest_root.mkdir(parents=True, exist_ok=True)
    names = sorted(p.stem for p in PINS.glob("*.txt"))
    try:
        changed = [n for n in names if install(n, PINS / f"{n}.txt", dest_root / n)]
        for n in names:
            add_project(PINS / f"{n}.txt", dest_root / n)
        if install_shim(SHIM_PINS, dest_root / SHIM_DIR):
            changed.append(SHIM_DIR)
        route_package_writes(dest_root)
        # Fresh .pyc files: with PYTHONDONTWRITEBYTECODE set, a stale one means every child process
        # compiles sitecustomize again (~1.5 ms instead of ~0.2 ms per start). Only stale ones are rewritten.
        compileall.compile_dir(SHIM_SITE, quiet=1)
    except subprocess.CalledProcessError as exc:
        print(f"error: installing an MCP server failed ({exc}); pip needs PyPI for a first install", file=sys.stderr)
        return 1
    print(f"MCP servers ready in {dest_root}: {', '.join(names)}" + (f" (installed {', '.join(changed)})" if changed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
