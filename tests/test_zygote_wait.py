"""Setup waits for a zygote that is still importing instead of spawning a daemon beside it (which would import
the same modules again), and does not wait for one that is gone."""
from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

from conftest import LAUNCH, MINI
from decathlon.backends import local
from decathlon.backends.base import SandboxSpec
from decathlon.core.task_session import TaskSession
from decathlon.sandbox import setup
from decathlon.sandbox.home import Home


def _listen_later(path: str, delay: float) -> threading.Thread:
    def serve() -> None:
        time.sleep(delay)
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(1)
        conn, _ = srv.accept()
        conn.sendall(b"hello\n")
        conn.close()
        srv.close()
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return t


def test_a_zygote_still_starting_is_waited_for(tmp_path, monkeypatch):
    path = str(tmp_path / "z.sock")
    monkeypatch.setenv("TASK_API_ZYGOTE_PID", str(os.getpid()))  # alive: the one this test is
    server = _listen_later(path, 0.3)
    conn = setup._zygote_connection(path)
    assert conn is not None, "setup gave up on a zygote that was still starting"
    assert conn.makefile("rb").readline() == b"hello\n"
    conn.close()
    server.join(5)


def test_a_zygote_that_is_gone_or_unnamed_is_not_waited_for(tmp_path, monkeypatch):
    path = str(tmp_path / "z.sock")
    monkeypatch.setattr(setup, "ZYGOTE_WAIT", 60.0)
    dead = subprocess.Popen(["true"])
    dead.wait()
    for pid in (str(dead.pid), "", "not-a-pid", "1"):
        monkeypatch.setenv("TASK_API_ZYGOTE_PID", pid)
        start = time.monotonic()
        assert setup._zygote_connection(path) is None
        # Waiting out ZYGOTE_WAIT (60 s) would mean each such setup stalls for a zygote that never comes.
        assert time.monotonic() - start < 10, pid


def test_the_first_episode_of_a_process_is_forked_by_its_zygote(monkeypatch):
    """Before, setup spawned its own daemon whenever the zygote (started by that very exec) was not ready yet:
    the first episodes of every process imported the daemon twice."""
    monkeypatch.setattr(local, "_zygote", None)  # this process's next exec starts a zygote anew

    async def go() -> None:
        box = await local.LocalBackend().acquire(SandboxSpec(uuid.uuid4().hex[:12], uuid.uuid4().hex,
                                                             "csv-sales-summary", MINI))
        try:
            await TaskSession(box).setup("csv-sales-summary", LAUNCH)
            pid = Home(Path(box.root)).daemon_pid()
            assert pid is not None
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            assert local._zygote is not None
            assert ppid == local._zygote[0].pid, "the daemon was spawned, not forked by the zygote"
        finally:
            await box.release()
    asyncio.run(go())
