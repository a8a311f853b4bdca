"""Starting the fake from a test or bench, reading its counters, and making the SDK's fixed rate-limit
waits fit a test's clock."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parents[2]


class Fake:
    def __init__(self, proc: subprocess.Popen, url: str) -> None:
        self.proc, self.url = proc, url

    def _call(self, method: str, path: str) -> dict:
        req = urllib.request.Request(self.url + path, method=method)
        with urllib.request.urlopen(req, timeout=60) as resp:
            return json.loads(resp.read())

    def stats(self) -> dict:
        return self._call("GET", "/_fake/stats")

    def kill(self, sandbox_id: str) -> dict:
        """The sandbox dies as if its VM went away (OOM): processes killed, status TERMINATED."""
        return self._call("POST", f"/_fake/kill/{sandbox_id}")

    def env(self) -> dict[str, str]:
        return {"PRIME_API_BASE_URL": self.url}


@contextmanager
def running(faults: str = "none", root: Path | None = None, home: str | None = None) -> Iterator[Fake]:
    argv = [sys.executable, "-m", "fakes.prime", "--port", "0", "--faults", faults]
    if root is not None:
        argv += ["--root", str(root)]
    if home is not None:
        argv += ["--home", home]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "ready on " not in line:
            raise RuntimeError(f"the fake did not start: {line!r}")
        yield Fake(proc, line.split("ready on ", 1)[1].strip())
    finally:
        proc.send_signal(signal.SIGTERM)  # uvicorn shuts down; the fake then kills its sandboxes
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@contextmanager
def fast_sdk_rate_limits(delays: tuple[float, ...] = (0.05, 0.1)) -> Iterator[None]:
    """The SDK waits a fixed 10 s then 30 s after a 429 (prime_sandboxes.core.client). Against the fake,
    whose 429 bursts are a few requests long, that is minutes of idle test time; shorten them here.
    Production keeps the SDK's schedule."""
    from prime_sandboxes.core import client as core

    wait = core._PLATFORM_RETRY_WAIT
    saved = wait._rate_limit_delays
    wait._rate_limit_delays = delays
    try:
        yield
    finally:
        wait._rate_limit_delays = saved
