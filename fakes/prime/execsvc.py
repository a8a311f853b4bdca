"""The gateway's command service: Connect-RPC `command_session.CommandSession/Start`, as the SDK's
`execute_command` calls it (a server stream of start, output and end events). The command runs as a
local process in its sandbox's directory, in a process group of its own."""
from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator, Mapping

from connectrpc.code import Code
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from connectrpc.server import ConnectASGIApplication, Endpoint
from prime_sandboxes._proto.command_session import command_session_pb2 as pb
from prime_sandboxes.rpc_command_session import COMMAND_SESSION_START_RPC_METHOD

from fakes.prime.state import MARKER, FakeSandbox, Registry

START_PATH = "/command_session.CommandSession/Start"


class CommandService(ConnectASGIApplication):
    def __init__(self, registry: Registry, zygote: str | None) -> None:
        self.registry = registry
        self.zygote = zygote
        super().__init__(service=self, endpoints=lambda svc: {START_PATH: Endpoint.server_stream(
            COMMAND_SESSION_START_RPC_METHOD, svc.start)}, codecs=[google_protobuf_binary_codec()])

    @property
    def path(self) -> str:
        return "/command_session.CommandSession"

    def _box(self, ctx: RequestContext) -> FakeSandbox:
        token = (ctx.request_headers.get("authorization") or "").removeprefix("Bearer ")
        sid = token.removeprefix("tok-")
        box = self.registry.sandboxes.get(sid)
        if box is None or box.status in ("TERMINATED", "DELETED"):
            raise ConnectError(Code.NOT_FOUND, f"sandbox {sid} not found")
        if box.current_status() != "RUNNING" or box.unreachable:
            raise ConnectError(Code.UNAVAILABLE, f"no route to sandbox {sid}")
        return box

    def _env(self, box: FakeSandbox, envs: Mapping[str, str]) -> dict[str, str]:
        # The image's PATH has `task-api`: here, this environment's bin directory.
        env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ.get('PATH', '')}"}
        env.update({k: str(self.registry.map_path(box, v)) if v.startswith(self.registry.home) else v
                    for k, v in envs.items()})
        env["TASK_API_HOME"] = str(box.root)
        env[MARKER] = box.id
        if self.zygote:
            env["TASK_API_ZYGOTE"] = self.zygote
        return env

    async def start(self, request: pb.StartRequest, ctx: RequestContext) -> AsyncIterator[pb.StartResponse]:
        box = self._box(ctx)
        box.execs += 1
        if box.dies_after is not None and box.execs > box.dies_after:
            self.registry.terminate(box, "TERMINATED", "OOM_KILLED")
            raise ConnectError(Code.NOT_FOUND, f"sandbox {box.id} is gone")
        spec = request.command
        cwd = self.registry.map_path(box, spec.cwd) if spec.cwd else box.root
        proc = await asyncio.create_subprocess_exec(
            spec.cmd, *spec.args, cwd=str(cwd), env=self._env(box, spec.envs), start_new_session=True,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        box.pgids.add(proc.pid)
        timeout = ctx.timeout_ms
        try:
            yield pb.StartResponse(event=pb.CommandSessionEvent(start={"pid": proc.pid}))
            try:
                out, err = await asyncio.wait_for(proc.communicate(), timeout / 1000 if timeout else None)
            except asyncio.TimeoutError:
                raise ConnectError(Code.DEADLINE_EXCEEDED, "command ran over its deadline") from None
            for name, data in (("stdout", out), ("stderr", err)):
                if data:
                    yield pb.StartResponse(event=pb.CommandSessionEvent(data={name: data}))
            assert proc.returncode is not None  # communicate() waited for the exit
            code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
            yield pb.StartResponse(event=pb.CommandSessionEvent(end={"exit_code": code}))
        finally:
            # Done, timed out, or the client went away: nothing the command started lingers.
            if proc.returncode is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                await proc.wait()
            box.pgids.discard(proc.pid)
