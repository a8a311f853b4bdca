#!/usr/bin/env python3
"""The workspace emulator's costs: its start within an episode (forked by the front's forkserver, request to ready
line; target at most 0.3 s), as a process of its own (process to ready line, its modules' bytecode compiled as in an
image; also said without bytecode, as a venv uv installed without compiling gives it), Sheets values.get of
1,000 cells (100 rows of 10; target p50 at most 5 ms) and Drive files.list over 50 files with a `q` and `fields`
(target p50 at most 2 ms), each over HTTP with a kept-alive connection, as a client calls it, beside the p50 of a
trivial request (files.get of the root: what the HTTP round trip alone costs). Medians over --runs.

  bench/bench_workspace.py [--runs 200] [--starts 5] [--json]

Every wait is bounded."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from decathlon.sandbox.services import saas_python  # noqa: E402

READY_TIMEOUT = 30.0
AUTH = {"Authorization": "Bearer bench"}


def start(root: Path, pycache: Path | None = None) -> tuple[subprocess.Popen, int, float]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "DECATHLON_EMULATOR_SEED": "bench"}
    if pycache is not None:
        # A venv installed without bytecode (uv's default) compiles aiohttp at every start (~0.5 s); an image's venv
        # has it compiled. A private cache stands in for that, leaving the venv untouched.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    began = time.monotonic()
    proc = subprocess.Popen([saas_python(), "-m", "decathlon.emulators.workspace", "--root", str(root)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO, env=env)
    assert proc.stdout is not None
    import select
    ready, _, _ = select.select([proc.stdout], [], [], READY_TIMEOUT)
    if not ready:
        proc.kill()
        raise SystemExit(f"no ready line within {READY_TIMEOUT} s")
    line = proc.stdout.readline()
    took = time.monotonic() - began
    if not line.startswith("ready workspace "):
        proc.kill()
        raise SystemExit(f"said {line!r}")
    return proc, int(json.loads(line.split(" ", 2)[2])["http"]), took


def forked_starts(root: Path, starts: int) -> list[float]:
    """As within an episode: the front's forkserver (decathlon.emulators.kit.forkserver, started with the front,
    the episode's emulators preloaded) forks the emulator; from the request to its ready line."""
    import asyncio

    from decathlon.emulators.kit.forked import ForkServer

    async def go() -> list[float]:
        server = ForkServer(saas_python(), root / "control" / "forkserver.sock", root / "forkserver.log", ["workspace"])
        took = []
        try:
            server.start()
            await asyncio.wait_for(server._ready, READY_TIMEOUT)
            for _ in range(starts):
                began = time.monotonic()
                proc = await server.fork("workspace", ["--root", str(root)], root / "workspace.log",
                                         {**os.environ, "DECATHLON_EMULATOR_SEED": "bench"})
                line = await asyncio.wait_for(proc.stdout.readline(), READY_TIMEOUT)
                took.append((time.monotonic() - began) * 1000)
                if not line.startswith(b"ready workspace "):
                    raise SystemExit(f"said {line!r}")
                proc.terminate()
                await asyncio.wait_for(proc.wait(), READY_TIMEOUT)
        finally:
            await server.stop()
        return took

    return asyncio.run(go())


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:  # a stuck emulator: killed, its pipe drained
        proc.kill()
        proc.communicate()


def timed(session: requests.Session, url: str, runs: int, **params: Any) -> list[float]:
    out = []
    for _ in range(runs):
        began = time.perf_counter()
        r = session.get(url, params=params, headers=AUTH, timeout=30)
        out.append((time.perf_counter() - began) * 1000)
        r.raise_for_status()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--starts", type=int, default=5)
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        cold, starts = [], []
        pycache = Path(tmp) / "pycache"
        for _ in range(a.starts):
            proc, _, took = start(Path(tmp))
            cold.append(took * 1000)
            stop(proc)
        stop(start(Path(tmp), pycache)[0])  # fills the bytecode cache
        for _ in range(a.starts):
            proc, _, took = start(Path(tmp), pycache)
            starts.append(took * 1000)
            stop(proc)
        forked = forked_starts(Path(tmp), a.starts)
        proc, port, _ = start(Path(tmp))
        try:
            base = f"http://127.0.0.1:{port}"
            s = requests.Session()
            folder = s.post(f"{base}/drive/v3/files", headers=AUTH, timeout=30,
                            json={"name": "bench", "mimeType": "application/vnd.google-apps.folder"}).json()["id"]
            for i in range(50):
                s.post(f"{base}/drive/v3/files", headers=AUTH, timeout=30,
                       json={"name": f"file {i}", "parents": [folder],
                             "mimeType": "application/vnd.google-apps.spreadsheet" if i % 2 else "text/plain"})
            book = s.post(f"{base}/v4/spreadsheets", headers=AUTH, timeout=30,
                          json={"properties": {"title": "cells", "locale": "en_US"}}).json()["spreadsheetId"]
            values = [[f"r{r}c{c}" if c % 2 else r * c + 0.5 for c in range(10)] for r in range(100)]
            s.put(f"{base}/v4/spreadsheets/{book}/values/Sheet1!A1", headers=AUTH, timeout=30,
                  params={"valueInputOption": "USER_ENTERED"}, json={"values": values}).raise_for_status()
            got = s.get(f"{base}/v4/spreadsheets/{book}/values/Sheet1!A1:J100", headers=AUTH, timeout=30).json()
            assert sum(len(r) for r in got["values"]) == 1000
            # What any request costs here (the HTTP client and server, the request log): the floor under the others.
            floor = timed(s, f"{base}/drive/v3/files/root", a.runs, fields="id")
            cells = timed(s, f"{base}/v4/spreadsheets/{book}/values/Sheet1!A1:J100", a.runs)
            listing = timed(s, f"{base}/drive/v3/files", a.runs,
                            q=f"'{folder}' in parents and mimeType='application/vnd.google-apps.spreadsheet' "
                              "and trashed=false", fields="nextPageToken,files(id,name)")
        finally:
            stop(proc)
    result = {"start_in_episode_ms": round(statistics.median(forked), 1),
              "start_ms": round(statistics.median(starts), 1),
              "start_ms_without_bytecode": round(statistics.median(cold), 1),
              "sheets_values_get_1000_cells_p50_ms": round(statistics.median(cells), 2),
              "drive_files_list_p50_ms": round(statistics.median(listing), 2),
              "trivial_request_p50_ms": round(statistics.median(floor), 2)}
    if a.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:40s} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
