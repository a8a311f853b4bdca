"""`decathlon image build`'s own conduct, against a stand-in engine and a stand-in `docker` on PATH (the real
builds are the docker tier's): each step said as it starts and what came from the cache in the log, a failed
build named with its log, one stage per server, --base-image honoured after an earlier build on another base."""
from __future__ import annotations

import base64
import http.server
import json
import os
import socketserver
import stat
import threading
from pathlib import Path

import pytest

from decathlon.checkout import buildkit, image, image_context
from decathlon.errors import InfraError

FAKE_DOCKER = r'''#!/usr/bin/env python3
import json, os, sys
state = os.environ["FAKE_DOCKER_STATE"]
s = json.load(open(state))
a = sys.argv[1:]
if a[:1] == ["build"]:
    for i in range(1, 4):
        print(f"Step {i}/3 : RUN thing {i}", flush=True)
        print(" ---> Running in abc", flush=True)
    s["dangling"].append("sha256:stage-of-this-build")
    if os.environ.get("FAKE_DOCKER_FAIL"):
        json.dump(s, open(state, "w")); sys.exit(1)
    s["images"][a[a.index("-t") + 1]] = {l.split("=", 1)[0]: l.split("=", 1)[1]
                                       for i, l in enumerate(a) if i and a[i - 1] == "--label"}
elif a[:1] == ["images"]:
    print("\n".join(s["dangling"]))
elif a[:2] == ["image", "rm"]:
    s["dangling"] = [d for d in s["dangling"] if d not in a[2:]]
elif a[:2] == ["image", "inspect"]:
    if a[-1] not in s["images"]:
        sys.exit(1)
    if "--format" in a:
        print(s["images"][a[-1]].get("decathlon.base", ""))
json.dump(s, open(state, "w"))
'''


@pytest.fixture
def docker(tmp_path: Path, monkeypatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "docker"
    exe.write_text(FAKE_DOCKER)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"dangling": ["sha256:someone-elses"], "images": {}}))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_DOCKER_STATE", str(state))
    return state


# --- the build itself: BuildKit through the engine's API, against a stand-in engine on a unix socket -------------

def _varint(n: int) -> bytes:
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def _field(number: int, value: bytes | int) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def _trace(vertexes: list[dict] = (), logs: list[tuple[str, str]] = ()) -> bytes:
    """A `moby.buildkit.trace` line as the engine streams it (StatusResponse: vertexes 1, logs 3)."""
    msg = b""
    for v in vertexes:
        body = _field(1, v["digest"].encode()) + _field(3, v["name"].encode())
        if v.get("cached"):
            body += _field(4, 1)
        for number, at in ((5, v.get("started")), (6, v.get("completed"))):
            if at is not None:
                body += _field(number, _field(1, int(at)) + _field(2, int(at % 1 * 1e9)))
        if v.get("error"):
            body += _field(7, v["error"].encode())
        msg += _field(1, body)
    for digest, text in logs:
        msg += _field(3, _field(1, digest.encode()) + _field(4, text.encode()))
    return json.dumps({"id": "moby.buildkit.trace", "aux": base64.b64encode(msg).decode()}).encode() + b"\n"


STEPS = [_trace([{"digest": "sha256:a", "name": "[internal] load remote build context", "started": 1, "completed": 1.1}]),
         _trace([{"digest": "sha256:b", "name": "[server-excel 1/1] RUN install_servers.py excel", "cached": True}]),
         _trace([{"digest": "sha256:c", "name": "[venv 1/1] RUN uv venv", "started": 10}]),
         _trace(logs=[("sha256:c", "installed 42 packages")]),
         _trace([{"digest": "sha256:c", "name": "[venv 1/1] RUN uv venv", "started": 10, "completed": 12.5}])]


