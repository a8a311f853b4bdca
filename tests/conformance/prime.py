"""The prime backend under the conformance suite, against the fake control plane (fakes/prime) on
loopback: the real prime-sandboxes SDK, pointed at it through PRIME_API_BASE_URL."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from decathlon.backends.prime import PrimeBackend, PrimeConfig
from fakes.prime.control import running

NAME = "prime"
MARKS: list = []
REPO = Path(__file__).resolve().parents[2]
MINI = REPO / "fixtures" / "toolathlon-mini"
FAKE_KEY = "fake-key-for-the-loopback-control-plane"


def unavailable() -> str | None:
    return None


def fake_config(**overrides) -> PrimeConfig:
    """Budgets sized for the fake: it starts a sandbox in milliseconds, so seconds mean stuck."""
    # users="none": the fake runs every sandbox as a folder of this one host, where the image's fixed uids
    # would be shared by all of them; separated users are the compose tier's to prove (same task-api code).
    base = dict(image="decathlon-sandbox:test", source_path=str(MINI), start_timeout=10.0, probe_timeout=2.0,
                creates_per_min=0.0, max_live=16, backoff_base=0.05, backoff_cap=0.5, users="none")
    return PrimeConfig(**{**base, **overrides})


@contextmanager
def pointed_at(url: str, home: Path) -> Iterator[None]:
    """The SDK at the fake, with a HOME of its own: it reads ~/.prime/config.json (a developer's team id
    must not leak in) and writes gateway tokens to ~/.prime/sandbox_auth_cache.json (not the real one)."""
    home.mkdir(parents=True, exist_ok=True)
    want = {"PRIME_API_BASE_URL": url, "HOME": str(home)}
    saved = {k: os.environ.get(k) for k in [*want, "PRIME_TEAM_ID", "PRIME_CONTEXT"]}
    os.environ.update(want)
    os.environ.pop("PRIME_TEAM_ID", None)
    os.environ.pop("PRIME_CONTEXT", None)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextmanager
def backend(tmp: Path, faults: str = "none", **overrides) -> Iterator[PrimeBackend]:
    with running(faults, root=tmp / "prime-fake") as fake, pointed_at(fake.url, tmp / "prime-home"):
        b = PrimeBackend(fake_config(**overrides), FAKE_KEY)
        b.fake = fake  # type: ignore[attr-defined] - the fault tests read its counters
        yield b
