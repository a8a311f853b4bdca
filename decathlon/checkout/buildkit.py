"""A BuildKit build through the Docker Engine's own API, for a CLI that has no BuildKit.

The docker CLI (28) hands BuildKit builds to its buildx plugin, and refuses them without it; Debian's engine
(20.10) has BuildKit built in all the same, behind `POST /build?version=2`. This sends the build context as
a tar (no session: the Dockerfile may use `RUN --mount=type=bind` of the context and `type=cache`, nothing that
needs the client) and turns the progress BuildKit streams back (base64 protobuf `StatusResponse` messages in
`moby.buildkit.trace` lines) into buildx's plain log: `#N [stage k/n] STEP`, then `#N CACHED` or
`#N DONE 1.2s`, with the step's own output between. Every step is said as it starts, so a build of minutes is
never one silent line, and the log shows which layers came from the cache.
"""
from __future__ import annotations

import base64
import http.client
import json
import os
import re
import socket
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, IO, Iterator

from decathlon.errors import InfraError, Kind

API = "v1.41"  # Engine 20.10's; BuildKit's /build has not changed since
READ_TIMEOUT = 900.0  # no word from the engine for this long: the build is stuck


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.path)
        self.sock = sock


def connection(timeout: float = READ_TIMEOUT) -> http.client.HTTPConnection:
    """To the engine DOCKER_HOST names (unix:// or plain tcp://), else /var/run/docker.sock."""
    host = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    url = urllib.parse.urlparse(host)
    if url.scheme == "unix":
        return _UnixConnection(url.path, timeout)
    if url.scheme == "tcp" and not os.environ.get("DOCKER_TLS_VERIFY"):
        return http.client.HTTPConnection(url.hostname or "localhost", url.port or 2375, timeout=timeout)
    raise InfraError(Kind.IMAGE_BUILD, f"the image build talks to the engine's API itself (BuildKit, which this docker CLI "
                     f"cannot drive without buildx), over a unix socket or plain tcp: DOCKER_HOST={host} is neither")


# --- the protobuf of BuildKit's progress (moby/buildkit api/services/control: StatusResponse), read by hand ---

def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def _fields(buf: bytes) -> Iterator[tuple[int, int | bytes]]:
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            n, i = _varint(buf, i)
            value, i = buf[i:i + n], i + n
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"protobuf wire type {wire}")
        yield number, value


def _message(buf: bytes) -> dict[int, int | bytes]:
    """A message's fields by number (the last of a repeated one: this reads none that repeats)."""
    return dict(_fields(buf))


def _text(parts: dict[int, int | bytes], number: int) -> str:
    value = parts.get(number)
    return value.decode(errors="replace") if isinstance(value, bytes) else ""


def _seconds(parts: dict[int, int | bytes], number: int) -> float | None:
    value = parts.get(number)
    if not isinstance(value, bytes):
        return None
    ts = _message(value)
    seconds, nanos = ts.get(1, 0), ts.get(2, 0)
    return (seconds if isinstance(seconds, int) else 0) + (nanos if isinstance(nanos, int) else 0) / 1e9


def short(step: str) -> str:
    """A step as a person reads it: `RUN --mount=… --mount=… cmd` is `RUN cmd`."""
    return re.sub(r"\s+", " ", re.sub(r"--mount=\S+\s*", "", step)).strip()


@dataclass
class Vertex:
    """One step of the build: `[stage k/n] RUN …`, `[internal] load remote build context`, …"""
    digest: str
    number: int
    name: str = ""
    cached: bool = False
    started: float | None = None
    completed: float | None = None
    error: str = ""
    said: set[str] = field(default_factory=set)


