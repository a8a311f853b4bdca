"""A Python ≥ 3.12 for a Python 3.11 machine, from Debian 13's packages, that runs in place.

Toolathlon pins Python 3.12 (five evaluators and the pdf-tools server do not run on 3.11); Debian 12
ships 3.11 and nothing newer can be pulled as an image here. Debian 13 (trixie) ships 3.13, but its
binaries need trixie's C library. So: a minimal trixie tree with python3.13 is bootstrapped
(mmdebstrap), and the interpreter is patched (patchelf) to use that tree's own dynamic loader and
libraries. It then runs on the host and in the bookworm sandbox image alike, its venvs and
subprocesses included (sys.executable is the patched binary). The loader path is absolute, so the tree
is patched for the folder it will live in (`for_path`), which may differ from where it is built.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

from decathlon.errors import InfraError, Kind

VERSION = "3.13"
SUITE = "trixie"
MIRROR = os.environ.get("DECATHLON_DEBIAN_MIRROR", "http://deb.debian.org/debian")
PACKAGES = (f"python{VERSION}", f"python{VERSION}-venv")
ARCH_LIBS = "usr/lib/x86_64-linux-gnu"
STAMP = ".decathlon-portable-python"
TIMEOUT = 900.0


def default_dir() -> Path:
    return Path(os.environ.get("DECATHLON_PORTABLE_PYTHON_DIR") or f"/opt/decathlon/python{VERSION}")


def interpreter(root: Path) -> Path:
    return root / "usr" / "bin" / f"python{VERSION}"


def _tool(name: str, package: str, say: Callable[[str], None]) -> str:
    found = shutil.which(name)
    if found:
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        say(f"installing {package} (apt-get) …")
        # The lock timeout: the image build, beside ci/test, may be installing mmdebstrap at the same moment.
        subprocess.run(["apt-get", "-o", "DPkg::Lock::Timeout=600", "install", "-y", "-qq", "--no-install-recommends",
                        package], check=False, capture_output=True, timeout=1200)
        found = shutil.which(name)
        if found:
            return found
    raise InfraError(Kind.PORTABLE_PYTHON, f"building a Python {VERSION} from Debian {SUITE} packages needs {name}: "
                     f"apt-get install {package}")


def _run(argv: list[str], what: str) -> None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise InfraError(Kind.PORTABLE_PYTHON, f"{what} ran over {TIMEOUT:.0f} s") from None
    if proc.returncode != 0:
        raise InfraError(Kind.PORTABLE_PYTHON, f"{what} failed (exit {proc.returncode}): {(proc.stderr or proc.stdout)[-1500:]}")


def build(dest: Path, for_path: Path | None = None, say: Callable[[str], None] = lambda _: None) -> Path:
    """The tree at `dest`, patched to run from `for_path` (default: `dest`); its interpreter's path."""
    for_path = for_path or dest
    stamp = dest / STAMP
    if stamp.is_file() and stamp.read_text().strip() == str(for_path):
        return interpreter(dest)
    if dest.exists() and any(dest.iterdir()) and not stamp.is_file():
        raise InfraError(Kind.USAGE, f"{dest} exists and is not a portable Python: name a new folder "
                         "(DECATHLON_PORTABLE_PYTHON_DIR)")
    mmdebstrap = _tool("mmdebstrap", "mmdebstrap", say)
    patchelf = _tool("patchelf", "patchelf", say)
    work = dest.with_name(dest.name + ".building")
    shutil.rmtree(work, ignore_errors=True)
    work.parent.mkdir(parents=True, exist_ok=True)
    say(f"bootstrapping python{VERSION} from Debian {SUITE} packages ({MIRROR}) into {work} …")
    _run([mmdebstrap, "--variant=minbase", f"--include={','.join(PACKAGES)}", "--quiet",
          "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/man/*",
          "--dpkgopt=path-exclude=/usr/share/locale/*", SUITE, str(work), MIRROR], "mmdebstrap")
    # Only what the interpreter needs: its binary, stdlib, and the libraries and loader of its tree.
    tree = dest.with_name(dest.name + ".tree")
    shutil.rmtree(tree, ignore_errors=True)
    (tree / "usr" / "bin").mkdir(parents=True)
    (tree / "usr" / "lib").mkdir(parents=True)
    (tree / "usr" / "share").mkdir(parents=True)
    shutil.copy2(work / "usr" / "bin" / f"python{VERSION}", tree / "usr" / "bin" / f"python{VERSION}")
    # usr/share/python-wheels: Debian's ensurepip takes pip from there (venvs with pip).
    for rel in (f"usr/lib/python{VERSION}", ARCH_LIBS, "usr/lib/python3", "usr/share/python-wheels"):
        if (work / rel).exists():
            shutil.copytree(work / rel, tree / rel, symlinks=True)
    shutil.copy2((work / "usr/lib64/ld-linux-x86-64.so.2").resolve(), tree / "ld.so")
    shutil.rmtree(work, ignore_errors=True)
    _run([patchelf, "--set-interpreter", str(for_path / "ld.so"), "--force-rpath", "--set-rpath",
          str(for_path / ARCH_LIBS), str(interpreter(tree))], "patchelf")
    (tree / STAMP).write_text(str(for_path))
    shutil.rmtree(dest, ignore_errors=True)
    tree.rename(dest)
    if for_path == dest:
        check(interpreter(dest))
    return interpreter(dest)


def check(python: Path) -> None:
    probe = subprocess.run([str(python), "-c", "import ssl, sqlite3, ctypes, venv, sys; print(sys.version)"],
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        raise InfraError(Kind.PORTABLE_PYTHON, f"{python} does not run: {probe.stderr[-800:]}")


def runs(python: str) -> bool:
    try:
        return subprocess.run([python, "-c", "pass"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def resolve(spec: str, say: Callable[[str], None]) -> str:
    """--python: a path or command as given, or a bare version such as "3.13": that interpreter if this
    machine has one, else the portable one (built on first use)."""
    if not spec.replace(".", "").isdigit():
        return spec
    on_path = shutil.which(f"python{spec}")
    if on_path and runs(on_path):  # a pyenv shim without that version installed does not
        return on_path
    if spec != VERSION:
        raise InfraError(Kind.BAD_PYTHON, f"no python{spec} on this machine, and the portable build is Python {VERSION}: "
                         f"pass --python {VERSION} or a path")
    return str(build(default_dir(), say=say))


if __name__ == "__main__":  # python -m decathlon.checkout.portable_python [DEST]
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else default_dir(), say=lambda s: print(s, file=sys.stderr)))
