"""The tasks' local services on the compose backend: each sandbox runs its own Canvas or WooCommerce on
its own loopback at the fixed ports, started by the same task-api code as on the local backend."""
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

PACK = REPO / "fixtures" / "toolathlon-services"


@pytest.fixture(scope="module")
def client():
    require(compose_mod)
    import docker
    return docker.from_env()


def test_concurrent_sandboxes_of_one_task_each_have_their_own_services(client):
    # Two episodes of each task at once: each preprocess wipes and re-creates its course or products,
    # so sandboxes sharing a service would fail each other's evaluators.
    tag = uuid.uuid4().hex
    tasks = ["canvas-quiz-reminder", "canvas-quiz-reminder", "woo-restock", "woo-restock"]
    env = {**os.environ, "DECATHLON_COMPOSE_LABELS": f"decathlon.test={tag}"}
    proc = subprocess.run([sys.executable, "-m", "decathlon", "run", *tasks, "--source", str(PACK), "--backend",
                           "compose", "--policy", "oracle", "--concurrency", "4", "--json", "--launch-time", LAUNCH],
                          cwd=REPO, capture_output=True, text=True, env=env, timeout=900)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 4, proc.stderr[-3000:]
    for r in rows:
        assert r["infra_error"] is None and r["pass"] is True, (r, proc.stderr[-3000:])
    assert client.api.containers(all=True, filters={"label": f"decathlon.test={tag}"}) == []
