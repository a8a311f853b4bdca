"""The compose backend under the conformance suite: a Docker container per episode."""
from __future__ import annotations

import asyncio
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

NAME = "compose"
MARKS = [pytest.mark.docker]
RECORDED = True  # held to every imported recorded run too (issue 5)

# Run by the agent's own python tool: exhausts the container's memory limit, so the kernel's OOM
# killer fires inside it; the backend must report that as `sandbox_died`, naming out-of-memory.
KILL_SANDBOX_CODE = ("hog = []\n"
                     "while True:\n"
                     "    hog.append(bytearray(64 * 1024 * 1024))\n")


def unavailable() -> str | None:
    """Why compose cannot run here: no engine, or no sandbox image for this tree."""
    try:
        import docker
        client = docker.from_env(timeout=10)
        client.ping()
    except Exception as exc:  # noqa: BLE001 - any failure means "no engine" to a test
        return f"no Docker engine reachable ({type(exc).__name__}: {exc})"
    from decathlon.checkout.image import default_tag
    import os
    image = os.environ.get("DECATHLON_IMAGE") or default_tag()
    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        if os.environ.get("CI") == "true":
            return None  # in CI ci/test-docker builds it first: its absence must fail, not skip
        return f"the sandbox image {image} is not built (run `decathlon image build`, or ci/test-docker)"
    return None


@contextmanager
def backend(tmp: Path) -> Iterator:
    from decathlon.backends.compose import ComposeBackend
    b = ComposeBackend.from_env()
    try:
        yield b
    finally:
        asyncio.run(b.close())
