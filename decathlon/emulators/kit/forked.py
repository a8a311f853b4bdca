"""The starter's side of decathlon.emulators.kit.forkserver: start it, fork emulators through it as processes that look
like asyncio's (pid, stdout, `wait`, `send_signal`, `kill`, `returncode`), read their ready lines and stop them. Both of
an episode's supervisors (the services', decathlon.emulators.supervisor, and the front's,
decathlon.emulators.front.backends) start, watch and stop their emulators with these alone."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path

from decathlon.emulators.kit import spawn
from decathlon.emulators.kit.unix_path import bindable


class ForkServerError(RuntimeError):
    pass


class Forked:
    """An emulator forked by the forkserver: signalled and awaited through its request's connection, so a signal
    never reaches a pid the system has given to another process meanwhile."""

    def __init__(self, pid: int, stdout: asyncio.StreamReader, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.pid, self.stdout = pid, stdout
        self._writer = writer
        self.returncode: int | None = None
        self._exit = asyncio.get_running_loop().create_task(self._await_exit(reader))

    async def _await_exit(self, reader: asyncio.StreamReader) -> int:
        line = await reader.readline()
        try:
            self.returncode = int(json.loads(line)["exit"])
        except (ValueError, KeyError, TypeError):
            # The forkserver is gone without a word (killed): its children went with it (it kills them, or the
            # parent-death check does); said as a kill, as the process is.
            self.returncode = -signal.SIGKILL
        self._writer.close()
        return self.returncode

    async def wait(self) -> int:
        return await asyncio.shield(self._exit)

    def send_signal(self, sig: int) -> None:
        if self.returncode is None and not self._writer.is_closing():
            self._writer.write(json.dumps({"signal": int(sig)}).encode() + b"\n")

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ForkServer:
    """One forkserver process, started by `start` and stopped by `stop`; `fork` waits for it to be ready."""

    def __init__(self, python: str, socket_path: Path, log: Path, preload: list[str] | None = None) -> None:
        self.python, self.path, self.log = python, socket_path, log
        self.preload = sorted(set(preload or []))
        self.proc: asyncio.subprocess.Process | None = None
        self._ready: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begins its start in the background; `fork` awaits it."""
        if self._ready is None:
            self._ready = asyncio.get_running_loop().create_task(self._start())
            self._ready.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def _start(self) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(self.log, "ab") as err:
            self.proc = await asyncio.create_subprocess_exec(
                self.python, "-m", "decathlon.emulators.kit.forkserver", "--socket", str(self.path),
                "--preload", ",".join(self.preload), "--parent", str(os.getpid()),
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=err)
        assert self.proc.stdout is not None
        try:
            line = await asyncio.wait_for(self.proc.stdout.readline(), spawn.START_TIMEOUT)
        except asyncio.TimeoutError:
            self.proc.kill()
            raise ForkServerError(f"the forkserver was not ready within {spawn.START_TIMEOUT:.0f} s; "
                                  f"log tail: {spawn.log_tail(self.log)}") from None
        if line.strip() != b"ready forkserver":
            if line and self.proc.returncode is None:
                self.proc.kill()
            code = await self.proc.wait() if not line else None
            said = f"{spawn.how(code)} before it was ready" if code is not None else f"said {line[:200]!r}"
            raise ForkServerError(f"the forkserver {said}; log tail: {spawn.log_tail(self.log)}")

    async def fork(self, name: str, argv: list[str], stderr: Path, env: dict[str, str] | None = None) -> Forked:
        """`python -m decathlon.emulators.<name> ARGV`, forked: its stdout a pipe of ours, its stderr appended to
        STDERR, its environment ENV (this process's by default)."""
        self.start()
        assert self._ready is not None
        await asyncio.shield(self._ready)
        loop = asyncio.get_running_loop()
        err = os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        try:
            out_r, out_w = os.pipe()
        except OSError:
            os.close(err)
            raise
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            address, folder = bindable(self.path)
            try:
                await loop.sock_connect(sock, address)
            finally:
                if folder is not None:
                    os.close(folder)
            request = json.dumps({"name": name, "argv": argv, "env": dict(os.environ if env is None else env)})
            sock.setblocking(True)  # one small message with its descriptors: the forkserver reads it at once
            sock.settimeout(spawn.START_TIMEOUT)
            socket.send_fds(sock, [request.encode() + b"\n"], [out_w, err])
            sock.setblocking(False)
        except BaseException:
            sock.close()
            os.close(out_r)
            raise
        finally:
            os.close(out_w)
            os.close(err)
        pipe = os.fdopen(out_r, "rb", 0)
        reader, writer = await asyncio.open_unix_connection(sock=sock)
        try:
            line = await asyncio.wait_for(reader.readline(), spawn.START_TIMEOUT)
            answer = json.loads(line) if line else {"error": "the forkserver hung up"}
            if "pid" not in answer:
                raise ForkServerError(f"the forkserver could not start {name}: {answer.get('error', answer)}")
            stdout = asyncio.StreamReader()
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdout), pipe)
        except BaseException:
            writer.close()
            pipe.close()
            raise
        return Forked(int(answer["pid"]), stdout, reader, writer)

    async def stop(self, grace: float = 2.0) -> None:
        """Its children killed, then it."""
        if self._ready is not None and not self._ready.done():
            self._ready.cancel()
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), grace + 2.0)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()
        if proc.returncode:
            print(f"the forkserver {spawn.how(proc.returncode)} when stopped", file=sys.stderr, flush=True)


async def read_ready(proc: Forked, name: str, timeout: float = spawn.START_TIMEOUT) -> dict[str, int]:
    """The ports its ready line gives; spawn.NotReady saying why not (silent too long, ended, said something else)."""
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), timeout)
    except asyncio.TimeoutError:
        raise spawn.NotReady(f"not ready within {timeout:.0f} s") from None
    text = line.decode("utf-8", "replace").strip()
    if not text:
        raise spawn.NotReady(f"{spawn.how(await proc.wait())} before it was ready")
    return spawn.parse_ready(text, name)


async def stop_all(procs: list[Forked], grace: float = 2.0) -> None:
    """SIGTERM to each, SIGKILL to any still running after `grace` seconds."""
    live = [p for p in procs if p.returncode is None]
    for p in live:
        p.terminate()
    for p in live:
        try:
            await asyncio.wait_for(p.wait(), grace)
        except asyncio.TimeoutError:
            p.kill()
            try:
                await asyncio.wait_for(p.wait(), grace)
            except asyncio.TimeoutError:  # the forkserver is wedged: stopping it kills its children
                pass
