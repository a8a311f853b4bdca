"""The sandbox image's build context, assembled outside the clone: one tar in the machine's cache.

Its wheels are the wheelhouse's own files (decathlon/checkout/wheelhouse.py), grouped by pin set, so every
clone of the same pins sends the same bytes and each stage of docker/sandbox.Dockerfile hits the cache; every
entry's owner, mode and date are fixed, so nothing but content tells two contexts apart. Its layout is the
Dockerfile's header.
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from pathlib import Path
from typing import Callable

from decathlon.checkout import wheelhouse
from decathlon.errors import InfraError, Kind

ROOT = wheelhouse.ROOT
DOCKERFILE = ROOT / "docker" / "sandbox.Dockerfile"
# The sandbox side of the decathlon namespace: what task-api, the emulators and the stand-ins import.
SANDBOX_PACKAGES = ("decathlon/__init__.py", "decathlon/errors.py", "decathlon/contract", "decathlon/tape",
                    "decathlon/emulators", "decathlon/standins", "decathlon/sandbox")
SOURCES = (*SANDBOX_PACKAGES, "fixtures/toolathlon-mini", "fixtures/cassettes")
# The host side goes into the runner image only, so editing it does not make the sandbox image stale.
HOST_SOURCES = ("decathlon/__main__.py", "decathlon/layers.py", "decathlon/conformance.py", "decathlon/backends",
                "decathlon/core", "decathlon/recordings", "decathlon/checkout", "decathlon/training", "decathlon/reports",
                "decathlon/cli")
CI_FILES = ("ci/install_servers.py", "ci/http-shim.txt", "ci/servers", "ci/constraints.txt")
RUNNER_REQS = ("docker", "rich", "httpx")
SERVER_BLOCK = "@SERVER@"
EPOCH = int(wheelhouse.SOURCE_DATE_EPOCH)


def files(rel: str) -> list[Path]:
    p = ROOT / rel
    if p.is_file():
        return [p]
    return sorted(f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc")


def image_servers() -> list[str]:
    """The servers of the sandbox image: those a Python 3.11 runs (the newer Python's are the checkout image's)."""
    return sorted(p.stem for p in (ROOT / "ci" / "servers").glob("*.txt")
                  if wheelhouse.required_python(p.read_text()) is None)


def render_dockerfile(servers: list[str], template: str | None = None) -> str:
    """The Dockerfile with each `# @SERVER@ begin` … `# @SERVER@ end` block repeated once per server."""
    out: list[str] = []
    block: list[str] | None = None
    for line in (template if template is not None else DOCKERFILE.read_text()).splitlines(keepends=True):
        if line.startswith(f"# {SERVER_BLOCK} begin"):
            block = [line]
        elif line.startswith(f"# {SERVER_BLOCK} end") and block is not None:
            for name in servers:
                out.extend(x.replace(SERVER_BLOCK, name) for x in block[1:])
            block = None
        elif block is not None:
            block.append(line)
        else:
            out.append(line)
    return "".join(out)


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _closure(uv: str, requirements: list[str]) -> list[str]:
    """Every package these requirements reach under ci/constraints.txt, pinned (`uv pip compile`, offline, from
    the wheelhouse): the venv's requirements.txt, installed --no-deps."""
    with tempfile.NamedTemporaryFile("w", suffix=".in", delete=False) as f:
        f.write("".join(f"{r}\n" for r in requirements))
    try:
        # Resolved for this interpreter: a Python 3.11 on Linux of the same machine as the image's (its markers, its
        # glibc's wheels).
        proc = subprocess.run([uv, "pip", "compile", "--quiet", "--no-header", "--no-annotate", "--python", sys.executable,
                               "-c", str(wheelhouse.CONSTRAINTS), f.name],
                              capture_output=True, text=True, timeout=300, env={**os.environ, **wheelhouse.uv_env()})
    finally:
        os.unlink(f.name)
    if proc.returncode != 0:
        raise InfraError(Kind.IMAGE_BUILD, f"uv could not pin the image's venv from the wheelhouse: {proc.stderr[-1500:]}")
    return [line.strip() for line in proc.stdout.splitlines() if line.strip() and not line.startswith("#")]


