"""`decathlon image build --source CHECKOUT`: the sandbox image plus a user's checkout, its task
environment on Python 3.13, and the servers that need that Python (docker/checkout.Dockerfile).

Everything the build installs is in the wheelhouse first (the build runs with --network none): cp313 wheels,
fetched by pip under the portable Python 3.13, for exactly the packages the host-side task environment
installed on that Python (what could not be installed there is reported by `decathlon task-env`, and left out
here too). The context is a tar in the machine's cache, as the sandbox image's is.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

from decathlon.checkout import image, image_context, portable_python, task_env, wheelhouse
from decathlon.errors import InfraError, Kind

CHECKOUT_REPO = "decathlon-checkout"
DOCKERFILE = image.ROOT / "docker" / "checkout.Dockerfile"
IN_IMAGE_PYTHON = Path("/opt/decathlon/python3.13")
IN_IMAGE_SOURCE = "/opt/decathlon/checkout"
# Not part of what a task reads, and large where a user has run `uv sync` / `npm install`.
SKIP = {".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", "dumps", "logs"}


def _checkout_files(source: Path) -> list[Path]:
    out: list[Path] = []
    for root, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d not in SKIP)
        out.extend(Path(root) / f for f in sorted(files) if not f.endswith(".pyc"))
    return out


def tag_for(source: Path, sandbox_tag: str, env: task_env.TaskEnvReport) -> str:
    h = hashlib.sha256()
    h.update(sandbox_tag.encode() + DOCKERFILE.read_bytes() + json.dumps(env.installed).encode())
    h.update(portable_python.VERSION.encode() + wheelhouse.pinned_version("uv").encode())
    for f in _checkout_files(source):
        h.update(str(f.relative_to(source)).encode() + b"\0")
        if not f.is_symlink():
            h.update(f.read_bytes() + b"\0")
    return f"{CHECKOUT_REPO}:{h.hexdigest()[:16]}"


def newer_servers() -> list[str]:
    """The servers the sandbox image leaves out: those that need the newer Python this image brings."""
    return sorted(p.stem for p in (image.ROOT / "ci" / "servers").glob("*.txt")
                  if wheelhouse.required_python(p.read_text()) is not None)


def _context(source: Path, env: task_env.TaskEnvReport, host_python: str, dest: Path) -> Path:
    """The context tar: the portable Python patched for its place in the image (built once per machine, in the
    cache), uv, the task environment's and the newer servers' wheels from the wheelhouse, the checkout."""
    servers = newer_servers()
    python_tree = image.work_dir() / "python3.13-for-image"
    portable_python.build(python_tree, for_path=IN_IMAGE_PYTHON, say=image.say)
    task = wheelhouse.PinSet("task-env", "".join(f"{r}\n" for r in env.installed), host_python)
    sets = [task, *(wheelhouse.server_set(n, host_python) for n in servers)]
    try:
        uv = wheelhouse.uv_binary(image.say)
        filled = wheelhouse.fill(sets, image.say)
    except wheelhouse.WheelhouseError as exc:
        raise InfraError(Kind.IMAGE_BUILD, str(exc)) from None
    tar = image_context.Tar(dest)
    try:
        tar.add_bytes("Dockerfile", image_context.render_dockerfile(servers, DOCKERFILE.read_text()).encode())
        tar.add_file("tools/uv", uv)
        tar.add_bytes("wheels/task-env/requirements.txt", task.text.encode())
        for s in sets:
            for f in filled[s.name]:
                tar.add_file(f"wheels/{s.name}/{f.name}", f)
        tar.add_tree("python3.13", python_tree)
        for f in _checkout_files(source):
            if f.is_symlink():
                tar.add_link(f"checkout/{f.relative_to(source)}", os.readlink(f))
            else:
                tar.add_file(f"checkout/{f.relative_to(source)}", f)
    finally:
        tar.close()
    return dest


def build(source: Path, sandbox_tag: str) -> str:
    began = time.monotonic()
    host_python = str(portable_python.build(portable_python.default_dir(), say=image.say))
    env = task_env.build(source, host_python, None, image.say)
    tag = tag_for(source, sandbox_tag, env)
    if image.image_exists(tag):
        image.say(f"{tag} is up to date; nothing to build")
        return tag
    image.work_dir().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="checkout-context-", dir=image.work_dir()) as tmp:
        image.say(f"assembling the build context: Python {portable_python.VERSION} for {IN_IMAGE_PYTHON}, the "
                  "checkout, cp313 wheels …")
        context = _context(source, env, host_python, Path(tmp) / "context.tar")
        image.run_build(context, {"t": tag, "target": "checkout", "buildargs": json.dumps({"SANDBOX_IMAGE": sandbox_tag}),
                                  "labels": json.dumps({"decathlon.checkout": str(source)})},
                        image.build_log("checkout"), "checkout")
    image.say(f"checkout image {tag} ({image.image_size(tag) / 1e6:.0f} MB) in {time.monotonic() - began:.0f} s; "
              f"use it with DECATHLON_IMAGE={tag} --backend compose --source {source}")
    if env.skipped:
        image.say("not in its task environment (they do not install on Python "
                  f"{env.python_version}): {', '.join(s['package'] for s in env.skipped)}")
    return tag
