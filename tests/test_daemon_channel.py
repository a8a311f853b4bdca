"""The direct channel's client: what it refuses before sending, and how a broken daemon reads."""
from __future__ import annotations

import asyncio
import os
import socket
import threading
from pathlib import Path

import pytest

from decathlon.backends import daemon_channel
from decathlon.errors import InfraError


def _serve_once(path: Path, reply: bytes | None) -> tuple[threading.Thread, list[bytes]]:
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen(1)
    got: list[bytes] = []

    def run() -> None:
        conn, _ = srv.accept()
        conn.settimeout(5)
        try:
            data = b""
            while chunk := conn.recv(4096):
                data += chunk
            got.append(data)
        except socket.timeout:
            pass
        try:
            if reply is not None:
                conn.sendall(reply)
        except OSError:
            pass  # the client went away without asking
        conn.close()
        srv.close()
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, got


def test_a_reply_comes_back_whole(tmp_path):
    t, got = _serve_once(tmp_path / "d.sock", b'{"content": "ok", "is_error": false}')
    reply = asyncio.run(daemon_channel.request(str(tmp_path / "d.sock"), {"op": "execute"}, 5, peer_uid=os.getuid()))
    t.join(5)
    assert reply == {"content": "ok", "is_error": False} and got == [b'{"op": "execute"}\n']


def test_a_socket_deeper_than_an_address_allows(tmp_path, monkeypatch):
    deep = tmp_path.joinpath(*["d" * 20] * 6)
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)  # bound by a short relative name; reached by its long absolute one
    t, got = _serve_once(Path("d.sock"), b'{"ok": true}')
    path = str(deep / "d.sock")
    assert len(path) > daemon_channel.MAX_SUN_PATH
    assert asyncio.run(daemon_channel.request(path, {"op": "status"}, 5)) == {"ok": True}
    t.join(5)
    assert got == [b'{"op": "status"}\n']


def test_a_socket_of_another_uid_gets_nothing(tmp_path):
    t, got = _serve_once(tmp_path / "d.sock", b"{}")
    with pytest.raises(daemon_channel.NotConnected, match="uid"):
        asyncio.run(daemon_channel.request(str(tmp_path / "d.sock"), {"op": "execute"}, 5, peer_uid=os.getuid() + 1))
    t.join(5)
    assert got == [b""]


def test_no_socket_is_not_connected(tmp_path):
    with pytest.raises(daemon_channel.NotConnected):
        asyncio.run(daemon_channel.request(str(tmp_path / "absent.sock"), {"op": "execute"}, 5))


@pytest.mark.parametrize(("reply", "kind"), [(None, "daemon_died"), (b"[1, 2]", "bad_reply"), (b"\xff garbage", "bad_reply")])
def test_a_daemon_that_breaks_mid_call_is_named(tmp_path, reply, kind):
    t, _ = _serve_once(tmp_path / "d.sock", reply)
    with pytest.raises(InfraError) as e:
        asyncio.run(daemon_channel.request(str(tmp_path / "d.sock"), {"op": "execute"}, 5))
    t.join(5)
    assert e.value.kind == kind
