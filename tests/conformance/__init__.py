"""Backends under the conformance suite: one module per backend in this folder, each defining

    NAME: str                      # the backend's name, as `make_backend` knows it
    MARKS: list                    # pytest marks for its cases (e.g. [pytest.mark.docker])
    def unavailable() -> str | None          # why it cannot run here (the cases then skip with it), or None
    @contextmanager
    def backend(tmp: Path) -> Iterator[Backend]   # a ready backend; everything it made is gone afterwards
    RECORDED: bool                 # optional: also compare every imported recorded run with the local backend

Cases are parametrised over these modules in sorted order, so every worker collects the same ids.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
from pathlib import Path

import pytest

# Where the docker tier must run (.ci/run sets it; so does CI=true): a backend that cannot run there fails
# the case instead of skipping it, so a machine without an engine or image never passes CI by skipping.
REQUIRE_DOCKER = "DECATHLON_REQUIRE_DOCKER"


def docker_required() -> bool:
    return os.environ.get(REQUIRE_DOCKER) == "1" or os.environ.get("CI") == "true"


def require(mod) -> None:
    """Skip the case where backend module `mod` cannot run here, saying why; fail it where its tier is
    required."""
    reason = mod.unavailable()
    if reason is None:
        return
    why = f"{mod.NAME} backend unavailable here: {reason}"
    if any(getattr(m, "name", None) == "docker" for m in mod.MARKS) and docker_required():
        pytest.fail(f"{why} (required here: {REQUIRE_DOCKER}=1 or CI=true)")
    pytest.skip(why)


def modules() -> list:
    here = Path(__file__).parent
    return [importlib.import_module(f"conformance.{m.name}") for m in sorted(pkgutil.iter_modules([str(here)]),
                                                                             key=lambda m: m.name)]
