"""The SaaS virtualenv (ci/servers/saas.txt): the emulators' interpreter, and the one that has the vendors' client
libraries the tests drive them with. Missing, a test skips, or fails where CI requires it."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


SERVERS = Path(os.environ.get("DECATHLON_SERVERS_DIR") or REPO / ".servers")


def require(path: Path, why: str) -> Path:
    """`path` must exist for the test: missing, it skips, or fails where CI (or DECATHLON_REQUIRE_SAAS=1) requires it."""
    if not path.exists():
        message = f"{path} is missing: {why}"
        if os.environ.get("CI") == "true" or os.environ.get("DECATHLON_REQUIRE_SAAS") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


def saas_python() -> Path:
    return require(SERVERS / "saas" / "bin" / "python",
                   "`python ci/install_servers.py` builds the SaaS virtualenv (ci/servers/saas.txt)")


def run_client(code: str, *, env: dict[str, str] | None = None, cwd: Path | None = None,
               timeout: float = 120) -> subprocess.CompletedProcess:
    """Python `code` run by the SaaS virtualenv's interpreter (the vendors' real clients)."""
    return subprocess.run([str(saas_python()), "-c", code], capture_output=True, text=True, timeout=timeout,
                          cwd=str(cwd) if cwd else None, env={**os.environ, **(env or {})})
