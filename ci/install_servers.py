#!/usr/bin/env python3
"""Install the real MCP servers our fixture tasks use, each in its own virtualenv.

They pin different `mcp` versions from ours and from each other, so each gets an isolated env
under $DECATHLON_SERVERS_DIR (default: .servers/ in the checkout), built from the exact pins in
ci/servers/<name>.txt, by uv (several at once, no ensurepip, files linked from uv's cache) from the
machine's wheelhouse (decathlon/checkout/wheelhouse.py: PyPI once per machine, then no index). A stamp of
those pins makes a second run instant (and offline). Each venv is built once per machine, in a cache beside the
wheelhouse keyed by that stamp, and a clone gets a hard-linked copy of it (venv_cache, link_copy).
`install_servers.py NAME...` installs only those (the image builds each server in a stage of its own).

It also installs the HTTP record/replay shim (vcrpy and its dependencies, pinned in
ci/http-shim.txt) as a plain directory, $DECATHLON_SERVERS_DIR/_http, that decathlon/sandbox/http's
sitecustomize appends to the sys.path of any process it records or replays (docs/http-cassettes.md).
"""
from __future__ import annotations

import compileall
import concurrent.futures
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "ci" / "servers"
SHIM_PINS = ROOT / "ci" / "http-shim.txt"
SHIM_DIR = "_http"  # not a server: the leading underscore keeps it apart from ci/servers/*.txt names
SHIM_SITE = ROOT / "decathlon" / "sandbox" / "http" / "site"  # the sitecustomize every recorded/replayed process loads
PARALLEL = 3


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


def installer(sets: list[tuple[str, Path, str]]) -> tuple[str, dict[str, str]]:
    """uv, and the environment it installs these (name, pins, python) sets with. Named from outside (the image's
    build sets UV and UV_FIND_LINKS, the wheels it holds), or else the host's wheelhouse: the sets' wheels are
    fetched once per machine (decathlon/checkout/wheelhouse.py), then read with no index."""
    if os.environ.get("UV_FIND_LINKS"):
        uv = os.environ.get("UV") or shutil.which("uv")
        if not uv:
            raise SystemExit("error: UV_FIND_LINKS is set but there is no uv (UV=… or on PATH)")
        return uv, {}
    sys.path.insert(0, str(ROOT))
    from decathlon.checkout import wheelhouse

    def say(line: str) -> None:
        print(f"[wheelhouse] {line}", flush=True)
    wanted = [wheelhouse.PinSet(f"server-{n}" if n != SHIM_DIR else "http-shim", p.read_text(), py) for n, p, py in sets]
    try:
        uv = str(wheelhouse.uv_binary(say))
        wheelhouse.fill(wanted, say)
    except wheelhouse.WheelhouseError as exc:
        raise SystemExit(f"error: {exc}") from None
    return uv, wheelhouse.uv_env()


def run(argv: list[str], env: dict[str, str]) -> None:
    proc = subprocess.run(argv, env={**os.environ, **env}, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])} … failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")


def resolve_as(python: str) -> list[str]:
    """uv's --python-version where the image asks for it (DECATHLON_UV_PYTHON_VERSION): Debian 12's python is 3.11.2,
    and a few pure-Python pins (soupsieve 4.1.2) declare >=3.11.5 without needing it. Only for that interpreter's
    minor version (not the 3.13 of another server)."""
    version = os.environ.get("DECATHLON_UV_PYTHON_VERSION")
    if not version or (python != sys.executable) or version.split(".")[:2] != [str(x) for x in sys.version_info[:2]]:
        return []
    return ["--python-version", version]


def server_python(pins: Path) -> tuple[str | None, tuple[int, int] | None]:
    need = required_python(pins)
    return (sys.executable if need is None or sys.version_info[:2] >= need else newer_python(need)), need


# Every venv is installed with its bytecode: the servers, stand-ins and emulators run with PYTHONDONTWRITEBYTECODE, so
# a venv without it compiles what they import at every start (aiohttp alone: 0.4 s). Part of the stamp, so that a venv
# installed before without it is installed again.
COMPILED = b"\0compiled"


