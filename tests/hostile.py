"""A hostile agent's episode, driven by hand for the adversarial suites: setup, the agent's own calls,
evaluate, with the sandbox kept up for the checks after."""
from __future__ import annotations

import json
import uuid
from pathlib import Path

from conftest import LAUNCH, MINI
from decathlon.backends.base import SandboxSpec
from decathlon.core.task_session import TaskSession

CLAIM = [{"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "local-claim_done", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "done"}]


class Episode:
    """One episode driven by hand: setup, the agent's calls, evaluate; the sandbox stays up for checks."""

    def __init__(self, backend, task: str, source: Path = MINI) -> None:
        self.backend, self.task, self.source = backend, task, source

    async def __aenter__(self) -> "Episode":
        self.box = await self.backend.acquire(SandboxSpec(uuid.uuid4().hex[:12], uuid.uuid4().hex, self.task,
                                                          self.source))
        try:
            self.session = TaskSession(self.box)
            self.setup = await self.session.setup(self.task, LAUNCH)
        except BaseException:
            await self.box.release()
            raise
        self.ws = self.setup.workspace
        return self

    async def __aexit__(self, *exc) -> None:
        await self.box.release()

    @property
    def source_path(self) -> str:
        return self.box.source_path

    async def run_script(self, code: str, name: str = "attack.py") -> str:
        """What a hostile agent does with the tools it has: write a script, run it."""
        wrote = await self.session.execute("filesystem-write_file", json.dumps({"path": f"{self.ws}/{name}",
                                                                               "content": code}))
        assert not wrote.is_error, wrote
        ran = await self.session.execute("terminal-run_command", json.dumps({"command": f"python3 {name}"}))
        return ran.content

    async def evaluate(self):
        return await self.session.evaluate([{"role": "system", "content": self.setup.system_prompt},
                                            {"role": "user", "content": self.setup.prompt}, *CLAIM])

    async def sh(self, script: str) -> str:
        """A command of ours in the sandbox (as root on compose, to look where the agent cannot)."""
        res = await self.box.exec(["sh", "-c", script], timeout=60)
        return res.stdout

    async def python(self, code: str, timeout: int = 60) -> str:
        """The agent's python tool (local-python-execute): what it printed."""
        res = await self.session.execute("local-python-execute", json.dumps({"code": code, "timeout": timeout}))
        return res.content
