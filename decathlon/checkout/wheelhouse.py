"""The wheelhouse: every pinned wheel the project installs, once per machine, outside any clone.

A venv installed from an index costs a resolution and a download per package, for each venv and each clone;
the image build used to rebuild wheels in the clone, whose bytes differed from one clone to the next (so its
layers missed the cache). Here each pin file is filled once (`pip wheel --no-deps`: PyPI's wheel where there
is one, else the sdist built with a fixed SOURCE_DATE_EPOCH) into one pool of files that are never
rewritten, and a manifest names the pool's files that satisfy it. Every installer (uv, for the host venvs,
the servers, task environments and the images) then reads the pool with no index.

    <cache>/pool/*.whl                         each file written once, never replaced
    <cache>/sets/<set>-<tag>-<hash>.txt        a filled pin file: the pool's files it installs, one a line
    <cache>/tools/uv-<version>/uv              the uv binary, from the pool's uv wheel

<cache> is $DECATHLON_WHEELHOUSE, else $XDG_CACHE_HOME/decathlon/wheelhouse (~/.cache/...). A manifest is keyed
by its pin file's bytes and the interpreter's tag (cp311, cp313): a change to one server's pins fills that
server alone, and a clone of the same tree finds everything filled.

Stdlib only: ci/test runs it (`python -m decathlon.checkout.wheelhouse`) before the project's venv exists.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import fcntl
import hashlib
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "ci" / "constraints.txt"
SERVER_PINS = ROOT / "ci" / "servers"
SHIM_PINS = ROOT / "ci" / "http-shim.txt"
# 1980-01-01, the earliest time a zip can hold: a wheel built from an sdist here is the same bytes every time
# (setuptools, flit and hatch take their files' dates from it).
SOURCE_DATE_EPOCH = "315532800"
FILL_TIMEOUT = 1800.0
# pip processes at once: downloads overlap, and two cores are enough for their resolution.
PARALLEL = 4
_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;#]+)")


class WheelhouseError(RuntimeError):
    """A pin file could not be filled (pip's own words, its tail, are the message)."""


def cache_dir() -> Path:
    named = os.environ.get("DECATHLON_WHEELHOUSE")
    if named:
        return Path(named)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "decathlon" / "wheelhouse"


def pool_dir() -> Path:
    return cache_dir() / "pool"


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned(text: str) -> dict[str, str]:
    """name → version of every `name==version` line (comments and markers aside)."""
    return {normalize(m.group(1)): m.group(2) for m in map(_PIN.match, text.splitlines()) if m}


def pinned_version(name: str, pins: Path = CONSTRAINTS) -> str:
    version = pinned(pins.read_text()).get(normalize(name))
    if version is None:
        raise WheelhouseError(f"{pins} pins no {name}")
    return version


def wheel_name(filename: str) -> str:
    """The distribution a wheel file installs (`Foo_Bar-1.0-py3-none-any.whl` → foo-bar)."""
    return normalize(filename.split("-", 1)[0])


@dataclass(frozen=True)
class PinSet:
    """One pin file (or pinned lines), installed --no-deps on one interpreter."""
    name: str
    text: str
    python: str  # the interpreter it is for; its tag (cp311) keys the manifest

    def key(self, tag: str) -> str:
        digest = hashlib.sha256(self.text.encode()).hexdigest()[:16]
        return f"{self.name}-{tag}-{digest}"


def python_tag(python: str) -> str:
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return f"cp{sys.version_info[0]}{sys.version_info[1]}"
    out = subprocess.run([python, "-c", "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')"],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise WheelhouseError(f"{python} does not run: {out.stderr.strip()[-500:]}")
    return out.stdout.strip()


def manifest_path(pin_set: PinSet, tag: str) -> Path:
    return cache_dir() / "sets" / f"{pin_set.key(tag)}.txt"


def files_of(pin_set: PinSet, tag: str | None = None) -> list[Path] | None:
    """The pool's files for this set, or None while it is not filled (or a file of it is gone)."""
    tag = tag or python_tag(pin_set.python)
    try:
        names = manifest_path(pin_set, tag).read_text().split()
    except FileNotFoundError:
        return None
    files = [pool_dir() / n for n in names]
    return files if all(f.is_file() for f in files) else None


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """One filler at a time per machine (two clones set up at once share the pool)."""
    cache_dir().mkdir(parents=True, exist_ok=True)
    with open(cache_dir() / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _pip(python: str) -> tuple[list[str], dict[str, str]]:
    """A pip run *by* `python` (argv, and what its environment adds): its own, else ours or our base interpreter's
    pip package put on its path (a venv made by uv has no pip, nor has the portable Python 3.13). Run by the target
    itself, not through `pip --python`, so that --ignore-requires-python applies to that interpreter."""
    probe = subprocess.run([python, "-c", "import pip"], capture_output=True, timeout=60)
    if probe.returncode == 0:
        return [python, "-m", "pip"], {}
    where = "import os, pip; print(os.path.dirname(os.path.dirname(pip.__file__)))"
    for runner in dict.fromkeys([sys.executable, getattr(sys, "_base_executable", sys.executable)]):
        found = subprocess.run([runner, "-c", where], capture_output=True, text=True, timeout=60)
        if found.returncode == 0 and found.stdout.strip():
            # pip alone on its path, from a folder of its own (not the whole site-packages of another Python).
            # Fills run in parallel: each copies into a folder of its own and the first to rename it wins.
            home = cache_dir() / "pip-for-others"
            if not (home / "pip").is_dir():
                cache_dir().mkdir(parents=True, exist_ok=True)
                partial = Path(tempfile.mkdtemp(prefix="pip-for-others-", dir=cache_dir()))
                shutil.copytree(Path(found.stdout.strip()) / "pip", partial / "pip")
                try:
                    os.replace(partial, home)
                except OSError:  # another fill got there first
                    shutil.rmtree(partial, ignore_errors=True)
            return [python, "-m", "pip"], {"PYTHONPATH": str(home)}
    raise WheelhouseError(f"no pip to fill the wheelhouse with (tried {python}, {sys.executable}): install python3-pip")


@dataclass(frozen=True)
class _Line:
    name: str  # normalized
    version: str
    text: str  # as the pin file says it (a marker included)


def _lines(text: str) -> list[_Line] | None:
    """The pins of a set, or None if a line is anything but a `name==version` pin (a URL, an option): such a set is
    filled on its own."""
    out = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        m = _PIN.match(line)
        if not m:
            return None
        out.append(_Line(normalize(m.group(1)), m.group(2), line))
    return out


def _chunks(lines: list[_Line], parts: int) -> list[list[_Line]]:
    """Requirement files with no name twice (pip refuses two versions of one name in one run), about even in size:
    each further version of a name (sets that pin it differently) goes to a later round."""
    rounds: list[list[_Line]] = []
    seen: dict[str, int] = {}
    unique: dict[tuple[str, str], _Line] = {}
    for x in sorted(lines, key=lambda x: (x.name, x.version, x.text)):
        unique.setdefault((x.name, x.version), x)
    for line in unique.values():
        r = seen.get(line.name, -1) + 1
        seen[line.name] = r
        while len(rounds) <= r:
            rounds.append([])
        rounds[r].append(line)
    out: list[list[_Line]] = []
    for batch in rounds:
        n = max(1, min(parts, len(batch) // 8))  # a pip process costs a second or so to start: no tiny chunks
        out.extend(batch[i::n] for i in range(n))
    return [c for c in out if c]


_NO_MATCH = re.compile(r"No matching distribution found for ([A-Za-z0-9_.\-]+)==([^\s;,]+)")
MAX_PURE_FALLBACKS = 20


def _pure_wheel(name: str, version: str, dest: Path, env: dict[str, str]) -> bool:
    """name==version as a pure-Python wheel (`-none-any`), fetched by our own interpreter's pip into `dest`: pip
    under a newer Python can refuse a release whose index entry narrows Requires-Python (snowflake 1.7.0: <3.13)
    even with --ignore-requires-python, where uv installed that very file for it. A pure wheel is the same file for
    every Python 3, so it is the one that installed; anything else is not taken."""
    pip, pip_env = _pip(getattr(sys, "_base_executable", sys.executable))
    with tempfile.TemporaryDirectory(prefix="pure-", dir=cache_dir()) as tmp:
        proc = subprocess.run([*pip, "download", "--quiet", "--disable-pip-version-check", "--no-deps",
                               "--only-binary", ":all:", "-d", tmp, f"{name}=={version}"],
                              capture_output=True, text=True, timeout=FILL_TIMEOUT, env={**env, **pip_env})
        wheels = [f for f in Path(tmp).glob("*.whl") if f.name.endswith("-none-any.whl")]
        if proc.returncode != 0 or len(wheels) != 1:
            return False
        dest.mkdir(parents=True, exist_ok=True)
        shutil.move(str(wheels[0]), dest / wheels[0].name)
        return True


def _pip_wheel(python: str, requirements: str, what: str) -> list[Path]:
    """`pip wheel --no-deps` of these lines into the pool: the pool's files they are."""
    pool = pool_dir()
    with tempfile.TemporaryDirectory(prefix="fill-", dir=cache_dir()) as tmp:
        pins = Path(tmp) / "pins.txt"
        lines = requirements.splitlines()
        out = Path(tmp) / "out"
        # --find-links: a wheel already in the pool is copied from it, not fetched again (pip takes a
        # find-links candidate before an index one of the same file).
        # --ignore-requires-python: every line is an exact pin a resolver already chose for this interpreter (our
        # pin files, or what uv installed from a checkout's uv.lock).
        pip, pip_env = _pip(python)
        env = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH, "PYTHONHASHSEED": "0", **pip_env}
        for _ in range(MAX_PURE_FALLBACKS + 1):
            pins.write_text("".join(f"{line}\n" for line in lines))
            argv = [*pip, "wheel", "--quiet", "--disable-pip-version-check", "--no-deps", "--ignore-requires-python",
                    "--find-links", str(pool), "-w", str(out), "-r", str(pins)]
            try:
                proc = subprocess.run(argv, capture_output=True, text=True, timeout=FILL_TIMEOUT, env=env)
            except subprocess.TimeoutExpired:
                raise WheelhouseError(f"filling {what} ran over {FILL_TIMEOUT:.0f} s") from None
            if proc.returncode == 0:
                break
            said = (proc.stderr or proc.stdout).strip()
            refused = _NO_MATCH.search(said)
            if refused is None or not _pure_wheel(refused.group(1), refused.group(2), out, env):
                raise WheelhouseError(f"pip could not fill {what} from PyPI: {said[-1500:]}")
            name = normalize(refused.group(1))
            lines = [line for line in lines if not (m := _PIN.match(line.split(" #", 1)[0].strip()))
                     or normalize(m.group(1)) != name]
        else:
            raise WheelhouseError(f"pip could not fill {what}: more than {MAX_PURE_FALLBACKS} pins refused")
        made = []
        for f in sorted(out.iterdir()) if out.is_dir() else []:
            target = pool / f.name
            if not target.exists():  # the first copy of a file stays: its bytes are what images were built on
                f.chmod(0o644)
                os.replace(f, target)
            made.append(target)
        return made


def _write_manifest(pin_set: PinSet, tag: str, files: list[Path]) -> None:
    manifest = manifest_path(pin_set, tag)
    manifest.parent.mkdir(parents=True, exist_ok=True)
    partial = manifest.with_suffix(".tmp")
    partial.write_text("".join(f"{f.name}\n" for f in sorted(files)))
    os.replace(partial, manifest)


def _fill(missing: list[PinSet], tags: dict[str, str], say: Callable[[str], None]) -> None:
    """The missing sets' pins, each (name, version, interpreter) fetched once however many sets pin it, by
    PARALLEL pip processes at a time; then each set's manifest from what they produced."""
    jobs: list[tuple[str, list[_Line], PinSet | None]] = []  # (python, its lines, or a whole set filled on its own)
    by_python: dict[str, list[_Line]] = {}
    for s in missing:
        lines = _lines(s.text)
        if lines is None:
            jobs.append((s.python, [], s))
        else:
            by_python.setdefault(s.python, []).extend(lines)
    for python, lines in by_python.items():
        jobs.extend((python, chunk, None) for chunk in _chunks(lines, PARALLEL))
    say(f"wheelhouse {cache_dir()}: fetching {sum(len(c) for _, c, _ in jobs)} pinned wheels for {len(missing)} pin "
        f"file(s) from PyPI ({len(jobs)} pip processes, {PARALLEL} at a time) …")
    produced: dict[tuple[str, str, str], Path] = {}  # (python, name, version) → the pool's file
    began = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
        futures = {}
        for python, chunk, whole in jobs:
            text = whole.text if whole else "".join(f"{line.text}\n" for line in chunk)
            what = whole.name if whole else f"{len(chunk)} pins ({tags[python]})"
            futures[pool.submit(_pip_wheel, python, text, what)] = (python, chunk, whole)
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            python, chunk, whole = futures[future]
            files = future.result()
            if whole:
                _write_manifest(whole, tags[python], files)
            else:
                # One file per pin (none where a marker leaves this interpreter out), named by what it installs.
                by_name = {wheel_name(f.name): f for f in files}
                for line in chunk:
                    if line.name in by_name:
                        produced[(python, line.name, line.version)] = by_name[line.name]
            say(f"  {done}/{len(jobs)} done ({time.monotonic() - began:.0f} s)")
    for s in missing:
        lines = _lines(s.text)
        if lines is not None:
            _write_manifest(s, tags[s.python], [produced[(s.python, x.name, x.version)] for x in lines
                                                if (s.python, x.name, x.version) in produced])


def fill(sets: list[PinSet], say: Callable[[str], None] = lambda _: None) -> dict[str, list[Path]]:
    """Every set filled (only the missing ones reach PyPI), as {set name: its pool files}."""
    tags = {s.python: python_tag(s.python) for s in sets}
    missing = [s for s in sets if files_of(s, tags[s.python]) is None]
    if missing:
        with _locked():
            missing = [s for s in missing if files_of(s, tags[s.python]) is None]  # another filler may have done it
            if missing:
                pool_dir().mkdir(parents=True, exist_ok=True)
                began = time.monotonic()
                _fill(missing, tags, say)
                say(f"wheelhouse filled in {time.monotonic() - began:.0f} s ({', '.join(s.name for s in missing)})")
    result = {}
    for s in sets:
        files = files_of(s, tags[s.python])
        if files is None:
            raise WheelhouseError(f"{s.name}: a file of its wheelhouse is gone ({cache_dir()}): it is filled again next time")
        result[s.name] = files
    return result


def required_python(text: str) -> tuple[int, int] | None:
    """A pins file may start with `# requires-python: >=3.12` (pdf-tools-mcp does not install on 3.11)."""
    m = re.match(r"#\s*requires-python:\s*>=\s*(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def project_set(python: str = sys.executable) -> PinSet:
    return PinSet("project", CONSTRAINTS.read_text(), python)


def shim_set(python: str = sys.executable) -> PinSet:
    return PinSet("http-shim", SHIM_PINS.read_text(), python)


def server_set(name: str, python: str) -> PinSet:
    return PinSet(f"server-{name}", (SERVER_PINS / f"{name}.txt").read_text(), python)


def python_version(python: str) -> tuple[int, int]:
    tag = python_tag(python)
    return int(tag[2]), int(tag[3:])


def server_sets(python: str = sys.executable, newer: str | None = None) -> list[PinSet]:
    """One set per server, on `python`; one that needs a newer Python on `newer`, or left out without it."""
    out = []
    for pins in sorted(SERVER_PINS.glob("*.txt")):
        need = required_python(pins.read_text())
        if need is None or python_version(python) >= need:
            out.append(server_set(pins.stem, python))
        elif newer:
            out.append(server_set(pins.stem, newer))
    return out


def uv_binary(say: Callable[[str], None] = lambda _: None) -> Path:
    """The pinned uv (ci/constraints.txt): the venv's own where it has the uv package, else taken out of the
    pool's uv wheel once (it is one static binary) into <cache>/tools."""
    version = pinned_version("uv")
    try:
        from uv import find_uv_bin  # type: ignore[import-not-found,unused-ignore]
        from importlib.metadata import version as installed
        if installed("uv") == version:
            return Path(find_uv_bin())
    except ImportError:
        pass
    target = cache_dir() / "tools" / f"uv-{version}" / "uv"
    if target.is_file():
        return target
    files = fill([PinSet("uv", f"uv=={version}\n", sys.executable)], say)["uv"]
    with zipfile.ZipFile(files[0]) as whl:
        member = next(n for n in whl.namelist() if n.endswith(".data/scripts/uv"))
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".tmp")
        with whl.open(member) as src, open(partial, "wb") as dst:
            shutil.copyfileobj(src, dst)
    partial.chmod(partial.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.replace(partial, target)
    return target


def uv_env(offline: bool = True) -> dict[str, str]:
    """The environment uv installs from the pool with: no index at all when `offline` (every pin is in it)."""
    env = {"UV_FIND_LINKS": str(pool_dir()), "UV_PYTHON_DOWNLOADS": "never", "UV_NO_PROGRESS": "1"}
    if offline:
        env.update(UV_NO_INDEX="1", UV_OFFLINE="1")
    return env


def main(argv: list[str] | None = None) -> int:
    """ci/test's entry: fill the host's sets, then print `NAME=VALUE` lines for its shell (the pool, uv)."""
    ap = argparse.ArgumentParser(prog="python -m decathlon.checkout.wheelhouse")
    ap.add_argument("what", choices=["project", "servers", "all"], help="the sets to fill")
    ap.add_argument("--newer-python", help="the interpreter of the servers that need a newer Python")
    ns = ap.parse_args(argv)

    def say(line: str) -> None:
        print(f"[wheelhouse] {line}", file=sys.stderr, flush=True)
    sets = [] if ns.what == "servers" else [project_set()]
    if ns.what != "project":
        sets += [*server_sets(sys.executable, ns.newer_python), shim_set()]
    try:
        uv = uv_binary(say)
        fill(sets, say)
    except WheelhouseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"UV={shlex.quote(str(uv))}")
    print(f"WHEELS={shlex.quote(str(pool_dir()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
