"""The grader's processes: git forced to run no program a config names, no host GIT_* variable, and a
non-dumpable evaluator (issue 21, finding C1; the end-to-end attack is tests/test_adversarial_grader.py)."""
from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from decathlon.sandbox.grader_git import grader_git_env
from decathlon.sandbox.subproc import run_module

pytestmark = pytest.mark.adversarial
SIG = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEz\n -----END PGP SIGNATURE-----\n"


def _hostile_repo(tmp: Path) -> tuple[Path, Path]:
    """A repository whose own config names a program for every git command run below."""
    repo, markers = tmp / "repo", tmp / "markers"
    markers.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x", "GIT_CONFIG_GLOBAL": os.devnull}
    run = lambda *a, **kw: subprocess.run(["git", *a], cwd=repo, env=env, check=True, capture_output=True,  # noqa: E731
                                          text=True, **kw).stdout
    repo.mkdir()
    run("init", "-q")
    (repo / "f.txt").write_text("x\n")
    run("add", "f.txt")
    run("commit", "-q", "-m", "one")
    header, _, message = run("cat-file", "commit", "HEAD").partition("\n\n")
    run("update-ref", "HEAD", run("hash-object", "-t", "commit", "-w", "--stdin",
                                  input=f"{header}\n{SIG}\n{message}").strip())
    (repo / "f.txt").write_text("changed\n")
    hooks = tmp / "hooks"
    hooks.mkdir()
    programs = {}
    for what in ("fsmonitor", "gpg", "hook", "pager"):
        script = tmp / f"{what}.sh"
        script.write_text(f"#!/bin/sh\ntouch {markers}/{what}\n")
        script.chmod(0o755)
        programs[what] = script
    (hooks / "post-index-change").write_text(f"#!/bin/sh\nexec {programs['hook']}\n")
    (hooks / "post-index-change").chmod(0o755)
    with open(repo / ".git" / "config", "a") as f:
        f.write(f"[core]\n\tfsmonitor = {programs['fsmonitor']}\n\thooksPath = {hooks}\n\tpager = {programs['pager']}\n"
                f"[gpg]\n\tprogram = {programs['gpg']}\n[log]\n\tshowSignature = true\n")
    return repo, markers


def _battery(repo: Path, env: dict[str, str]) -> None:
    for args in (["status"], ["update-index", "--refresh"], ["log", "--format=%G? %s"], ["log", "-1"]):
        subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, timeout=30)


def test_the_graders_git_runs_no_program_the_repositorys_config_names(tmp_path):
    repo, markers = _hostile_repo(tmp_path)
    # The same commands with an ordinary environment run them (the repository is hostile indeed)...
    _battery(repo, dict(os.environ))
    assert sorted(p.name for p in markers.iterdir()) == ["fsmonitor", "gpg", "hook"], "the hostile repo is inert"
    for p in markers.iterdir():
        p.unlink()
    # ...and with the grader's, none (the config file itself left as the agent wrote it).
    _battery(repo, grader_git_env(os.environ))
    assert sorted(p.name for p in markers.iterdir()) == []


def test_a_task_script_sees_no_git_variable_of_the_host(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere.git"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor=/tmp/x'")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "show.py").write_text("import os\nprint(sorted(k for k in os.environ if k.startswith('GIT_')))\n")
    run = run_module("pkg.show", [], cwd=tmp_path, timeout=60, env={"GIT_CONFIG_COUNT": "0"})
    assert run.exit_code == 0, run.output
    assert run.output.strip() == "['GIT_CONFIG_COUNT']", run.output


def test_the_evaluator_runs_non_dumpable_and_exactly_as_with_dash_m(tmp_path):
    pkg = tmp_path / "task" / "evaluation"
    pkg.mkdir(parents=True)
    (tmp_path / "task" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "helper.py").write_text("VALUE = 'relative import ok'\n")
    (pkg / "main.py").write_text(textwrap.dedent("""\
        import ctypes, os, sys
        from .helper import VALUE
        if __name__ == "__main__":
            dumpable = ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE
            print(dumpable, VALUE, sys.argv[1:], sys.path[0] == os.getcwd(), os.path.basename(sys.argv[0]))
            sys.exit(7)
        """))
    ran = run_module("task.evaluation.main", ["--x", "1"], cwd=tmp_path, timeout=60, dumpable=False)
    assert ran.exit_code == 7, ran.output
    assert ran.output.strip() == "0 relative import ok ['--x', '1'] True main.py", ran.output
    plain = run_module("task.evaluation.main", ["--x", "1"], cwd=tmp_path, timeout=60)
    assert plain.output.strip() == "1 relative import ok ['--x', '1'] True main.py", plain.output
