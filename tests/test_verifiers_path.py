"""The verifiers path as docs/training.md gives it: the taskset loaded from Python in three lines, serve-policy
refusing a source it has nothing to serve for (naming --recorded), and a refused completion named in the rollout's
error instead of a bare ProviderError."""
from __future__ import annotations

import shutil
import subprocess
import sys

import httpx
import openai

from conftest import MINI, REPO


def test_the_taskset_loads_from_python_in_three_lines():
    code = ("from decathlon import DecathlonTaskset, DecathlonTasksetConfig\n"
            f"taskset = DecathlonTaskset(DecathlonTasksetConfig(source={str(MINI)!r}))\n"
            "print([task.data.task for task in taskset.load()])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "csv-sales-summary" in done.stdout and "excel-grade-report" in done.stdout


def test_serve_policy_refuses_a_source_without_oracles_and_names_recorded(tmp_path):
    source = tmp_path / "checkout"
    shutil.copytree(MINI, source, ignore=shutil.ignore_patterns("oracles"))
    done = subprocess.run([sys.executable, "-m", "decathlon", "serve-policy", "--source", str(source), "--port", "0"],
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "has no oracles" in done.stderr and "--recorded --cassettes" in done.stderr


def test_a_refused_completion_keeps_the_endpoints_words():
    from decathlon.training.vf_harness import _said
    request = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions")
    body = {"error": {"message": "no oracle for csv-sales-summary in /x/oracles", "type": "invalid_request_error",
                      "code": "oracle_missing"}}
    exc = openai.NotFoundError("Error code: 404", response=httpx.Response(404, request=request, json=body), body=body)
    assert _said(exc) == "no oracle for csv-sales-summary in /x/oracles"
    plain = openai.InternalServerError("Error code: 500 - upstream died",
                                       response=httpx.Response(500, request=request, text="upstream died"), body=None)
    assert _said(plain) == "Error code: 500 - upstream died"
