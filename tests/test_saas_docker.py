"""Emulated SaaS on the compose backend: inside each container the SaaS front and its emulators run on the
container's own loopback, started by the same task-api code as on the local backend, and our two fixture tasks
(fixtures/toolathlon-saas) are graded as they are there. The pack's scripts use the vendors' clients, which the
project's image has in its SaaS virtualenv: DECATHLON_COMPOSE_ENV names it as the task interpreter (an image built
with a checkout carries the checkout's own task environment instead)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

from conftest import LAUNCH, REPO
from conformance import compose as compose_mod, require

pytestmark = pytest.mark.docker

PACK = REPO / "fixtures" / "toolathlon-saas"
TASKS = ["bq-region-totals", "sf-overdue-flags"]


@pytest.fixture(scope="module")
def client():
    require(compose_mod)
    import docker
    return docker.from_env()


def _run(policy: str, tag: str, *tasks: str) -> list[dict]:
    env = {**os.environ, "DECATHLON_COMPOSE_LABELS": f"decathlon.test={tag}",
           "DECATHLON_COMPOSE_ENV": "DECATHLON_TASK_PYTHON=/opt/decathlon/servers/saas/bin/python"}
    proc = subprocess.run([sys.executable, "-m", "decathlon", "run", *tasks, "--source", str(PACK), "--backend",
                           "compose", "--policy", policy, "--concurrency", "2", "--json", "--launch-time", LAUNCH],
                          cwd=REPO, capture_output=True, text=True, env=env, timeout=900)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == len(tasks), proc.stderr[-3000:]
    return rows


def test_the_oracle_passes_and_the_null_policy_fails_inside_containers(client):
    tag = uuid.uuid4().hex
    for policy, verdict in (("oracle", True), ("null", False)):
        for r in _run(policy, tag, *TASKS):
            assert r["infra_error"] is None and r["pass"] is verdict, (policy, r)
    assert client.api.containers(all=True, filters={"label": f"decathlon.test={tag}"}) == []


def test_two_concurrent_episodes_of_one_task_each_have_their_own_warehouse(client):
    # Each preprocess drops and recreates its dataset: episodes sharing one BigQuery would fail each other.
    tag = uuid.uuid4().hex
    for r in _run("oracle", tag, "bq-region-totals", "bq-region-totals"):
        assert r["infra_error"] is None and r["pass"] is True, r
    assert client.api.containers(all=True, filters={"label": f"decathlon.test={tag}"}) == []
