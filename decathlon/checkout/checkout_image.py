"""`decathlon image build --source CHECKOUT`: the sandbox image plus a user's checkout, its task
environment on Python 3.13, and the servers that need that Python (docker/checkout.Dockerfile).

Everything the build installs is fetched on the host first (the build runs with --network none):
cp313 wheels by pip running under the portable Python 3.13, for exactly the packages the host-side
task environment installed on that Python (what could not be installed there is reported by
`decathlon task-env`, and left out here too).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

from decathlon.checkout import image

from decathlon.checkout import portable_python

from decathlon.checkout import task_env

CHECKOUT_REPO = "decathlon-checkout"
DOCKERFILE = image.ROOT / "docker" / "checkout.Dockerfile"
CONTEXT = image.ROOT / "build" / "checkout-context"
IN_IMAGE_PYTHON = Path("/opt/decathlon/python3.13")
IN_IMAGE_SOURCE = "/opt/decathlon/checkout"
# Not part of what a task reads, and large where a user has run `uv sync` / `npm install`.
SKIP = {".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", "dumps", "logs"}
PIP_PIN = "pip==25.1.1"


def _checkout_files(source: Path) -> list[Path]:
    out: list[Path] = []
    for root, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d not in SKIP)
        out.extend(Path(root) / f for f in sorted(files) if not f.endswith(".pyc"))
    return out


def tag_for(source: Path, sandbox_tag: str, env: task_env.TaskEnvReport) -> str:
    h = hashlib.sha256()
    h.update(sandbox_tag.encode() + DOCKERFILE.read_bytes() + json.dumps(env.installed).encode())
    h.update(portable_python.VERSION.encode() + PIP_PIN.encode())
    for f in _checkout_files(source):
        h.update(str(f.relative_to(source)).encode() + b"\0")
        if not f.is_symlink():
            h.update(f.read_bytes() + b"\0")
    return f"{CHECKOUT_REPO}:{h.hexdigest()[:16]}"


def _copy_checkout(source: Path, dest: Path) -> None:
    shutil.rmtree(dest, ignore_errors=True)
    for f in _checkout_files(source):
        target = dest / f.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        if f.is_symlink():
            target.symlink_to(os.readlink(f))
        else:
            shutil.copy2(f, target)


def _wheels(python: str, dest: Path, requirements: Path, what: str) -> None:
    """cp313 wheels, by pip under that interpreter: downloaded where PyPI has them, built where not."""
    image._run([sys.executable, "-m", "pip", "--python", python, "wheel", "--quiet", "--disable-pip-version-check",
                "--no-deps", "-w", str(dest), "-r", str(requirements)], image.WHEELS_TIMEOUT, f"pip wheel ({what})")


def build(source: Path, sandbox_tag: str) -> str:
    began = time.monotonic()
    host_python = str(portable_python.build(portable_python.default_dir(), say=image.say))
    env = task_env.build(source, host_python, None, image.say)
    tag = tag_for(source, sandbox_tag, env)
    if image.image_exists(tag):
        image.say(f"{tag} is up to date; nothing to build")
        return tag
    CONTEXT.mkdir(parents=True, exist_ok=True)
    image.say(f"preparing {CONTEXT.relative_to(image.ROOT)}: Python {portable_python.VERSION} for "
              f"{IN_IMAGE_PYTHON}, the checkout, cp313 wheels …")
    portable_python.build(CONTEXT / "python3.13", for_path=IN_IMAGE_PYTHON, say=image.say)
    _copy_checkout(source, CONTEXT / "checkout")
    wheels = CONTEXT / "wheels"
    wheels.mkdir(exist_ok=True)
    (wheels / "task-env.txt").write_text("".join(f"{r}\n" for r in env.installed))
    _wheels(host_python, wheels, wheels / "task-env.txt", "task environment")
    for pins in sorted((image.ROOT / "ci" / "servers").glob("*.txt")):
        if pins.read_text().startswith("# requires-python"):
            _wheels(host_python, wheels, pins, pins.name)
    # pip on its own: the lock may pin another pip, which lands in wheels/ too.
    shutil.rmtree(CONTEXT / "pip", ignore_errors=True)
    (CONTEXT / "pip").mkdir()
    (CONTEXT / "pip" / "pip.txt").write_text(PIP_PIN + "\n")
    _wheels(host_python, CONTEXT / "pip", CONTEXT / "pip" / "pip.txt", "pip")
    shutil.copy2(DOCKERFILE, CONTEXT / "Dockerfile")
    log = CONTEXT.parent / "docker-build-checkout.log"
    image.say(f"docker build --network none -t {tag} (on {sandbox_tag}; log: {log.relative_to(image.ROOT)}) …")
    image.run_docker_build(["--build-arg", f"SANDBOX_IMAGE={sandbox_tag}", "--target", "checkout",
                            "--label", f"decathlon.checkout={source}", "-t", tag, "-f", str(CONTEXT / "Dockerfile"),
                            str(CONTEXT)], log, "checkout")
    image.say(f"checkout image {tag} ({image.image_size(tag) / 1e6:.0f} MB) in {time.monotonic() - began:.0f} s; "
              f"use it with DECATHLON_IMAGE={tag} --backend compose --source {source}")
    if env.skipped:
        image.say("not in its task environment (they do not install on Python "
                  f"{env.python_version}): {', '.join(s['package'] for s in env.skipped)}")
    return tag
