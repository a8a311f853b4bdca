"""The compose backend's fast paths: the direct channel for tool calls and the warm pool for setup.

Both must change nothing but speed: the same replies as docker exec, one episode per container,
nothing left on the host or the engine afterwards."""
from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
import uuid

import pytest

from conftest import LAUNCH, MINI
from conformance import compose as compose_mod, require
from decathlon.backends.base import SandboxSpec
from decathlon.errors import InfraError
from decathlon.core.task_session import TaskSession

pytestmark = pytest.mark.docker
TASK = "csv-sales-summary"


@pytest.fixture
def make_backend(monkeypatch, tmp_path):
    require(compose_mod)
    from decathlon.backends.compose import ComposeBackend
    made = []

    def make(**env: str) -> ComposeBackend:
        monkeypatch.setenv("DECATHLON_COMPOSE_CHANNELS", str(tmp_path / "channels"))
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        made.append(ComposeBackend.from_env())
        return made[-1]
    yield make
    for b in made:
        asyncio.run(b.close())


def _spec(run: str) -> SandboxSpec:
    return SandboxSpec(run, uuid.uuid4().hex, TASK, MINI)


async def _pool_ready(backend, n: int) -> None:
    for _ in range(300):
        if backend.pool_ready() >= n:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"the warm pool did not reach {n} ready container(s) in 60 s")


def _managed(backend, run: str) -> list:
    return backend.client.api.containers(all=True, filters={"label": [f"decathlon.run={run}"]})


async def _calls(box) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """The same calls (a read, a listing, a bad path, an unknown tool) through exec and direct."""
    s = TaskSession(box)
    ws = (await s.setup(TASK, LAUNCH)).workspace
    calls = [("filesystem-read_file", json.dumps({"path": f"{ws}/sales.csv"})),
             ("filesystem-list_directory", json.dumps({"path": ws})),
             ("filesystem-read_file", json.dumps({"path": "/etc/nothing-here"})),
             ("no-such-tool", "{}")]
    out = {}
    for direct in (False, True):
        box.use_direct = direct
        assert box.direct is direct
        out[direct] = [((r := await s.execute(t, a)).content, r.is_error) for t, a in calls]
    return out[False], out[True]


def test_direct_channel_answers_exactly_as_exec_and_goes_with_the_container(make_backend):
    backend = make_backend()

    async def go() -> None:
        box = await backend.acquire(_spec(uuid.uuid4().hex[:12]))
        try:
            assert box.channel is not None and box.channel.is_dir()
            exec_out, direct_out = await _calls(box)
            assert direct_out == exec_out
            assert exec_out[3][1] and "no-such-tool" in exec_out[3][0]
        finally:
            await box.release()
        assert not box.channel.exists()
    asyncio.run(go())


def test_a_swapped_socket_is_refused(make_backend, tmp_path):
    """The agent owns its channel folder: if the socket there leads to some other process of the host,
    the host sends nothing to it. Exec asks instead, and finds the daemon gone from its socket, as
    after any other way the agent can break its own daemon."""
    backend = make_backend()
    decoy_path = str(tmp_path / "decoy.sock")
    decoy = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    decoy.bind(decoy_path)
    decoy.listen(4)
    received: list[bytes] = []

    def serve_decoy() -> None:
        # Answers like a daemon would, so a host that trusted it would take its reply as the tool's.
        try:
            while True:
                conn, _ = decoy.accept()
                conn.settimeout(5)
                try:
                    received.append(conn.recv(65536))
                    conn.sendall(b'{"content": "from the decoy", "is_error": false}')
                except OSError:
                    pass
                conn.close()
        except OSError:
            return  # closed: the test is over
    threading.Thread(target=serve_decoy, daemon=True).start()

    async def go() -> None:
        box = await backend.acquire(_spec(uuid.uuid4().hex[:12]))
        try:
            s = TaskSession(box)
            ws = (await s.setup(TASK, LAUNCH)).workspace
            sock = box.channel / "daemon.sock"
            sock.unlink()
            os.symlink(decoy_path, sock)
            with pytest.raises(InfraError) as e:
                await s.execute("filesystem-read_file", json.dumps({"path": f"{ws}/sales.csv"}))
            assert e.value.kind == "no_session"
            assert box.channel is None  # the channel stays off for the episode
        finally:
            await box.release()
    asyncio.run(go())
    decoy.close()
    got = b"".join(received)
    assert got == b""  # the decoy was connected to at most, never sent a request


@pytest.mark.parametrize("why", ["turned off", "folder the engine cannot see"])
def test_without_the_channel_calls_go_through_exec(make_backend, tmp_path, why):
    if why == "turned off":
        backend = make_backend(DECATHLON_COMPOSE_DIRECT="0")
    else:  # as for a runner in a container without the folder mounted at the same path
        backend = make_backend()
        backend._channel = lambda name: tmp_path / "not-there" / name

    async def go() -> None:
        box = await backend.acquire(_spec(uuid.uuid4().hex[:12]))
        try:
            assert box.channel is None and not box.direct and backend.channels is None
            s = TaskSession(box)
            ws = (await s.setup(TASK, LAUNCH)).workspace
            r = await s.execute("filesystem-read_file", json.dumps({"path": f"{ws}/sales.csv"}))
            assert not r.is_error and "Kettle" in r.content
        finally:
            await box.release()
    asyncio.run(go())


def test_warm_pool_serves_one_episode_per_container_and_leaves_nothing(make_backend, tmp_path):
    backend = make_backend(DECATHLON_COMPOSE_POOL="1")
    run = uuid.uuid4().hex[:12]

    async def episode(note: str) -> tuple[str, str, bool]:
        box = await backend.acquire(_spec(run))
        try:
            s = TaskSession(box)
            ws = (await s.setup(TASK, LAUNCH)).workspace
            seen = await s.execute("filesystem-read_file", json.dumps({"path": f"{ws}/note.txt"}))
            await s.execute("filesystem-write_file", json.dumps({"path": f"{ws}/note.txt", "content": note}))
            return box.id, box.container.labels.get("decathlon.episode", ""), seen.is_error
        finally:
            await box.release()

    async def go() -> list[tuple[str, str, bool]]:
        out = [await episode("first")]  # starts the pool (this one is a fresh container)
        await _pool_ready(backend, 1)
        out.append(await episode("second"))
        await _pool_ready(backend, 1)
        return out
    (first_id, first_label, _), (second_id, second_label, second_saw) = asyncio.run(go())
    assert first_label != "pooled" and second_label == "pooled"
    assert first_id != second_id and second_saw  # a new container: the first episode's note is not there
    assert len(_managed(backend, run)) == 1  # the pool refilled: one container waits
    asyncio.run(backend.close())
    assert _managed(backend, run) == []
    assert not any((tmp_path / "channels").iterdir())


def test_gc_removes_a_killed_runs_pool(make_backend):
    backend = make_backend(DECATHLON_COMPOSE_POOL="2")
    run = uuid.uuid4().hex[:12]

    async def go() -> None:
        box = await backend.acquire(_spec(run))
        await box.release()
        await _pool_ready(backend, 2)
    asyncio.run(go())
    assert len(_managed(backend, run)) == 2
    # As after a SIGKILL: the pool's containers are still there, found by the run's label.
    from decathlon.backends.compose import ComposeBackend
    other = ComposeBackend.from_env()
    assert asyncio.run(other.collect({"decathlon.run": run})).removed == 2
    assert _managed(backend, run) == []
