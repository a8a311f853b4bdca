"""`pip install .` puts one namespace into site-packages: `decathlon` (plus the console scripts), nothing of
tests, fakes, fixtures or bench, and no second top-level package."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_holds_only_the_decathlon_namespace(tmp_path):
    # No build isolation: the venv's setuptools builds it, so the test needs no network. uv builds it: the venv
    # (made by uv) has no pip.
    from uv import find_uv_bin
    proc = subprocess.run([find_uv_bin(), "build", "--wheel", "--no-build-isolation", "--offline", "--quiet",
                           "--python", sys.executable, "--out-dir", str(tmp_path), str(ROOT)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = tmp_path.glob("decathlon-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = sorted({n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")})
    assert top == ["decathlon"], top
    assert "decathlon/sandbox/server_catalogue.yaml" in names  # package data travels with it
    assert "decathlon/sandbox/http/site/decathlon_http_shim.py" in names
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    scripts = zipfile.ZipFile(wheel).read(entry).decode()
    assert "decathlon = decathlon.cli:main" in scripts and "task-api = decathlon.sandbox.cli:main" in scripts
