"""`decathlon image build`: the compose backend's sandbox image (and the demo's runner image), offline.

Steps, each bounded in time and skipped when its result already exists:
1. a base image: `--base-image`, else `decathlon-base:<recipe hash>`, bootstrapped from Debian
   packages (mmdebstrap, else debootstrap) and `docker import`ed, since nothing can be pulled here;
2. wheels for everything the image installs, built on the host (the only step that needs PyPI);
3. `docker build --network none` of docker/sandbox.Dockerfile, targets `sandbox` and `runner`.
Tags are content addressed (a hash of every input), so an unchanged tree is a no-op.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import tempfile
import time
from pathlib import Path

from decathlon.errors import InfraError, Kind

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "docker" / "sandbox.Dockerfile"
CONTEXT = ROOT / "build" / "docker-context"
SANDBOX_REPO = "decathlon-sandbox"
RUNNER_REPO = "decathlon-runner"
BASE_REPO = "decathlon-base"
SUITE = "bookworm"
# libfaketime: the frozen clock of the task's own processes (decathlon/sandbox/clock.py, --frozen-clock).
BASE_PACKAGES = ("python3", "python3-venv", "git", "libfaketime")
# Dropped from the rootfs: nothing in a sandbox reads them, and they are a third of its size.
EXCLUDES = ("/usr/share/doc/*", "/usr/share/man/*", "/usr/share/info/*", "/usr/share/locale/*",
            "/usr/share/lintian/*")
MIRROR = os.environ.get("DECATHLON_DEBIAN_MIRROR", "http://deb.debian.org/debian")
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
BOOTSTRAP_TIMEOUT = 900
WHEELS_TIMEOUT = 1200
BUILD_TIMEOUT = 1800
BASE_LABEL = "decathlon.base"  # the base image an image was built on


def say(msg: str) -> None:
    print(f"[image] {msg}", file=sys.stderr, flush=True)


def _files(rel: str) -> list[Path]:
    p = ROOT / rel
    if p.is_file():
        return [p]
    return sorted(f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc")


def content_hash(host: bool = False) -> str:
    """Every input of the sandbox image (Dockerfile, pins, pyproject, the sources copied in); with
    host=True also the host side, which only the runner image holds."""
    h = hashlib.sha256()
    for rel in ("docker/sandbox.Dockerfile", "pyproject.toml", *CI_FILES, *SOURCES, *(HOST_SOURCES if host else ())):
        for f in _files(rel):
            h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def default_tag() -> str:
    return f"{SANDBOX_REPO}:{content_hash()}"


def base_tag() -> str:
    recipe = repr((SUITE, BASE_PACKAGES, EXCLUDES)).encode()
    return f"{BASE_REPO}:{SUITE}-{hashlib.sha256(recipe).hexdigest()[:12]}"


def _run(argv: list[str], timeout: float, what: str, **kw) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(argv, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        raise InfraError(Kind.IMAGE_BUILD, f"{what} ran over {timeout:.0f} s") from None
    except FileNotFoundError as exc:
        raise InfraError(Kind.IMAGE_BUILD, f"{what}: {exc.filename} is not installed") from None
    if proc.returncode != 0:
        raise InfraError(Kind.IMAGE_BUILD, f"{what} failed (exit {proc.returncode})")
    return proc


def image_exists(tag: str) -> bool:
    try:
        return subprocess.run(["docker", "image", "inspect", tag], capture_output=True, timeout=60).returncode == 0
    except FileNotFoundError:
        raise InfraError(Kind.ENGINE_UNREACHABLE, "the docker CLI is not installed") from None
    except subprocess.TimeoutExpired:
        raise InfraError(Kind.ENGINE_UNREACHABLE, "the Docker engine did not answer within 60 s") from None


def _check_engine() -> None:
    try:
        r = subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"], capture_output=True, text=True,
                           timeout=30)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        r = None
    if r is None or r.returncode != 0:
        raise InfraError(Kind.ENGINE_UNREACHABLE, "the Docker engine is unreachable (is dockerd running, and may this "
                         "user use /var/run/docker.sock?)" + (f": {r.stderr.strip()}" if r is not None else ""))


def _ensure_bootstrapper() -> list[str]:
    for tool in ("mmdebstrap", "debootstrap"):
        if shutil.which(tool):
            return [tool]
    if os.geteuid() == 0 and shutil.which("apt-get"):
        say("installing mmdebstrap (apt-get) …")
        _run(["apt-get", "update", "-qq"], 300, "apt-get update")
        _run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "mmdebstrap"], 600, "apt-get install mmdebstrap",
             env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        return ["mmdebstrap"]
    raise InfraError(Kind.IMAGE_BUILD, "no base image and no way to bootstrap one: install mmdebstrap or debootstrap "
                     "(apt-get install mmdebstrap), or pass --base-image python:3.11-slim where images can be pulled")


def bootstrap_base(tag: str) -> None:
    """A minimal Debian rootfs with python3, venv and git, as a tarball, then `docker import`."""
    tool = _ensure_bootstrapper()[0]
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="decathlon-base-") as tmp:
        tar = Path(tmp) / "rootfs.tar"
        include = ",".join(BASE_PACKAGES)
        if tool == "mmdebstrap":
            say(f"bootstrapping {tag} from Debian packages with mmdebstrap ({MIRROR}) …")
            argv = ["mmdebstrap", "--variant=minbase", f"--include={include}", "--quiet",
                    *(f"--dpkgopt=path-exclude={p}" for p in EXCLUDES),
                    "--customize-hook=rm -rf \"$1\"/var/lib/apt/lists/* \"$1\"/var/cache/apt/*",
                    SUITE, str(tar), MIRROR]
            _run(argv, BOOTSTRAP_TIMEOUT, "mmdebstrap")
        else:
            say(f"bootstrapping {tag} from Debian packages with debootstrap ({MIRROR}) …")
            rootfs = Path(tmp) / "rootfs"
            _run(["debootstrap", "--variant=minbase", f"--include={include}", SUITE, str(rootfs), MIRROR],
                 BOOTSTRAP_TIMEOUT, "debootstrap")
            for pattern in ("var/lib/apt/lists/*", "var/cache/apt/*", *(p.lstrip("/") for p in EXCLUDES)):
                for p in rootfs.glob(pattern):
                    shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
            _run(["tar", "-C", str(rootfs), "-cf", str(tar), "."], 300, "tar of the rootfs")
        say(f"importing the rootfs ({tar.stat().st_size / 1e6:.0f} MB) …")
        _run(["docker", "import", "--change", "ENV LANG=C.UTF-8", "--change", 'CMD ["/bin/bash"]', str(tar), tag],
             300, "docker import", stdout=subprocess.DEVNULL)
    say(f"base image {tag} ready in {time.monotonic() - began:.0f} s")


def _extra(name: str) -> list[str]:
    import tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    if name == "core":
        return list(project["dependencies"])
    return list(project["optional-dependencies"][name])


def prepare_context() -> Path:
    """build/docker-context: sources and host-built wheels (pip's own cache makes a rebuild quick)."""
    say(f"preparing the build context in {CONTEXT.relative_to(ROOT)} …")
    for sub in ("src", "host"):
        shutil.rmtree(CONTEXT / sub, ignore_errors=True)
    wheels = CONTEXT / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    for sub, rels in (("src", (*SOURCES, *CI_FILES)), ("host", HOST_SOURCES)):
        for rel in rels:
            for f in _files(rel):
                dest = CONTEXT / sub / f.relative_to(ROOT)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, dest)
    sandbox = [r for r in _extra("core") + _extra("sandbox")]
    (wheels / "sandbox.txt").write_text("\n".join(sandbox) + "\n")
    (wheels / "runner.txt").write_text("\n".join(RUNNER_REQS) + "\n")
    shutil.copy2(ROOT / "ci" / "constraints.txt", wheels / "constraints.txt")
    say("wheels: build/docker-context/wheels, topped up from PyPI when a pin is missing …")
    _wheels(wheels, ["-c", str(ROOT / "ci" / "constraints.txt"), *sandbox, *RUNNER_REQS], "sandbox and runner")
    for pins in sorted((ROOT / "ci" / "servers").glob("*.txt")) + [ROOT / "ci" / "http-shim.txt"]:
        if pins.read_text().startswith("# requires-python"):
            continue  # a newer Python's server (pdf-tools): only the checkout image has that Python
        _wheels(wheels, ["--no-deps", "-r", str(pins)], pins.name)
    # setuptools/wheel only ever appear when a build backend asks; the image needs neither.
    shutil.copy2(DOCKERFILE, CONTEXT / "Dockerfile")
    return CONTEXT


