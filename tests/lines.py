"""A bounded read of a child's line: a ready line that never comes fails its test in seconds instead of
holding CI to its limit (a bare `proc.stdout.readline()` waits forever on a child that hangs before printing)."""
from __future__ import annotations

import queue
import subprocess
import threading
from typing import AnyStr, IO

import pytest

READY_TIMEOUT = 60.0  # a start-up measured in seconds, with room for a loaded 2-core CI machine


def readline(proc: subprocess.Popen, timeout: float = READY_TIMEOUT, what: str = "its ready line",
             stream: IO[AnyStr] | None = None) -> AnyStr:
    """The next line of `proc`'s stdout (or `stream`), or the test fails with `proc` killed (so that a `with Popen`
    block or a `wait()` after it returns too). An empty line still means the child closed its output."""
    source = stream if stream is not None else proc.stdout
    assert source is not None, "the child's output is not a pipe"
    lines: queue.Queue = queue.Queue(maxsize=1)
    threading.Thread(target=lambda: lines.put(source.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        proc.kill()
        pytest.fail(f"{what} did not come within {timeout:.0f} s (pid {proc.pid}, killed)")
