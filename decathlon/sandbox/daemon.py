"""The per-episode daemon: holds every MCP session and answers the light client over a Unix socket.

Started (detached) by `task-api setup`; stopped by `task-api teardown`, SIGTERM, or its lifetime cap.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import BinaryIO

from decathlon.errors import InfraError, Kind
from decathlon.sandbox.home import Home
from decathlon.sandbox.local_tools import GROUPS, tools_for
from decathlon.sandbox.local_tools.base import Context
from decathlon.sandbox.oom import oom_kills
from decathlon.contract.replies import ContextRequest, ExecuteReply, dump
from decathlon.sandbox import reaper
from decathlon.sandbox.mcp_pool import HeldServer, start_all, stop_all
from decathlon.tape.canonical import tokenize
from decathlon.tape.errors import CassetteError
from decathlon.tape.redact import Redactor, secrets_from_env
from decathlon.tape.store import load as load_cassette_file
from decathlon.sandbox.replay.server import build_server as build_replay_server
from decathlon.sandbox import jail, services
from decathlon.sandbox.clock import AgentClock
from decathlon.sandbox.netns import NetnsError, enter as enter_netns
from decathlon.sandbox.recording import FrameworkReplay, LocalReplay, Recorder
from decathlon.sandbox.servers_config import ServerSpec
from decathlon.sandbox.tool_calls import Executor, elapsed_ms
from decathlon.sandbox.users import Users

MAX_LIFETIME = float(os.environ.get("DECATHLON_DAEMON_MAX_SECONDS", str(6 * 3600)))
MAX_REQUEST = 64 << 20
# Set by a backend whose sandbox has a memory limit: every tool call's reply then says how many
# processes the kernel's OOM killer took in it so far, so the host can stop trusting the sandbox.
REPORT_OOM = os.environ.get("TASK_API_REPORT_OOM") == "1"


def _write_atomic(path: Path, obj: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def _replay_factory(name: str, recording: dict, workspace: Path):
    return lambda: build_replay_server(name, recording, workspace)


async def _read_all(reader: asyncio.StreamReader) -> bytes:
    chunks, size = [], 0
    while chunk := await reader.read(1 << 16):
        size += len(chunk)
        if size > MAX_REQUEST:
            raise InfraError(Kind.BAD_REQUEST, f"request larger than {MAX_REQUEST} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def load_cassette(path: Path) -> dict:
    try:
        return load_cassette_file(path)
    except CassetteError as exc:
        raise InfraError(exc.kind, exc.message) from None


class Daemon:
    def __init__(self, home: Home, spec: dict) -> None:
        self.home = home
        self.spec = spec
        self.servers: dict[str, HeldServer] = {}
        self.executor: Executor | None = None
        self.done = asyncio.Event()

    def tool_schemas(self) -> list[dict]:
        schemas = []
        for name in self.spec["server_order"]:
            for t in self.servers[name].tools:
                schemas.append({"type": "function", "function": {
                    "name": f"{name}-{t.name}", "description": t.description or "",
                    "parameters": t.input_schema or {"type": "object", "properties": {}}}})
        assert self.executor is not None
        schemas += [tool.schema() for tool in self.executor.local.values()]
        return schemas

    async def start(self) -> dict:
        specs = [ServerSpec.from_json(s) for s in self.spec["servers"]]
        workspace = Path(self.spec["workspace"])
        mode = self.spec.get("mode", "live")
        factories, local_replay, framework, self.recorder = {}, None, None, None
        if mode == "rerun":
            # Only the servers that cannot run here are answered from the recording; the rest are live,
            # and so are the local tools (python-execute runs the recorded code again).
            cassette = load_cassette(Path(self.spec["cassette"]))
            # A server the recorded run never called has nothing recorded: it answers nothing, as then.
            empty: dict[str, list] = {"tools": [], "interactions": []}
            factories = {s.name: _replay_factory(s.name, cassette["servers"].get(s.name, empty), workspace)
                         for s in specs if s.command == "<replay>"}
        if mode == "replay":
            cassette = load_cassette(Path(self.spec["cassette"]))
            factories = {s.name: _replay_factory(s.name, cassette["servers"][s.name], workspace) for s in specs}
            local_replay = LocalReplay(cassette.get("local", {}), workspace)
            if "framework" in cassette:
                framework = FrameworkReplay(cassette["framework"], workspace)
        self.servers = await start_all(specs, self.home.server_logs, factories)
        if mode == "record":
            self.recorder = Recorder(workspace)
            for name in self.spec["server_order"]:
                self.recorder.add_server(name, [t.model_dump(by_alias=True, mode="json", exclude_none=True)
                                                for t in self.servers[name].tools])
        local, unknown = tools_for(self.spec["local_tools"])
        if unknown:  # it would run, but not as the task was written
            raise InfraError(Kind.UNKNOWN_LOCAL_TOOLS, f"the task asks for built-in tool group(s) {', '.join(unknown)}, "
                             f"which this sandbox does not implement (it has: {', '.join(sorted(GROUPS))})")
        context = Context(workspace, clock=AgentClock.from_json(self.spec.get("agent_clock")))
        self.executor = Executor(self.servers, local, context, self.recorder, local_replay, framework)
        return {"ok": True, "tools": self.tool_schemas(),
                "servers": {n: {"tools": len(h.tools), "startup_ms": round(h.startup_ms, 1)}
                            for n, h in sorted(self.servers.items())}}

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Every request gets one JSON reply, whatever it holds: a dropped connection reads as a dead
        daemon on the host, which a malformed call must never fake."""
        try:
            try:
                raw = await _read_all(reader)
                reply = await self.dispatch(json.loads(raw))
            except InfraError as exc:
                reply = exc.reply()
            except RecursionError:
                reply = {"error": {"kind": "bad_request", "message": "the request is nested too deeply to read"}}
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                reply = {"error": {"kind": "bad_request", "message": f"malformed request to the daemon: {exc!r}"}}
            except Exception as exc:  # noqa: BLE001 - still an answer; the daemon lives on
                reply = {"error": {"kind": "internal_error", "message": f"the episode daemon failed: {exc!r}"}}
            try:
                data = json.dumps(reply, ensure_ascii=False).encode()
            except UnicodeEncodeError:  # a lone surrogate in a tool's output: escaped instead
                data = json.dumps(reply).encode()
            writer.write(data)
            await writer.drain()
        except OSError:
            pass  # the client went away first: nobody is left to answer
        finally:
            writer.close()

    async def dispatch(self, req: dict) -> dict:
        if not isinstance(req, dict) or not isinstance(req.get("op"), str):
            raise InfraError(Kind.BAD_REQUEST, 'a request is a JSON object with an "op" string')
        op = req["op"]
        assert self.executor is not None
        if op == "execute":
            tool, args = req.get("tool"), req.get("args")
            if not isinstance(tool, str):
                raise InfraError(Kind.BAD_REQUEST, f'"tool" must be a string, not {type(tool).__name__}')
            if args is not None and not isinstance(args, str):
                # Arguments sent as a JSON value rather than its text: the same call, as text (a value
                # that is not an object then gets Toolathlon's invalid-arguments result).
                args = json.dumps(args, ensure_ascii=False)
            start = time.monotonic()
            out = await self.executor.run(tool, args)
            # A tool answered by a service that died is no result of the agent's: the episode is infra's.
            services.check(self.spec.get("services"), "during the agent's tool call")
            reply = ExecuteReply(content=out.content, is_error=out.is_error, elapsed_ms=elapsed_ms(start),
                                 context=ContextRequest(**out.context) if out.context else None,
                                 oom_kills=oom_kills() if REPORT_OOM else None)
            return dump(reply, drop_none=True)
        if op == "status":
            return {"alive": True, "pid": os.getpid(), "tool_calls": self.executor.seq,
                    "servers": {n: {"running": h.session is not None} for n, h in sorted(self.servers.items())}}
        if op == "recording":
            if self.recorder is None:
                raise InfraError(Kind.BAD_REQUEST, "this episode is not being recorded (setup --mode record)")
            # The servers stop first, so their recorded HTTP traffic is flushed before it is collected.
            await stop_all(self.servers)
            # Redacted here: only the daemon knows the servers' environments (credentials from configs).
            envs = [s.get("env") or {} for s in self.spec["servers"]]
            redactor = Redactor(secrets_from_env(*envs))
            messages = tokenize(req.get("messages") or [], self.spec["workspace"])
            return {"recording": redactor.apply(self.recorder.to_json()), "messages": redactor.apply(messages)}
        if op == "shutdown":
            self.done.set()
            return {"stopped": True}
        raise InfraError(Kind.BAD_REQUEST, f"unknown daemon operation {op!r}")

    async def serve(self) -> None:
        sock = self.home.socket
        try:
            ready = await self.start()
        except InfraError as exc:
            _write_atomic(self.home.ready, {"ok": False, **exc.reply()})
            return
        except Exception as exc:  # an unforeseen failure still reaches setup, named
            _write_atomic(self.home.ready, {"ok": False, "error": {"kind": "daemon_crash", "message": repr(exc)}})
            raise
        if sock.exists():
            sock.unlink()
        server = await asyncio.start_unix_server(self.handle, path=str(sock))
        if os.environ.get("TASK_API_SOCKET"):
            # Reached from outside by whoever the backend runs as (its folder is what keeps others out).
            os.chmod(sock, 0o666)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.done.set)
        _write_atomic(self.home.ready, ready)
        try:
            await asyncio.wait_for(self.done.wait(), MAX_LIFETIME)
        except asyncio.TimeoutError:
            print(f"daemon: lifetime cap of {MAX_LIFETIME:.0f} s reached; stopping", file=sys.stderr)
        finally:
            server.close()
            sock.unlink(missing_ok=True)
            await stop_all(self.servers)
            # What the agent started and left behind (its own sessions included) ends with the episode.
            reaper.kill_descendants()