def _wheels(dest: Path, args: list[str], what: str) -> None:
    """Offline first (the wheels of an earlier build), so a rebuild needs no network."""
    pip = [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "-w", str(dest)]
    try:
        offline = subprocess.run([*pip, "--no-index", "--find-links", str(dest), *args], capture_output=True,
                                 timeout=WHEELS_TIMEOUT)
        if offline.returncode == 0:
            return
    except subprocess.TimeoutExpired:
        pass
    _run([*pip, *args], WHEELS_TIMEOUT, f"pip wheel ({what})")


def docker_build(context: Path, base: str, tag: str, target: str) -> None:
    log = context.parent / f"docker-build-{target}.log"
    say(f"docker build --network none --target {target} -t {tag} (base {base}; log: {log.relative_to(ROOT)}) …")
    run_docker_build(["--build-arg", f"BASE_IMAGE={base}", "--target", target,
                      "--label", f"decathlon.content={tag.rsplit(':', 1)[1]}", "--label", f"{BASE_LABEL}={base}",
                      "-t", tag, "-f", str(context / "Dockerfile"), str(context)], log, target)


STEP = re.compile(rb"^Step (\d+)/(\d+) : (.*)$")


def run_docker_build(args: list[str], log: Path, what: str) -> None:
    """`docker build --network none ARGS` (the classic builder), its output in `log`, each of its steps said as it
    starts (a build of several minutes is never one silent line); the stage images it leaves untagged (its
    multi-stage intermediates, gigabytes for a checkout image) removed once it succeeded."""
    dangling_before = _dangling()
    began = time.monotonic()
    with open(log, "wb") as out:
        proc = subprocess.Popen(["docker", "build", "--network", "none", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env={**os.environ, "DOCKER_BUILDKIT": "0"})
        assert proc.stdout is not None
        timer = threading.Timer(BUILD_TIMEOUT, proc.kill)
        timer.start()
        try:
            for line in proc.stdout:
                out.write(line)
                m = STEP.match(line.rstrip())
                if m:
                    step = m.group(3).decode(errors="replace")
                    say(f"  {what} step {int(m.group(1))}/{int(m.group(2))} "
                        f"({time.monotonic() - began:.0f} s): {step[:100]}{'…' if len(step) > 100 else ''}")
            code = proc.wait()
        finally:
            timer.cancel()
    if code != 0:
        sys.stderr.write(log.read_text(errors="replace")[-4000:])
        if time.monotonic() - began >= BUILD_TIMEOUT:
            raise InfraError(Kind.IMAGE_BUILD, f"docker build ({what}) ran over {BUILD_TIMEOUT:.0f} s; see {log}")
        raise InfraError(Kind.IMAGE_BUILD, f"docker build ({what}) failed (exit {code}); see {log}")
    left = sorted(_dangling() - dangling_before)
    if left:
        subprocess.run(["docker", "image", "rm", *left], capture_output=True, timeout=300)


def up_to_date(tag: str, runner: str, base_image: str | None) -> bool:
    """Both images exist, and were built on the base asked for: --base-image after an earlier build on another
    base builds again (the content hash covers the sources, not the base)."""
    if not (image_exists(tag) and image_exists(runner)):
        return False
    if base_image and _built_on(tag) != base_image:
        say(f"{tag} was built on {_built_on(tag) or 'another base'}, not {base_image}: building it again")
        return False
    return True


def _dangling() -> set[str]:
    r = subprocess.run(["docker", "images", "--filter", "dangling=true", "--quiet", "--no-trunc"], capture_output=True,
                       text=True, timeout=60)
    return set(r.stdout.split())


def _built_on(tag: str) -> str | None:
    r = subprocess.run(["docker", "image", "inspect", "--format", f'{{{{index .Config.Labels "{BASE_LABEL}"}}}}', tag],
                       capture_output=True, text=True, timeout=60)
    return r.stdout.strip() or None if r.returncode == 0 else None


def _size_mb(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6 if folder.is_dir() else 0.0


def image_size(tag: str) -> int:
    r = subprocess.run(["docker", "image", "inspect", "--format", "{{.Size}}", tag], capture_output=True, text=True,
                       timeout=60)
    return int(r.stdout.strip() or 0)


def build(base_image: str | None = None, tag: str | None = None) -> str:
    _check_engine()
    began = time.monotonic()
    digest = content_hash()
    tag = tag or f"{SANDBOX_REPO}:{digest}"
    runner = f"{RUNNER_REPO}:{content_hash(host=True)}"
    if up_to_date(tag, runner, base_image):
        say(f"{tag} and {runner} are up to date; nothing to build")
    else:
        base = base_image or base_tag()
        if not image_exists(base):
            if base_image:
                say(f"{base} is not local; docker build will try to pull it")
            else:
                bootstrap_base(base)
        context = prepare_context()
        docker_build(context, base, tag, "sandbox")
        docker_build(context, base, runner, "runner")
        _run(["docker", "tag", base, f"{BASE_REPO}:latest"], 60, "docker tag")  # what compose.yaml builds on
    # Stable names for compose.yaml and users; the content tag is what the backend checks.
    for src, alias in ((tag, f"{SANDBOX_REPO}:latest"), (runner, f"{RUNNER_REPO}:latest")):
        _run(["docker", "tag", src, alias], 60, "docker tag")
    say(f"sandbox image {tag} ({image_size(tag) / 1e6:.0f} MB), runner {runner}; "
        f"{time.monotonic() - began:.1f} s")
    if CONTEXT.is_dir():
        say(f"kept {CONTEXT.relative_to(ROOT)} ({_size_mb(CONTEXT):.0f} MB): the wheels a rebuild takes offline; "
            "`rm -rf build` frees it")
    return tag
