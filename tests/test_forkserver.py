"""The emulators' forkserver (decathlon.emulators.kit.forkserver): an emulator forked ready-imported behaves as the
spawned command would (ready line, a served request, exit codes, its log), a bad request is answered with a reason,
a requester that hangs up takes its emulator with it, and nobody but its user can ask it for anything."""
from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from decathlon.emulators.kit.forked import ForkServer, ForkServerError

BOUND = 30.0


def _run(coro):
    return asyncio.run(asyncio.wait_for(coro, BOUND))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


@pytest.fixture
def server(tmp_path):
    (tmp_path / "root").mkdir()
    return ForkServer(sys.executable, tmp_path / "control" / "forkserver.sock", tmp_path / "forkserver.log",
                      ["workspace"])


def test_a_forked_emulator_serves_as_the_spawned_one_and_ends_on_sigterm_with_0(server, tmp_path):
    async def go():
        try:
            proc = await server.fork("workspace", ["--root", str(tmp_path / "root")], tmp_path / "ws.log")
            line = (await asyncio.wait_for(proc.stdout.readline(), BOUND)).decode()
            assert line.startswith("ready workspace "), line
            port = json.loads(line.split(" ", 2)[2])["http"]
            assert Path(f"/proc/{proc.pid}/comm").read_text().strip() == "workspace"  # what ps and top show
            req = urllib.request.Request(f"http://127.0.0.1:{port}/drive/v3/files/nope",
                                         headers={"Authorization": "Bearer t"})
            try:
                await asyncio.to_thread(urllib.request.urlopen, req, timeout=10)
            except urllib.error.HTTPError as exc:  # Google's shape for a file that is not there
                assert exc.code == 404 and json.loads(exc.read())["error"]["errors"][0]["reason"] == "notFound"
            else:
                raise AssertionError("a missing file was found")
            proc.terminate()
            assert await proc.wait() == 0
            assert not _alive(proc.pid)
        finally:
            await server.stop()
    _run(go())
    assert (tmp_path / "control").stat().st_mode & 0o777 == 0o700
    assert not (tmp_path / "control" / "forkserver.sock").exists()  # gone with the forkserver


def test_a_bad_command_line_exits_2_with_its_usage_in_the_log_and_a_kill_is_minus_9(server, tmp_path):
    async def go():
        try:
            bad = await server.fork("workspace", ["--root", str(tmp_path), "--no-such-option"], tmp_path / "ws.log")
            assert await bad.wait() == 2
            good = await server.fork("workspace", ["--root", str(tmp_path / "root")], tmp_path / "ws.log")
            await asyncio.wait_for(good.stdout.readline(), BOUND)
            good.kill()
            assert await good.wait() == -9
        finally:
            await server.stop()
    _run(go())
    assert "unrecognized arguments: --no-such-option" in (tmp_path / "ws.log").read_text()


@pytest.mark.parametrize("name, why", [("nope", "no emulator 'nope'"), ("../etc", "not an emulator name"),
                                       ("kit", "no emulator 'kit'")])
def test_what_is_not_an_emulator_is_refused_with_the_reason(server, tmp_path, name, why):
    async def go():
        try:
            with pytest.raises(ForkServerError, match=why):
                await server.fork(name, [], tmp_path / "x.log")
            # ... and the forkserver goes on serving
            ok = await server.fork("workspace", ["--root", str(tmp_path / "root")], tmp_path / "ws.log")
            assert (await asyncio.wait_for(ok.stdout.readline(), BOUND)).startswith(b"ready workspace ")
        finally:
            await server.stop()
    _run(go())


def _raw_request(path: Path, request: bytes, fds: list[int]) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(BOUND)
    sock.connect(str(path))
    socket.send_fds(sock, [request], fds)
    return sock


