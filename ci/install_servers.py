#!/usr/bin/env python3
"""Install the real MCP servers our fixture tasks use, each in its own virtualenv.

They pin different `mcp` versions from ours and from each other, so each gets an isolated env
under $DECATHLON_SERVERS_DIR (default: .servers/ in the checkout), built from the exact pins in
ci/servers/<name>.txt. A stamp of those pins makes a second run instant (and offline).
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "ci" / "servers"


def target_dir() -> Path:
    return Path(os.environ.get("DECATHLON_SERVERS_DIR") or ROOT / ".servers")


def install(name: str, pins: Path, dest: Path) -> bool:
    stamp = dest / ".pins-sha256"
    want = hashlib.sha256(pins.read_bytes()).hexdigest()
    if stamp.is_file() and stamp.read_text().strip() == want:
        return False
    print(f"installing MCP server {name!r} into {dest} …", flush=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(dest)
    cmd = [str(dest / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           "--no-deps", "-r", str(pins)]
    subprocess.run(cmd, check=True, timeout=900)
    stamp.write_text(want)
    return True


def main() -> int:
    dest_root = target_dir()
    dest_root.mkdir(parents=True, exist_ok=True)
    names = sorted(p.stem for p in PINS.glob("*.txt"))
    try:
        changed = [n for n in names if install(n, PINS / f"{n}.txt", dest_root / n)]
    except subprocess.CalledProcessError as exc:
        print(f"error: installing an MCP server failed ({exc}); pip needs PyPI for a first install", file=sys.stderr)
        return 1
    print(f"MCP servers ready in {dest_root}: {', '.join(names)}" + (f" (installed {', '.join(changed)})" if changed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
