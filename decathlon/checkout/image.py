"""`decathlon image build`: the compose backend's sandbox image (and the demo's runner image), offline.

Steps, each bounded in time and skipped when its result already exists:
1. a base image: `--base-image`, else `decathlon-base:<recipe hash>`, bootstrapped from Debian
   packages (mmdebstrap, else debootstrap) and `docker import`ed, since nothing can be pulled here;
2. the build context, a tar in the machine's cache (decathlon/checkout/image_context.py): the wheelhouse's
   wheels (PyPI only for pins it lacks), uv, the sources;
3. a BuildKit build of docker/sandbox.Dockerfile through the engine's API (decathlon/checkout/buildkit.py),
   network none, targets `sandbox` and `runner`: its stages build side by side, each from the cache unless its
   own inputs changed.
Tags are content addressed (a hash of every input), so an unchanged tree is a no-op.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from decathlon.checkout import buildkit, image_context, wheelhouse
from decathlon.errors import InfraError, Kind

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = image_context.DOCKERFILE
SANDBOX_REPO = os.environ.get("DECATHLON_IMAGE_REPO_PREFIX", "decathlon") + "-sandbox"
RUNNER_REPO = os.environ.get("DECATHLON_IMAGE_REPO_PREFIX", "decathlon") + "-runner"
BASE_REPO = "decathlon-base"
SUITE = "bookworm"
# libfaketime: the frozen clock of the task's own processes (decathlon/sandbox/clock.py, --frozen-clock).
BASE_PACKAGES = ("python3", "python3-venv", "git", "libfaketime")
# Dropped from the rootfs: nothing in a sandbox reads them, and they are a third of its size.
EXCLUDES = ("/usr/share/doc/*", "/usr/share/man/*", "/usr/share/info/*", "/usr/share/locale/*",
            "/usr/share/lintian/*")
MIRROR = os.environ.get("DECATHLON_DEBIAN_MIRROR", "http://deb.debian.org/debian")
SOURCES, HOST_SOURCES, CI_FILES = image_context.SOURCES, image_context.HOST_SOURCES, image_context.CI_FILES
BOOTSTRAP_TIMEOUT = 900
BUILD_TIMEOUT = 1800
BASE_LABEL = "decathlon.base"  # the base image an image was built on


def say(msg: str) -> None:
    print(f"[image] {msg}", file=sys.stderr, flush=True)


def content_hash(host: bool = False) -> str:
    """Every input of the sandbox image (Dockerfile, pins, pyproject, the sources copied in); with
    host=True also the host side, which only the runner image holds."""
    h = hashlib.sha256()
    # image_context.py: how the context is laid out and which wheels each stage gets is part of what the image is.
    for rel in ("docker/sandbox.Dockerfile", "decathlon/checkout/image_context.py", "pyproject.toml", *CI_FILES, *SOURCES,
                *(HOST_SOURCES if host else ())):
        for f in image_context.files(rel):
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
        # The lock timeout: ci/test may be installing its own packages at the same moment (the build runs beside it).
        _run(["apt-get", "-o", "DPkg::Lock::Timeout=600", "update", "-qq"], 900, "apt-get update")
        _run(["apt-get", "-o", "DPkg::Lock::Timeout=600", "install", "-y", "-qq", "--no-install-recommends", "mmdebstrap"],
             1200, "apt-get install mmdebstrap",
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


def work_dir() -> Path:
    """Where a build's context goes: the machine's cache, never the clone."""
    return wheelhouse.cache_dir().parent / "image-build"


def build_log(target: str) -> Path:
    return ROOT / "build" / f"docker-build-{target}.log"


def run_build(context: Path, params: dict[str, str], log: Path, what: str) -> None:
    """A BuildKit build of `context` (a tar), each step said as it starts; what came from the cache, said at the end."""
    log.parent.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    buildkit.build(context, {"networkmode": "none", **params}, log,
                   lambda step: say(f"  {what} ({time.monotonic() - began:.0f} s): {step[:110]}"), BUILD_TIMEOUT)
    tail = log.read_text(errors="replace").rstrip().rsplit("\n", 1)[-1]
    say(f"{what}: {tail.lstrip('# ')} (log: {log})")


def docker_build(context: Path, base: str, tag: str, target: str) -> None:
    run_build(context, {"t": tag, "target": target, "buildargs": json.dumps({"BASE_IMAGE": base}),
                        "labels": json.dumps({"decathlon.content": tag.rsplit(":", 1)[1], BASE_LABEL: base})},
              build_log(target), target)


def up_to_date(tag: str, runner: str, base_image: str | None) -> bool:
    """Both images exist, and were built on the base asked for: --base-image after an earlier build on another
    base builds again (the content hash covers the sources, not the base)."""
    if not (image_exists(tag) and image_exists(runner)):
        return False
    if base_image and _built_on(tag) != base_image:
        say(f"{tag} was built on {_built_on(tag) or 'another base'}, not {base_image}: building it again")
        return False
    return True


def _built_on(tag: str) -> str | None:
    r = subprocess.run(["docker", "image", "inspect", "--format", f'{{{{index .Config.Labels "{BASE_LABEL}"}}}}', tag],
                       capture_output=True, text=True, timeout=60)
    return r.stdout.strip() or None if r.returncode == 0 else None


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
        work_dir().mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="context-", dir=work_dir()) as tmp:
            say("assembling the build context (the wheelhouse's wheels, uv, the sources) …")
            context = image_context.assemble(Path(tmp) / "context.tar", say)
            say(f"context {context.stat().st_size / 1e6:.0f} MB, built with BuildKit through the engine's API …")
            # The runner first: it holds every stage of the sandbox and its own venv, which BuildKit builds side by
            # side; the sandbox target is then all cache.
            docker_build(context, base, runner, "runner")
            docker_build(context, base, tag, "sandbox")
        _run(["docker", "tag", base, f"{BASE_REPO}:latest"], 60, "docker tag")  # what compose.yaml builds on
    # Stable names for compose.yaml and users; the content tag is what the backend checks.
    for src, alias in ((tag, f"{SANDBOX_REPO}:latest"), (runner, f"{RUNNER_REPO}:latest")):
        _run(["docker", "tag", src, alias], 60, "docker tag")
    say(f"sandbox image {tag} ({image_size(tag) / 1e6:.0f} MB), runner {runner}; "
        f"{time.monotonic() - began:.1f} s")
    return tag
