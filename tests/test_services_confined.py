"""The episode's services (mail, Canvas, WooCommerce, the SaaS front and its emulators) hold nothing of the host
(decathlon/sandbox/confine.py): on the local backend as root they run in a root of their own, where the task
source, our fixtures' oracles, other episodes and the host's /tmp do not exist, with an environment built for them
and a /proc that shows only their own processes. Checked from outside, as root, through /proc/<pid>/root of each
service process of a real episode: whatever a service is made to read, it can only read what is there."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from conftest import LAUNCH, REPO
from saas_venv import saas_python

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the services' own root is the local backend's as root "
                                "(mount namespaces need root; CI runs as root)")

SAAS = REPO / "fixtures" / "toolathlon-saas"
SERVICES = REPO / "fixtures" / "toolathlon-services"
HOST_SECRET = "postgres://dbuser:DbPassw0rd-host-only@db.internal/prod"


def _service_pids(uid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    found.append(int(entry))
            except OSError:
                continue
    return sorted(found)


async def _inspect(source: Path, task: str, marker: Path) -> dict:
    from decathlon.backends.base import SandboxSpec
    from decathlon.backends.local import LocalBackend
    from decathlon.core.task_session import TaskSession

    backend = LocalBackend()
    box = await backend.acquire(SandboxSpec("confined" + uuid.uuid4().hex[:6], uuid.uuid4().hex, task, source))
    try:
        session = TaskSession(box)
        await session.setup(task, LAUNCH, "live", None, False, False, "emulated")
        assert box.identity is not None
        users = box.identity.users
        record = json.loads((Path(box.root) / "state" / "services.json").read_text())
        pids = _service_pids(users.service or -1)
        assert pids, "no process of the episode's service user"
        seen = {}
        for pid in pids:
            root = Path(f"/proc/{pid}/root")
            try:
                environ = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue  # it ended meanwhile
            seen[pid] = {
                "cmd": cmdline[:200],
                "own_mount_ns": os.readlink(f"/proc/{pid}/ns/mnt") != os.readlink("/proc/self/ns/mnt"),
                "top": sorted(os.listdir(root)),
                "source": (root / str(source).lstrip("/")).exists(),
                "fixtures": (root / str(REPO / "fixtures").lstrip("/")).exists(),
                "marker": (root / str(marker).lstrip("/")).exists(),
                "episode_grader": (root / str(Path(box.root) / "grader").lstrip("/")).exists(),
                "episode_workspace": (root / str(Path(box.root) / "workspace").lstrip("/")).exists(),
                "own_state": (root / str(Path(box.root) / "services").lstrip("/")).is_dir(),
                "host_secret_in_env": HOST_SECRET in environ,
                "toolathlon_root_in_env": "TOOLATHLON_ROOT=" in environ,
                # root sees every process through it; the service user only its own (hidepid=invisible)
                "proc_mount": [line.split(" - ", 1)[1] for line in
                               Path(f"/proc/{pid}/mountinfo").read_text().splitlines() if line.split()[4] == "/proc"],
            }
        return {"seen": seen, "record": record, "service_uid": users.service}
    finally:
        await box.release()


@pytest.mark.parametrize("source,task", [(SAAS, "sf-overdue-flags"), (SAAS, "bq-region-totals"),
                                         (SERVICES, "woo-restock")])
def test_services_see_only_their_own_root(source, task, tmp_path, monkeypatch):
    if source == SAAS:
        monkeypatch.setenv("DECATHLON_TASK_PYTHON", str(saas_python()))
    monkeypatch.setenv("DATABASE_URL", HOST_SECRET)  # a host variable whose name does not look like a secret
    monkeypatch.setenv("TOOLATHLON_ROOT", str(source))
    monkeypatch.setenv("DECATHLON_LOCAL_DIR", str(tmp_path / "episodes"))
    (tmp_path / "episodes").mkdir()
    marker = Path("/tmp") / f"decathlon-host-tmp-marker-{uuid.uuid4().hex}"
    marker.write_text("the host's /tmp")
    try:
        got = asyncio.run(_inspect(source, task, marker))
    finally:
        marker.unlink()
    seen = got["seen"]
    assert len(seen) >= 2, got  # the supervisor and at least one service
    allowed_top = {"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "tmp", "usr"}
    allowed_top |= {Path(p).parts[1] for p in (sys.base_prefix, str(REPO), str(saas_python()))}
    for pid, view in seen.items():
        assert view["own_mount_ns"], view
        assert set(view["top"]) <= allowed_top, view
        assert not view["source"] and not view["fixtures"], view
        assert not view["marker"], view
        assert not view["episode_grader"] and not view["episode_workspace"], view
        assert view["own_state"], view
        assert not view["host_secret_in_env"] and not view["toolathlon_root_in_env"], view
        assert len(view["proc_mount"]) == 1 and "hidepid=invisible" in view["proc_mount"][0], view


def test_the_confined_root_refuses_what_the_plan_does_not_bind(tmp_path):
    """decathlon.sandbox.confine on its own: a read-only system, a writable state folder, nothing else of the host."""
    state = tmp_path / "state"
    state.mkdir()
    os.chmod(state, 0o777)
    other = tmp_path / "other"
    other.mkdir()
    (other / "secret").write_text("not the service's")
    probe = ("import os, json; out = {}\n"
             f"out['other'] = os.path.exists({str(other / 'secret')!r})\n"
             f"open({str(state / 'w')!r}, 'w').write('x'); out['state'] = True\n"
             "try:\n    open('/usr/decathlon-probe', 'w'); out['usr_writable'] = True\n"
             "except OSError:\n    out['usr_writable'] = False\n"
             "out['uid'] = os.getuid(); out['root_entries'] = sorted(os.listdir('/'))\n"
             "print(json.dumps(out))")
    done = subprocess.run([sys.executable, "-m", "decathlon.sandbox.confine", "--uid", "1599999",
                           "--ro", sys.base_prefix, "--ro", sys.prefix, "--ro", str(REPO / "decathlon"),
                           "--rw", str(state), "--", sys.executable, "-S", "-c", probe],
                          capture_output=True, text=True, timeout=60, cwd=str(REPO))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {"other": False, "state": True, "usr_writable": False, "uid": 1599999,
                   "root_entries": out["root_entries"]}
    assert (state / "w").read_text() == "x"
    assert "home" not in out["root_entries"] and "var" not in out["root_entries"]