@pytest.fixture
def engine(tmp_path: Path, monkeypatch):
    """A stand-in Docker engine: answers POST /build with `replies` (JSON lines), recording each request."""
    state: dict = {"replies": [*STEPS, b'{"id": "moby.image.id", "aux": {"ID": "sha256:built"}}\n'], "requests": []}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers["Content-Length"])
            state["requests"].append((self.path, len(self.rfile.read(length))))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            for line in state["replies"]:
                self.wfile.write(line)

        def log_message(self, *args):
            pass

    class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
        daemon_threads = True

    sock = tmp_path / "engine.sock"
    server = Server(str(sock), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("DOCKER_HOST", f"unix://{sock}")
    yield state
    server.shutdown()
    server.server_close()


def test_each_step_is_said_as_it_starts_and_the_log_says_what_came_from_the_cache(engine, tmp_path: Path):
    (tmp_path / "ctx.tar").write_bytes(b"x" * 1000)
    said: list[str] = []
    image_id = buildkit.build(tmp_path / "ctx.tar", {"t": "x:1", "target": "sandbox"}, tmp_path / "log", said.append, 60)
    assert image_id == "sha256:built"
    path, size = engine["requests"][0]
    assert path.startswith("/v1.41/build?") and "version=2" in path and "target=sandbox" in path and size == 1000
    assert said[:2] == ["[server-excel 1/1] RUN install_servers.py excel", "[venv 1/1] RUN uv venv"]
    log = (tmp_path / "log").read_text()
    assert "#2 [server-excel 1/1] RUN install_servers.py excel\n#2 CACHED" in log
    assert "#3 installed 42 packages" in log and "#3 DONE 2.5s" in log
    assert log.rstrip().endswith("1 of 2 steps from the cache, " + log.rstrip().rsplit(", ", 1)[1])


def test_a_failed_build_is_named_with_its_log(engine, tmp_path: Path):
    engine["replies"] = [_trace([{"digest": "sha256:c", "name": "[venv 1/1] RUN uv venv", "started": 1, "completed": 2,
                                  "error": "exit code: 2"}]),
                         b'{"errorDetail": {"message": "executor failed running [uv venv]: exit code: 2"}}\n']
    (tmp_path / "ctx.tar").write_bytes(b"x")
    with pytest.raises(InfraError) as e:
        buildkit.build(tmp_path / "ctx.tar", {"t": "x:1"}, tmp_path / "log", lambda _: None, 60)
    assert e.value.kind == "image_build" and str(tmp_path / "log") in e.value.message and "exit code: 2" in e.value.message
    assert "#1 ERROR: exit code: 2" in (tmp_path / "log").read_text()


def test_the_server_blocks_of_the_dockerfile_become_one_stage_per_server():
    text = image_context.render_dockerfile(["excel", "git"])
    assert not [line for line in text.splitlines() if "@SERVER@" in line and not line.startswith("#")]
    assert text.count("FROM base AS server-excel\n") == 1 and text.count("FROM base AS server-git\n") == 1
    assert "COPY --from=server-git /opt/decathlon/servers/git /opt/decathlon/servers/git" in text
    # The sources come after every environment: an edit to them rebuilds none.
    assert text.index("COPY --from=server-git") < text.index("COPY ci ") < text.index("COPY src ")
    assert image_context.image_servers() == sorted(p.stem for p in (image.ROOT / "ci" / "servers").glob("*.txt")
                                                   if not p.read_text().startswith("# requires-python"))


def test_base_image_asked_for_rebuilds_an_image_built_on_another(docker: Path, tmp_path: Path):
    state = json.loads(docker.read_text())
    state["images"] = {"s:1": {image.BASE_LABEL: "base:a"}, "r:1": {image.BASE_LABEL: "base:a"}}
    docker.write_text(json.dumps(state))
    assert image.up_to_date("s:1", "r:1", None)
    assert image.up_to_date("s:1", "r:1", "base:a")
    assert not image.up_to_date("s:1", "r:1", "python:3.11-slim")
    assert not image.up_to_date("s:2", "r:1", None)
