"""The direct channel: one request to an episode daemon's Unix socket, straight from the host.

The same JSON request and reply as `task-api execute` prints, without a process in between. Backends
whose daemon socket the host can reach (local: in the episode's folder; compose: a bind-mounted
folder) use it for tool calls.
"""
from __future__ import annotations

import asyncio
import json
import os
import socket
import struct

from decathlon.errors import InfraError, Kind
from decathlon.contract.replies import EXECUTE_REPLY_MAX, decode, read_capped


MAX_SUN_PATH = 107  # a Unix socket address's bytes on Linux, less the terminating NUL


class NotConnected(Exception):
    """Nothing was sent: the caller may safely take another path (the daemon never saw the request)."""


def _peer_uid(writer: asyncio.StreamWriter) -> int:
    sock = writer.get_extra_info("socket")
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


async def request(path: str, payload: dict, timeout: float, peer_uid: int | None = None,
                  max_bytes: int = EXECUTE_REPLY_MAX) -> dict:
    """Send one request and read the whole reply (at most `max_bytes`, by default a tool call's: more is
    reply_too_large).

    `peer_uid`: the uid the listening process must run as; a socket that the sandbox's own user could
    have swapped (a symlink to some other socket of the host) is refused before anything is sent.
    Raises NotConnected when the socket is absent, refuses, or belongs to someone else.
    """
    folder = None
    try:
        if len(path.encode()) > MAX_SUN_PATH:
            # Longer than a socket address can be: reach it through a handle on its folder.
            folder = os.open(os.path.dirname(path), os.O_PATH | os.O_DIRECTORY)
            address = f"/proc/self/fd/{folder}/{os.path.basename(path)}"
        else:
            address = path
        reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(address), timeout)
    except (OSError, asyncio.TimeoutError) as exc:
        raise NotConnected(f"cannot connect to {path}: {exc!r}") from exc
    finally:
        if folder is not None:
            os.close(folder)
    try:
        if peer_uid is not None:
            uid = _peer_uid(writer)
            if uid != peer_uid:
                raise NotConnected(f"{path} is served by uid {uid}, not the sandbox's daemon (uid {peer_uid})")
        writer.write(json.dumps(payload).encode() + b"\n")
        await writer.drain()
        writer.write_eof()
        raw = await asyncio.wait_for(read_capped(reader, max_bytes, "the episode daemon"), timeout)
    except asyncio.TimeoutError:
        raise InfraError(Kind.EXEC_TIMEOUT, f"no answer from the episode daemon within {timeout:.0f} s") from None
    except OSError as exc:
        raise InfraError(Kind.DAEMON_DIED, f"the episode daemon broke the connection: {exc}") from exc
    finally:
        writer.close()
    if not raw:
        raise InfraError(Kind.DAEMON_DIED, "the episode daemon closed the connection without answering")
    return decode(raw, "the episode daemon", "execute")