class Tar:
    """Entries owned by root, dated SOURCE_DATE_EPOCH, 0644 or 0755: the same bytes from any clone. Never hard
    links: a file that two sets share is written twice, so no set's entries depend on another's."""

    def __init__(self, path: Path) -> None:
        self.tar = tarfile.open(path, "w", format=tarfile.PAX_FORMAT)

    def add_bytes(self, name: str, data: bytes, executable: bool = False) -> None:
        info = tarfile.TarInfo(name)
        info.size, info.mtime, info.mode = len(data), EPOCH, 0o755 if executable else 0o644
        self.tar.addfile(info, io.BytesIO(data))

    def add_file(self, name: str, path: Path) -> None:
        info = tarfile.TarInfo(name)
        st = path.stat()
        info.size, info.mtime, info.mode = st.st_size, EPOCH, 0o755 if st.st_mode & 0o100 else 0o644
        with open(path, "rb") as f:
            self.tar.addfile(info, f)

    def add_link(self, name: str, target: str) -> None:
        info = tarfile.TarInfo(name)
        info.type, info.linkname, info.mtime, info.mode = tarfile.SYMTYPE, target, EPOCH, 0o777
        self.tar.addfile(info)

    def add_tree(self, prefix: str, root: Path) -> None:
        """A folder as it is (its links kept as links), owners and dates fixed."""
        for path in sorted(root.rglob("*")):
            name = f"{prefix}/{path.relative_to(root)}"
            if path.is_symlink():
                self.add_link(name, os.readlink(path))
            elif path.is_dir():
                info = tarfile.TarInfo(name)
                info.type, info.mtime, info.mode = tarfile.DIRTYPE, EPOCH, 0o755
                self.tar.addfile(info)
            else:
                self.add_file(name, path)

    def close(self) -> None:
        self.tar.close()


def assemble(dest: Path, say: Callable[[str], None]) -> Path:
    """The context as a tar at `dest`: the wheelhouse filled first (PyPI only for pins it lacks)."""
    servers = image_servers()
    python = getattr(sys, "_base_executable", sys.executable)  # has pip, where our uv-made venv has none
    sets = {"project": wheelhouse.project_set(python), "http-shim": wheelhouse.shim_set(python),
            **{f"server-{n}": wheelhouse.server_set(n, python) for n in servers}}
    try:
        uv = str(wheelhouse.uv_binary(say))
        filled = wheelhouse.fill(list(sets.values()), say)
    except wheelhouse.WheelhouseError as exc:
        raise InfraError(Kind.IMAGE_BUILD, str(exc)) from None
    project = _project()
    sandbox_reqs = [*project["dependencies"], *project["optional-dependencies"]["sandbox"]]
    by_name = {wheelhouse.wheel_name(f.name): f for f in filled["project"]}
    tar = Tar(dest)
    try:
        tar.add_bytes("Dockerfile", render_dockerfile(servers).encode())
        tar.add_file("tools/uv", Path(uv))
        for venv, reqs in (("venv", sandbox_reqs), ("runner", [*sandbox_reqs, *RUNNER_REQS])):
            pinned = _closure(uv, reqs)
            names = [wheelhouse.normalize(p.split("==", 1)[0]) for p in pinned]
            missing = [n for n in names if n not in by_name]
            if missing:
                raise InfraError(Kind.IMAGE_BUILD, f"ci/constraints.txt lacks {', '.join(missing)} (the {venv} venv needs them)")
            tar.add_bytes(f"wheels/{venv}/requirements.txt", "".join(f"{p}\n" for p in pinned).encode())
            for n in sorted(names):
                tar.add_file(f"wheels/{venv}/{by_name[n].name}", by_name[n])
        for set_name in ("http-shim", *(f"server-{n}" for n in servers)):
            for f in filled[set_name]:
                tar.add_file(f"wheels/{set_name}/{f.name}", f)
        for prefix, rels in (("", CI_FILES), ("src/", SOURCES), ("host/", HOST_SOURCES)):
            for rel in rels:
                for f in files(rel):
                    tar.add_file(prefix + str(f.relative_to(ROOT)), f)
    finally:
        tar.close()
    return dest
