"""decathlon.sandbox.replay standalone: any MCP client can use a cassette's server, over stdio or streamable HTTP."""
from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

from decathlon.sandbox.replay.protocol import REPLAY_MISS_CODE

REPO = Path(__file__).resolve().parents[1]
TAPE = REPO / "fixtures" / "cassettes" / "contacts-dedupe.cassette.json"


async def _exercise(session: ClientSession, ws: Path) -> None:
    await session.initialize()
    tools = (await session.list_tools()).tools
    assert "read_file" in {t.name for t in tools}
    res = await session.call_tool("read_file", {"path": f"{ws}/contacts.csv"})
    assert res.content[0].text.startswith("name,email,phone\nAna Ruiz,")
    res = await session.call_tool("write_file", {"path": f"{ws}/contacts_clean.csv", "content": json.loads(
        TAPE.read_text())["servers"]["filesystem"]["interactions"][1]["arguments"]["content"]})
    assert res.content[0].text == f"Successfully wrote to {ws}/contacts_clean.csv"
    assert (ws / "contacts_clean.csv").read_text().startswith("name,email,phone\n")  # the side effect, replayed
    with pytest.raises(MCPError) as e:
        await session.call_tool("read_file", {"path": f"{ws}/nope.csv"})
    assert e.value.code == REPLAY_MISS_CODE and "nope.csv" in e.value.message


def test_stdio(tmp_path):
    async def main() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "decathlon.sandbox.replay", str(TAPE), "--server",
                                                                     "filesystem", "--workspace", str(tmp_path)], cwd=str(REPO))
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as session:
                await _exercise(session, tmp_path)
    asyncio.run(main())


def test_streamable_http(tmp_path):
    from mcp.client.streamable_http import streamable_http_client
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "decathlon.sandbox.replay", str(TAPE), "--server", "filesystem",
                             "--workspace", str(tmp_path), "--http", str(port)], cwd=REPO)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)

        async def main() -> None:
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (r, w):
                async with ClientSession(r, w) as session:
                    await _exercise(session, tmp_path)
        asyncio.run(main())
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_bad_cassette_is_named(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "decathlon.sandbox.replay", str(tmp_path / "x.json"), "--server", "fs"],
                          capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 2 and "x.json" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "decathlon.sandbox.replay", str(TAPE), "--server", "ghost"],
                          capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 2 and "ghost" in proc.stderr and "filesystem" in proc.stderr
