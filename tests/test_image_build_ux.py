"""`decathlon image build`'s own conduct, against a stand-in `docker` on PATH (the real builds are the docker
tier's): each step said as it starts, the stage images a build leaves untagged removed (never others), a
failed build named with its log, --base-image honoured after an earlier build on another base."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from decathlon.checkout import image
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


def test_steps_are_said_and_only_this_builds_stage_images_removed(docker: Path, tmp_path: Path, capsys):
    image.run_docker_build(["-t", "x:1", "--label", "decathlon.base=b:1", str(tmp_path)], tmp_path / "log", "sandbox")
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if "step" in line] and "sandbox step 3/3" in err and "RUN thing 3" in err
    assert json.loads(docker.read_text())["dangling"] == ["sha256:someone-elses"]
    assert "Step 1/3" in (tmp_path / "log").read_text()


def test_a_failed_build_is_named_with_its_log(docker: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("FAKE_DOCKER_FAIL", "1")
    with pytest.raises(InfraError) as e:
        image.run_docker_build(["-t", "x:1", str(tmp_path)], tmp_path / "log", "runner")
    assert e.value.kind == "image_build" and str(tmp_path / "log") in e.value.message


def test_base_image_asked_for_rebuilds_an_image_built_on_another(docker: Path, tmp_path: Path):
    image.run_docker_build(["-t", "s:1", "--label", f"{image.BASE_LABEL}=base:a", str(tmp_path)], tmp_path / "l", "s")
    image.run_docker_build(["-t", "r:1", "--label", f"{image.BASE_LABEL}=base:a", str(tmp_path)], tmp_path / "l", "r")
    assert image.up_to_date("s:1", "r:1", None)
    assert image.up_to_date("s:1", "r:1", "base:a")
    assert not image.up_to_date("s:1", "r:1", "python:3.11-slim")
    assert not image.up_to_date("s:2", "r:1", None)