def stamp_of(pins: Path, python: str) -> str:
    # The interpreter a venv is built on is part of what it is: another one (the project's venv made
    # again from Debian's python, say) means building it again.
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable)) if python == sys.executable else python
    return hashlib.sha256(pins.read_bytes() + str(base).encode() + COMPILED).hexdigest()


def up_to_date(pins: Path, dest: Path, python: str | None) -> bool:
    stamp = dest / ".pins-sha256"
    return python is not None and stamp.is_file() and stamp.read_text().strip() == stamp_of(pins, python)


def build(pins: Path, dest: Path, python: str, uv: str, env: dict[str, str]) -> None:
    # uv: no ensurepip, no pip in the venv (nothing here installs into it later), files linked from uv's cache.
    shutil.rmtree(dest, ignore_errors=True)
    run([uv, "venv", "--quiet", "--python", python, str(dest)], env)
    run([uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", str(dest / "bin" / "python"), "--no-deps",
         *resolve_as(python), "-r", str(pins)], env)
    (dest / ".pins-sha256").write_text(stamp_of(pins, python))


def venv_cache() -> Path | None:
    """Where built server venvs are kept for every clone on this machine ($DECATHLON_SERVER_VENVS, else beside the
    wheelhouse: $XDG_CACHE_HOME/decathlon/server-venvs; `0` turns it off). Not in an image's build, whose stages
    are its cache."""
    named = os.environ.get("DECATHLON_SERVER_VENVS")
    if named == "0" or os.environ.get("UV_FIND_LINKS"):
        return None
    if named:
        return Path(named)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "decathlon" / "server-venvs"


BUILT_AT = ".built-at"


def cached(pins: Path, built: Path, python: str) -> bool:
    """A venv of these pins in the cache, with the note of where uv built it (link_copy needs it)."""
    return up_to_date(pins, built, python) and (built / BUILT_AT).is_file()


def link_copy(built: Path, dest: Path) -> None:
    """`dest` as a copy of the venv `built`, its files hard links (a copy where the two are on different file
    systems): a fresh clone gets every server in a second instead of installing and compiling each (about a
    minute of two cores). The scripts in bin/ name their interpreter by its absolute path: those few are written
    anew for `dest`, never edited through a link."""
    fresh = dest.with_name(f".{dest.name}.{os.getpid()}")
    shutil.rmtree(fresh, ignore_errors=True)
    old = (built / BUILT_AT).read_bytes()  # the folder uv wrote the scripts for (renamed into the cache since)
    try:
        subprocess.run(["cp", "-al", str(built), str(fresh)], check=True, capture_output=True, timeout=300)
    except subprocess.CalledProcessError:
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.copytree(built, fresh, symlinks=True)
    new = str(dest).encode()
    for script in sorted((fresh / "bin").iterdir()):
        if script.is_symlink() or not script.is_file():
            continue
        data = script.read_bytes()
        if old in data:
            mode = script.stat().st_mode
            script.unlink()
            script.write_bytes(data.replace(old, new))
            script.chmod(mode)
    shutil.rmtree(dest, ignore_errors=True)
    fresh.rename(dest)


def install(name: str, pins: Path, dest: Path, uv: str, env: dict[str, str]) -> bool:
    python, need = server_python(pins)
    if python is None:
        assert need is not None
        print(f"skipping MCP server {name!r}: it needs Python >= {need[0]}.{need[1]} and there is none here "
              "(`python -m decathlon.checkout.portable_python` builds one from Debian 13 packages); episodes that need it "
              "are told so", flush=True)
        return False
    if up_to_date(pins, dest, python):
        return False
    began = time.monotonic()
    cache = venv_cache()
    if cache is not None:
        try:
            cache.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            print(f"the server venv cache {cache} cannot be made ({exc.strerror}): building {name!r} in the clone",
                  flush=True)
            cache = None
    if cache is None:
        print(f"installing MCP server {name!r} into {dest} …", flush=True)
        build(pins, dest, python, uv, env)
        print(f"installed MCP server {name!r} in {time.monotonic() - began:.1f} s", flush=True)
        return True
    built = cache / f"{name}-{stamp_of(pins, python)[:16]}"
    if not cached(pins, built, python):
        print(f"installing MCP server {name!r} into {built} …", flush=True)
        # Built aside and renamed in: another clone's run reading the cache never sees half a venv.
        fresh = cache / f".{built.name}.{os.getpid()}"
        build(pins, fresh, python, uv, env)
        (fresh / BUILT_AT).write_text(str(fresh))
        try:
            fresh.rename(built)
        except OSError:  # built meanwhile by another run: the same pins, the same venv
            shutil.rmtree(fresh, ignore_errors=True)
            if not cached(pins, built, python):
                raise RuntimeError(f"{built} is there but holds no venv of these pins: remove it") from None
    link_copy(built, dest)
    print(f"installed MCP server {name!r} in {time.monotonic() - began:.1f} s (from {built})", flush=True)
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
            pth.unlink(missing_ok=True)  # written anew: never through a link into the machine's cached venv
            pth.write_text(f"{ROOT}\n")


