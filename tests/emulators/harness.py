"""One harness for the emulators' contract tests: a vendor target that is the episode's emulator by default, or the
real vendor where a user has an account and asks for it (moto's `aws_verified`, for decathlon's vendors).

    DECATHLON_VENDOR_VERIFIED=gcp GOOGLE_APPLICATION_CREDENTIALS=key.json DECATHLON_GCP_PROJECT=my-project \\
        .venv/bin/python -m pytest tests/emulators -m vendor_verified

runs the same tests against Google. Never in CI (no credentials, no network): there the target is the emulator,
started in the SaaS virtualenv, its ready line waited for with a bound (tests/lines.py). A test marked
`vendor_verified` must hold on both; one that depends on an emulator's own side (its control socket, its logs)
is not marked."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lines import readline
from tests.saas_venv import REPO, saas_python

SWITCH = "DECATHLON_VENDOR_VERIFIED"


def verified(vendor: str) -> bool:
    return vendor in {v.strip() for v in os.environ.get(SWITCH, "").split(",") if v.strip()}


@dataclass
class Target:
    vendor: str
    real: bool
    project: str
    env: dict[str, str]  # what a client process gets to reach the target
    proc: subprocess.Popen | None = field(default=None, repr=False)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_emulator(name: str, root: Path) -> tuple[subprocess.Popen, dict[str, int]]:
    """`python -m decathlon.emulators.<name>` in the SaaS virtualenv; its ports once it says ready."""
    root.mkdir(parents=True, exist_ok=True)
    log = open(root / f"{name}.log", "wb")
    proc = subprocess.Popen([str(saas_python()), "-m", f"decathlon.emulators.{name}", "--root", str(root)],
                            stdout=subprocess.PIPE, stderr=log, cwd=root, env={**os.environ, "PYTHONPATH": str(REPO)})
    log.close()
    line = readline(proc, what=f"the {name} emulator's ready line").decode().strip()
    prefix = f"ready {name} "
    if not line.startswith(prefix):
        proc.kill()
        proc.wait()
        pytest.fail(f"the {name} emulator said {line!r}; log: {(root / f'{name}.log').read_text()[-2000:]}")
    return proc, {k: int(v) for k, v in json.loads(line[len(prefix):]).items()}


def gcp_target(root: Path) -> Target:
    if verified("gcp"):
        missing = [n for n in ("GOOGLE_APPLICATION_CREDENTIALS", "DECATHLON_GCP_PROJECT") if not os.environ.get(n)]
        if missing:
            pytest.fail(f"{SWITCH}=gcp needs {', '.join(missing)}: your service-account key and project")
        return Target("gcp", True, os.environ["DECATHLON_GCP_PROJECT"], {})
    proc, ports = start_emulator("gcp", root)
    url = f"http://127.0.0.1:{ports['http']}"
    return Target("gcp", False, "emu-project", {"BIGQUERY_EMULATOR_HOST": url, "STORAGE_EMULATOR_HOST": url}, proc)


GCP_PRELUDE = '''
import json, os, time
from google.api_core import exceptions
from google.cloud import bigquery

P = os.environ["GCP_PROJECT"]
if os.environ.get("BIGQUERY_EMULATOR_HOST"):
    from google.auth.credentials import AnonymousCredentials
    bq = bigquery.Client(project=P, credentials=AnonymousCredentials())
else:
    bq = bigquery.Client(project=P)
out = {}

def refusal(sql):
    """[HTTP status, reason, message] of a query the target must refuse; None if it ran."""
    try:
        bq.query(sql).result(timeout=60)
    except exceptions.GoogleAPICallError as exc:
        items = exc.errors or []
        first = items[0] if items and isinstance(items[0], dict) else {}
        return [int(exc.code or 0), first.get("reason"), first.get("message") or exc.message]
    return None
'''


def run_gcp(target: Target, body: str, tmp_path: Path) -> dict[str, Any]:
    """`body` after GCP_PRELUDE, in the SaaS virtualenv against `target`; the `out` it fills."""
    script = tmp_path / "client.py"
    script.write_text(GCP_PRELUDE + textwrap.dedent(body) + "\nprint('RESULT ' + json.dumps(out, default=str))\n")
    proc = subprocess.run([str(saas_python()), str(script)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env={**os.environ, **target.env, "GCP_PROJECT": target.project})
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, f"client failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return json.loads(lines[-1][len("RESULT "):])


def unique(prefix: str) -> str:
    """A dataset name no earlier run left behind (on a real account, names outlive a failed test)."""
    return f"{prefix}_{uuid.uuid4().hex[:10]}"
