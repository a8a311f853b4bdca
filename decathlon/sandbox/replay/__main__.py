"""Standalone replay: `python -m decathlon.sandbox.replay CASSETTE --server NAME [--workspace DIR] [--http PORT]`.

Serves one recorded server of a cassette over stdio (default) or streamable HTTP at /mcp, for any
MCP client.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m decathlon.sandbox.replay", description=__doc__)
    p.add_argument("cassette", type=Path)
    p.add_argument("--server", required=True, help="which recorded server to serve")
    p.add_argument("--workspace", type=Path, help="apply the recorded workspace side effects here "
                   "(and stand the recording's workspace token for this path)")
    p.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT instead of stdio")
    p.add_argument("--host", default="127.0.0.1")
    a = p.parse_args(argv)

    from decathlon.tape.errors import CassetteError
    from decathlon.tape.store import load
    try:
        cassette = load(a.cassette)
    except CassetteError as exc:
        print(f"replay: {exc.message}", file=sys.stderr)
        return 2
    recording = cassette["servers"].get(a.server)
    if recording is None:
        print(f"replay: {a.cassette} has no server {a.server!r} (it has: {', '.join(sorted(cassette['servers']))})",
              file=sys.stderr)
        return 2

    import anyio

    from decathlon.sandbox.replay.server import build_server
    server = build_server(a.server, recording, a.workspace)
    if a.http is not None:
        import uvicorn
        uvicorn.run(server.streamable_http_app(), host=a.host, port=a.http, log_level="warning")
        return 0

    from mcp.server.stdio import stdio_server

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)
    return 0


if __name__ == "__main__":
    sys.exit(main())