def test_garbage_requests_are_answered_and_a_requester_that_hangs_up_takes_its_emulator_along(server, tmp_path):
    sock_path = tmp_path / "control" / "forkserver.sock"

    async def go():
        server.start()
        await server._ready
        out_r, out_w = os.pipe()
        err = os.open(tmp_path / "ws.log", os.O_WRONLY | os.O_CREAT)
        try:
            for garbage, why in ((b"{not json\n", "Expecting"), (b'{"name": "workspace"}\n', "a request is"),
                                 (b'{"name": 1, "argv": [], "env": {}}\n', "a request is")):
                s = await asyncio.to_thread(_raw_request, sock_path, garbage, [out_w, err])
                answer = json.loads(s.makefile("rb").readline())
                s.close()
                assert why in answer["error"], answer
            s = await asyncio.to_thread(_raw_request, sock_path, b'{"name": "workspace", "argv": [], "env": {}}\n', [])
            assert "2 file descriptors" in json.loads(s.makefile("rb").readline())["error"]
            s.close()
            request = json.dumps({"name": "workspace", "argv": ["--root", str(tmp_path / "root")],
                                  "env": dict(os.environ)}).encode() + b"\n"
            s = await asyncio.to_thread(_raw_request, sock_path, request, [out_w, err])
            pid = json.loads(s.makefile("rb").readline())["pid"]
            assert os.read(out_r, 200).startswith(b"ready workspace ")
            s.close()  # the requester is gone
            deadline = time.monotonic() + 10
            while _alive(pid) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert not _alive(pid)
        finally:
            for fd in (out_r, out_w, err):
                os.close(fd)
            await server.stop()
    _run(go())


def test_the_forkserver_takes_its_emulators_along_when_it_is_stopped(server, tmp_path):
    async def go():
        procs = [await server.fork("workspace", ["--root", str(tmp_path / "root")], tmp_path / "ws.log")
                 for _ in range(2)]
        for p in procs:
            await asyncio.wait_for(p.stdout.readline(), BOUND)
        await server.stop()
        codes = [await p.wait() for p in procs]
        assert all(not _alive(p.pid) for p in procs)
        return codes
    assert _run(go()) == [0, 0]  # each stopped by SIGTERM, as the runtime ends on it


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
def test_another_user_cannot_reach_the_forkserver(server, tmp_path):
    async def go():
        server.start()
        await server._ready
        tmp_path.chmod(0o755)
        probe = ("import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(sys.argv[1])\n"
                 "except PermissionError:\n print('refused')\nelse:\n print('connected')\n")
        out = subprocess.run(["/usr/bin/python3", "-c", probe, str(tmp_path / "control" / "forkserver.sock")],
                             user=65534, capture_output=True, text=True, timeout=BOUND)
        await server.stop()
        return out.stdout.strip()
    assert _run(go()) == "refused"


def test_a_forkserver_that_cannot_start_is_named(tmp_path):
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'no such module' >&2\nexit 1\n")
    python.chmod(0o755)
    server = ForkServer(str(python), tmp_path / "control" / "fs.sock", tmp_path / "fs.log")

    async def go():
        with pytest.raises(ForkServerError, match="exited with code 1 before it was ready.*no such module"):
            await server.fork("workspace", [], tmp_path / "ws.log")
        await server.stop()
    _run(go())


def test_a_socket_deeper_than_sun_path_allows_still_serves(tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60) / "control"
    (tmp_path / "root").mkdir()
    server = ForkServer(sys.executable, deep / "forkserver.sock", tmp_path / "fs.log", ["workspace"])
    assert len(str(deep / "forkserver.sock")) > 107

    async def go():
        try:
            proc = await server.fork("workspace", ["--root", str(tmp_path / "root")], tmp_path / "ws.log")
            assert (await asyncio.wait_for(proc.stdout.readline(), BOUND)).startswith(b"ready workspace ")
        finally:
            await server.stop()
    _run(go())


def test_an_emulator_holds_nothing_of_the_forkserver_so_another_ones_end_is_seen(server, tmp_path):
    """Emulator B is forked while A's connection is open: B must not keep a copy of it, or A's requester would never
    see that connection close after A's exit."""
    sock_path = tmp_path / "control" / "forkserver.sock"

    async def go():
        server.start()
        await server._ready
        err = os.open(tmp_path / "ws.log", os.O_WRONLY | os.O_CREAT)
        pipes = [os.pipe(), os.pipe()]
        socks = []
        try:
            for r, w in pipes:
                request = json.dumps({"name": "workspace", "argv": ["--root", str(tmp_path / "root")],
                                      "env": dict(os.environ)}).encode() + b"\n"
                s = await asyncio.to_thread(_raw_request, sock_path, request, [w, err])
                socks.append(s)
                assert "pid" in json.loads(s.makefile("rb").readline())
                assert os.read(r, 200).startswith(b"ready workspace ")
            a = socks[0]
            a.sendall(b'{"signal": 15}\n')
            a.settimeout(10)
            rest = b""
            while True:
                chunk = await asyncio.to_thread(a.recv, 4096)
                if not chunk:
                    break
                rest += chunk
            assert json.loads(rest) == {"exit": 0}
        finally:
            for s in socks:
                s.close()
            for fd in (err, *(fd for p in pipes for fd in p)):
                os.close(fd)
            await server.stop()
    _run(go())
