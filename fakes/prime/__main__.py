"""`python -m fakes.prime --port P [--faults SPEC] [--root DIR] [--home PATH]`: the fake Prime control
plane on loopback. Prints `prime-fake ready on http://127.0.0.1:<port>` once it accepts requests; point
the SDK at it with PRIME_API_BASE_URL."""
from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import ctypes
import signal
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import uvicorn

from fakes.prime.app import FakePrime
from fakes.prime.faults import parse
from fakes.prime.state import Registry

DEFAULT_HOME = "/episodes/home"  # the backend's default in-sandbox home (DECATHLON_PRIME_HOME)


def _die_with_parent() -> None:
    """The zygote notices its parent is gone only if it was alive when the zygote started polling; a
    fake killed during the zygote's imports would orphan it. The kernel's parent-death signal covers that."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _zygote(root: Path, procs: list) -> str:
    """One zygote for every fake sandbox: setups fork their daemons from it instead of each importing the
    MCP SDK (on a 2-core host that is the difference between 1,024 setups fitting or not)."""
    path = str(root / "zygote.sock")
    proc = subprocess.Popen([sys.executable, "-m", "decathlon.sandbox.zygote", "--socket", path, "--parent", str(os.getpid())],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=_die_with_parent)
    procs.append(proc)
    return path


class _Server(uvicorn.Server):
    """uvicorn re-raises a captured SIGTERM once it has stopped, which would kill the fake before it kills
    its sandboxes; the fake handles its own signals instead."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def main() -> None:
    p = argparse.ArgumentParser(prog="prime-fake")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--faults", default="none")
    p.add_argument("--root", type=Path, default=None, help="where sandbox directories go (default: a temp dir)")
    p.add_argument("--home", default=DEFAULT_HOME, help="the in-sandbox path that maps onto a sandbox's directory")
    p.add_argument("--no-zygote", action="store_true")
    a = p.parse_args()
    root = a.root or Path(tempfile.mkdtemp(prefix="prime-fake-"))
    root.mkdir(parents=True, exist_ok=True)
    registry = Registry(root, parse(a.faults), a.home)
    zygotes: list[subprocess.Popen] = []
    app = FakePrime(registry, None if a.no_zygote else _zygote(root, zygotes))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", a.port))
    port = sock.getsockname()[1]
    app.base_url = f"http://127.0.0.1:{port}"
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_keep_alive=30,
                            backlog=4096)
    server = _Server(config)

    def cleanup() -> None:
        # Whatever the fake's sandboxes still run dies with it: a killed test leaves no processes behind.
        for box in list(registry.sandboxes.values()):
            registry.terminate(box, "DELETED")
        for proc in zygotes:  # before its socket's directory goes
            proc.kill()
            proc.wait()
        if a.root is None:
            shutil.rmtree(root, ignore_errors=True)

    atexit.register(cleanup)

    async def serve() -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            asyncio.get_running_loop().add_signal_handler(sig, lambda: setattr(server, "should_exit", True))
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        print(f"prime-fake ready on {app.base_url}", flush=True)
        await task

    try:
        asyncio.run(serve())
    finally:
        cleanup()
        os._exit(0)


if __name__ == "__main__":
    main()