def shim_up_to_date(pins: Path, dest: Path) -> bool:
    stamp = dest / ".pins-sha256"
    return stamp.is_file() and stamp.read_text().strip() == hashlib.sha256(pins.read_bytes() + COMPILED).hexdigest()


def install_shim(pins: Path, dest: Path, uv: str, env: dict[str, str]) -> bool:
    """uv pip install --target: a bare directory any same-version interpreter can add to sys.path.

    Built next to `dest` and swapped in, so a process starting meanwhile never sees half of it.
    """
    if shim_up_to_date(pins, dest):
        return False
    want = hashlib.sha256(pins.read_bytes() + COMPILED).hexdigest()
    print(f"installing the HTTP shim into {dest} …", flush=True)
    fresh = dest.with_name(dest.name + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    run([uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", sys.executable, "--no-deps",
         *resolve_as(sys.executable), "--target", str(fresh), "-r", str(pins)], env)
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


def main(argv: list[str]) -> int:
    """`install_servers.py [NAME...]`: those servers (`_http`: the shim), or all of them and the shim."""
    dest_root = target_dir()
    dest_root.mkdir(parents=True, exist_ok=True)
    every = sorted(p.stem for p in PINS.glob("*.txt"))
    asked = argv or [*every, SHIM_DIR]
    unknown = sorted(set(asked) - {*every, SHIM_DIR})
    if unknown:
        print(f"error: no pins for {', '.join(unknown)} in {PINS}", file=sys.stderr)
        return 2
    names = [n for n in every if n in asked]
    todo = [(n, PINS / f"{n}.txt", server_python(PINS / f"{n}.txt")[0]) for n in names]
    todo = [(n, p, py) for n, p, py in todo if py is not None and not up_to_date(p, dest_root / n, py)]
    shim = SHIM_DIR in asked
    if shim and not shim_up_to_date(SHIM_PINS, dest_root / SHIM_DIR):
        todo.append((SHIM_DIR, SHIM_PINS, sys.executable))
    try:
        uv, env = installer(todo) if todo else ("uv", {})
        # Venvs side by side: each is mostly waiting on files; uv's cache is shared and locked.
        with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
            jobs = {n: pool.submit(install, n, PINS / f"{n}.txt", dest_root / n, uv, env) for n in names}
            changed = [n for n, job in jobs.items() if job.result()]
        for n in names:
            add_project(PINS / f"{n}.txt", dest_root / n)
        if shim and install_shim(SHIM_PINS, dest_root / SHIM_DIR, uv, env):
            changed.append(SHIM_DIR)
        route_package_writes(dest_root)
        if shim and SHIM_SITE.is_dir():  # (the image's shim stage has no sources: it compiles them later)
            # Fresh .pyc files: with PYTHONDONTWRITEBYTECODE set, a stale one means every child process
            # compiles sitecustomize again (~1.5 ms instead of ~0.2 ms per start). Only stale ones are rewritten.
            compileall.compile_dir(SHIM_SITE, quiet=1)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        print(f"error: installing an MCP server failed ({exc})", file=sys.stderr)
        return 1
    print(f"MCP servers ready in {dest_root}: {', '.join(names)}" + (f" (installed {', '.join(changed)})" if changed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