def become_agent(spec: dict) -> None:
    """Where the daemon starts privileged (the local backend as root, whose zygote is root's): into the
    episode's network namespace and its own view of the files (decathlon.sandbox.jail), then the agent's user for
    good, before anything of the agent's runs. In a container the daemon already is the agent."""
    netns = spec.get("netns")
    if netns:
        try:
            enter_netns(int(netns))
        except NetnsError as exc:
            raise InfraError(Kind.SERVICE_DIED, f"the episode's network namespace is gone ({exc})") from None
    users = Users.from_env()
    if not users.separated or os.geteuid() == users.agent:
        return
    try:
        if os.environ.get(jail.HIDE_ENV):  # the local backend's: in a container, nothing of the host is there
            jail.enter(jail.hidden(spec.get("hide")))
        users.become("agent")
    except OSError as exc:
        raise InfraError(Kind.PRIVILEGE, f"the episode daemon could not become the agent's user: {exc}") from None
    os.environ.update(USER="agent", LOGNAME="agent")
    if not os.access(os.environ.get("HOME", "/"), os.W_OK) and spec.get("agent_home"):
        os.environ["HOME"] = spec["agent_home"]  # the host's HOME (root's) is not the agent's


def run(home: Home, spec_stream: BinaryIO) -> None:
    """Setup starts the daemon before preprocess and sends its spec (over a pipe or socket, never a file:
    the servers' environments may hold credentials) once it knows the servers."""
    home.pidfile.write_text(str(os.getpid()))
    reaper.become_subreaper()  # orphans of the agent's processes come here, not to init
    try:
        raw = spec_stream.read()
        spec_stream.close()
        if not raw:
            raise SystemExit("daemon: setup closed the pipe without a spec (it failed first)")
        spec = json.loads(raw)
        try:
            become_agent(spec)
        except InfraError as exc:
            _write_atomic(home.ready, {"ok": False, **exc.reply()})
            return
        asyncio.run(Daemon(home, spec).serve())
    finally:
        home.pidfile.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="task-api-daemon")
    parser.add_argument("--home", required=True)
    ns = parser.parse_args(argv)
    run(Home(Path(ns.home)), sys.stdin.buffer)


if __name__ == "__main__":
    main()
