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
import pkgutil
from pathlib import Path


def modules() -> list:
    here = Path(__file__).parent
    return [importlib.import_module(f"conformance.{m.name}") for m in sorted(pkgutil.iter_modules([str(here)]),
                                                                             key=lambda m: m.name)]
