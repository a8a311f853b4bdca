"""decathlon.sandbox.freeze: the workspace the grader sees (units; the attacks themselves are in
tests/test_adversarial_sandbox.py)."""
from __future__ import annotations

import os
import subprocess

import pytest

from decathlon.sandbox.freeze import freeze
from decathlon.sandbox.users import Users

pytestmark = pytest.mark.adversarial

HOSTILE_CONFIG = """\
[core]
\trepositoryformatversion = 0
\tfilemode = true
\tfsmonitor = /tmp/evil.sh
\thooksPath = /tmp/hooks
\tsshCommand = /tmp/evil.sh
[core "x"] ; a comment
\tpager = less
[remote "origin"]
\turl = https://example.invalid/repo.git
\tfetch = +refs/heads/*:refs/remotes/origin/*
[remote "helper"]
\turl = ext::sh -c evil
[alias]
\tlog = !sh -c evil
[filter "lfs"]
\tsmudge = /tmp/evil.sh %f
[include]
\tpath = /tmp/more.cfg
[includeIf "gitdir:/"]
\tpath = /tmp/more.cfg
[gpg]
\tprogram = /tmp/evil.sh
[user]
\tname = Agent
\temail = agent@example.invalid
[diff "x"]
\ttextconv = /tmp/evil.sh
[branch "main"]
\tremote = origin
\tmerge = refs/heads/main
"""


def _repo(path):
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / ".git" / "config").write_text(HOSTILE_CONFIG)
    (path / ".git" / "hooks" / "post-checkout").write_text("#!/bin/sh\nexit 0\n")
    return path


def test_git_config_keeps_only_what_describes_the_repository(tmp_path):
    ws = tmp_path / "ws"
    repo = _repo(ws / "project")
    report = freeze(ws, Users())
    kept = subprocess.run(["git", "config", "--file", str(repo / ".git" / "config"), "--list"], check=True,
                          capture_output=True, text=True).stdout.splitlines()
    assert kept == ["core.repositoryformatversion=0", "core.filemode=true",
                    "remote.origin.url=https://example.invalid/repo.git",
                    "remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*",
                    "user.name=Agent", "user.email=agent@example.invalid",
                    "branch.main.remote=origin", "branch.main.merge=refs/heads/main"]
    dropped = " ".join(report.git_keys_dropped)
    for key in ("core.fsmonitor", "core.hookspath", "core.sshcommand", "remote.helper.url", "alias.log",
                "filter.lfs.smudge", "include.path", "gpg.program", "diff.x.textconv", "core.x.pager"):
        assert key in dropped, key
    assert not (repo / ".git" / "hooks").exists()
    assert any("post-checkout" in r for r in report.removed)
    # the repository still works for the grader's git
    assert subprocess.run(["git", "-C", str(repo), "status", "--short"], capture_output=True).returncode == 0


def test_links_out_fifos_and_foreign_gitdirs_go_links_inside_stay(tmp_path):
    outside = tmp_path / "truth.txt"
    outside.write_text("the answer")
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "real.txt").write_text("mine")
    os.symlink(outside, ws / "abs.txt")
    os.symlink("../../truth.txt", ws / "sub" / "rel.txt")
    os.symlink("abs.txt", ws / "chain.txt")  # inside, but it ends outside
    os.symlink(tmp_path, ws / "dirlink")
    os.symlink("real.txt", ws / "ok.txt")
    os.symlink("sub", ws / "okdir")
    os.mkfifo(ws / "pipe")
    (ws / "other").mkdir()
    (ws / "other" / ".git").write_text(f"gitdir: {tmp_path}/elsewhere/.git\n")
    report = freeze(ws, Users())
    left = sorted(str(p.relative_to(ws)) for p in ws.rglob("*"))
    assert left == ["ok.txt", "okdir", "other", "real.txt", "sub"], left
    assert (ws / "ok.txt").read_text() == "mine"
    removed = " ".join(report.removed)
    for name in ("abs.txt", "sub/rel.txt", "chain.txt", "dirlink", "pipe", "other/.git"):
        assert name in removed, name
    assert outside.read_text() == "the answer"  # what a link pointed at is never touched


def test_a_huge_git_config_is_dropped_whole(tmp_path):
    ws = tmp_path / "ws"
    repo = _repo(ws / "r")
    (repo / ".git" / "config").write_text("[core]\n" + "\tbare = false\n" * 200_000)
    report = freeze(ws, Users())
    assert (repo / ".git" / "config").read_text() == ""
    assert any("over 1 MiB" in k for k in report.git_keys_dropped)
