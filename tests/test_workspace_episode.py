"""Google Calendar and Google Forms in an episode, through our own task in the checkout's conventions
(fixtures/toolathlon-saas/tasks/finalpool/standup-form-invite): the real preprocess and evaluator use Google's
discovery client with the OAuth user's files, the agent uses the two servers as the checkout launches them (npx and
the checkout's node tree, run here by our stand-ins), all against the episode's emulated Workspace behind the front."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LAUNCH, REPO
from saas_venv import saas_python

PACK = REPO / "fixtures" / "toolathlon-saas"
TASK = "standup-form-invite"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the local backend gives an episode its own network "
                                "namespace, which needs root (CI runs as root)")


def run(policy: str, out: Path, *extra: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "decathlon", "run", TASK, "--source", str(PACK), "--policy", policy,
                           "--json", "--launch-time", LAUNCH, "--out", str(out), *extra], cwd=REPO,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "DECATHLON_TASK_PYTHON": str(saas_python())})
    rows = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    assert len(rows) == 1, proc.stderr[-3000:]
    return {**rows[0], "said": (out / TASK / "eval_output.txt").read_text(), "stderr": proc.stderr[-3000:]}


def test_the_null_policy_fails_on_the_real_evaluator(tmp_path):
    r = run("null", tmp_path)
    assert r["infra_error"] is None and r["pass"] is False, r
    assert "expected one Daily standup, found 0" in r["said"]


def test_the_oracle_passes_through_the_calendar_and_forms_servers(tmp_path):
    r = run("oracle", tmp_path)
    assert r["infra_error"] is None and r["pass"] is True, r
    answers = [m["content"] for m in json.loads((tmp_path / TASK / "messages.json").read_text())
               if m.get("role") == "tool"]
    assert "Found 1 events" in answers[0] and "Project kickoff" in answers[0]  # the preprocess's event, as listed
    assert "Text question added successfully" in answers[2] and "Event created with ID: " in answers[3]


def test_a_standup_linking_another_form_fails(tmp_path):
    """The evaluator reads the form the link names: a link to a form that is not the user's is no pass."""
    oracle = json.loads((PACK / "oracles" / f"{TASK}.json").read_text())
    for step in oracle["steps"]:
        if step["tool"] == "google_calendar-create_event":
            step["arguments"]["description"] = "https://docs.google.com/forms/d/1NoSuchForm000000000000000000/viewform"
    (tmp_path / "oracles").mkdir()
    (tmp_path / "oracles" / f"{TASK}.json").write_text(json.dumps(oracle))
    r = run("oracle", tmp_path / "out", "--oracles", str(tmp_path / "oracles"))
    assert r["infra_error"] is None and r["pass"] is False, r
    assert "the linked form cannot be read: 404" in r["said"], r["said"]