@dataclass
class Progress:
    """The build's steps as BuildKit reports them, written as buildx's plain progress."""
    log: IO[str]
    say: Callable[[str], None]
    vertexes: dict[str, Vertex] = field(default_factory=dict)

    def trace(self, aux: str) -> None:
        # StatusResponse: vertexes 1, statuses 2 (byte counts: not shown), logs 3.
        for number, value in _fields(base64.b64decode(aux)):
            if number == 1 and isinstance(value, bytes):
                self._vertex(value)
            elif number == 3 and isinstance(value, bytes):
                self._log(value)

    def _get(self, digest: str) -> Vertex:
        if digest not in self.vertexes:
            self.vertexes[digest] = Vertex(digest, len(self.vertexes) + 1)
        return self.vertexes[digest]

    def _vertex(self, buf: bytes) -> None:
        # Vertex: digest 1, inputs 2, name 3, cached 4, started 5, completed 6, error 7.
        parts = _message(buf)
        v = self._get(_text(parts, 1))
        v.name = _text(parts, 3) or v.name
        v.cached = v.cached or bool(parts.get(4))
        v.started = _seconds(parts, 5) or v.started
        v.completed = _seconds(parts, 6) or v.completed
        v.error = _text(parts, 7) or v.error
        if "start" not in v.said and (v.started is not None or v.cached):
            v.said.add("start")
            self.log.write(f"#{v.number} {v.name}\n")
            if not v.name.startswith("[internal]"):
                self.say(short(v.name))
        if "end" not in v.said and (v.completed is not None or v.cached):
            v.said.add("end")
            if v.error:
                self.log.write(f"#{v.number} ERROR: {v.error}\n")
            elif v.cached:
                self.log.write(f"#{v.number} CACHED\n")
            else:
                took = (v.completed or 0) - (v.started or v.completed or 0)
                self.log.write(f"#{v.number} DONE {took:.1f}s\n")
                if took >= 10:
                    self.say(f"  done in {took:.0f} s: {short(v.name)}")
            self.log.flush()

    def _log(self, buf: bytes) -> None:
        # VertexLog: vertex 1, timestamp 2, stream 3, msg 4.
        parts = _message(buf)
        v = self._get(_text(parts, 1))
        for line in _text(parts, 4).splitlines():
            self.log.write(f"#{v.number} {line}\n")

    def cached_steps(self) -> tuple[int, int]:
        """(cached, all) of the build's own steps (BuildKit's [internal] ones aside)."""
        steps = [v for v in self.vertexes.values() if not v.name.startswith("[internal]") and v.name]
        return sum(v.cached for v in steps), len(steps)


def build(context_tar: Path, params: dict[str, str], log: Path, say: Callable[[str], None], timeout: float) -> str:
    """POST /build?version=2 with the tar as the context; the image id. Output (plain progress) in `log`."""
    query = urllib.parse.urlencode({"version": "2", "rm": "1", "forcerm": "1", **params})
    began = time.monotonic()
    conn = connection(min(READ_TIMEOUT, timeout))
    image_id = ""
    failure = ""
    with open(log, "w") as out, open(context_tar, "rb") as body:
        progress = Progress(out, say)
        try:
            conn.request("POST", f"/{API}/build?{query}", body=body,
                         headers={"Content-Type": "application/x-tar", "Content-Length": str(context_tar.stat().st_size)})
            resp = conn.getresponse()
            if resp.status != 200:
                raise InfraError(Kind.IMAGE_BUILD, f"the engine refused the build ({resp.status}): "
                                 f"{resp.read().decode(errors='replace')[:500]}")
            while True:
                if time.monotonic() - began > timeout:
                    raise InfraError(Kind.IMAGE_BUILD, f"the build ran over {timeout:.0f} s; see {log}")
                line = resp.readline()
                if not line:
                    break
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if msg.get("id") == "moby.buildkit.trace" and isinstance(msg.get("aux"), str):
                    progress.trace(msg["aux"])
                elif msg.get("id") == "moby.image.id":
                    image_id = (msg.get("aux") or {}).get("ID", "")
                elif msg.get("error") or msg.get("errorDetail"):
                    failure = (msg.get("errorDetail") or {}).get("message") or msg.get("error") or "failed"
                    out.write(f"ERROR: {failure}\n")
                elif msg.get("stream"):
                    out.write(msg["stream"])
        except (OSError, http.client.HTTPException) as exc:
            raise InfraError(Kind.IMAGE_BUILD, f"the build's connection to the engine broke ({exc}); see {log}") from None
        finally:
            conn.close()
        cached, steps = progress.cached_steps()
        out.write(f"# {cached} of {steps} steps from the cache, {time.monotonic() - began:.1f} s\n")
    if failure or not image_id:
        raise InfraError(Kind.IMAGE_BUILD, f"the build failed: {failure or 'the engine named no image'}; see {log}")
    return image_id
