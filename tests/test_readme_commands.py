"""The README's record-and-replay block runs as written in a fresh clone (its /tmp folder made private), and
writes nothing into the clone's tracked fixtures."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def _block(heading: str) -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split(heading, 1)[1]
    body = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert body, f"no bash block under {heading}"
    return [line for line in body.group(1).splitlines() if line.strip()]


def test_the_readme_record_and_replay_block_runs_as_written(tmp_path: Path):
    before = subprocess.run(["git", "status", "--porcelain", "fixtures"], capture_output=True, text=True,
                            cwd=REPO).stdout
    for line in _block("### Record once, replay offline"):
        argv = shlex.split(line.split("  #")[0].replace("/tmp/", f"{tmp_path}/"))
        assert argv[0] == ".venv/bin/decathlon", line
        proc = subprocess.run([sys.executable, "-m", "decathlon", *argv[1:]], capture_output=True, text=True,
                              timeout=900, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert proc.returncode == 0, f"{line}\n{proc.stderr[-3000:]}"
    after = subprocess.run(["git", "status", "--porcelain", "fixtures"], capture_output=True, text=True,
                           cwd=REPO).stdout
    assert after == before, "the README's commands changed tracked fixtures"
