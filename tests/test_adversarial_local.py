"""The local backend as root against a hostile agent (issue 21, findings H2, H3, L1; L1 on compose too).

Service tasks need root on the local backend, and the agent used to run as root with it: it wrote into
the user's checkout through the episode's task root, entered another episode's network namespace and the
host's, and a pid file it wrote made root signal every process. As root, each episode now runs as
unprivileged users of its own (decathlon/backends/local_users.py). Not root, the local backend isolates
files only and says so (these attacks then succeed by design): these cases need root, as CI has.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from conftest import REPO
from decathlon.backends.local import LocalBackend
from hostile import Episode

pytestmark = [pytest.mark.adversarial,
              pytest.mark.skipif(os.geteuid() != 0, reason="the local backend isolates episodes only as root (CI runs "
                                 "as root); not as root it says so at the start of a run")]
CONVENTIONS = REPO / "fixtures" / "toolathlon-conventions"
SERVICES = REPO / "fixtures" / "toolathlon-services"


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        h.update(f"{path.relative_to(root)}\0{st.st_mode:o}\0".encode())
        if path.is_file() and not path.is_symlink():
            h.update(path.read_bytes())
    return h.hexdigest()


def test_h2_the_agent_cannot_write_into_the_checkout(tmp_path):
    """H2: the episode's task root links the checkout's other top-level entries; the agent appended to
    utils/general/helper.py through the link, i.e. to the user's checkout, and every later episode of every
    task importing utils passed. Now the checkout is byte-identical after the attempts, and the next null
    episode fails."""
    source = tmp_path / "checkout"
    shutil.copytree(CONVENTIONS, source, symlinks=True)
    before = _tree_digest(source)
    poison = "\\nimport sys; sys.exit(0)  # every evaluator importing utils passes\\n"

    async def go():
        backend = LocalBackend()
        async with Episode(backend, "notes-index", source) as ep:
            home = Path(ep.setup.workspace).parent
            out = await ep.python(f"""
import os, pathlib
targets = [{str(home / 'grader' / 'checkout' / 'utils' / 'general' / 'helper.py')!r},
           {str(source / 'utils' / 'general' / 'helper.py')!r}, {str(source / 'utils' / 'general' / 'evil.py')!r}]
for t in targets:
    try:
        with open(t, "a") as f:
            f.write({poison!r})
        print("WROTE", t)
    except OSError as exc:
        print("REFUSED", t, type(exc).__name__)
try:
    os.listdir({str(source)!r})
    print("SAW THE SOURCE")
except OSError as exc:
    print("SOURCE HIDDEN", type(exc).__name__)
print("UID", os.getuid())
""")
            assert "WROTE" not in out and out.count("REFUSED") == 3, out
            assert "SAW THE SOURCE" not in out and "UID 0" not in out, out
            first = await ep.evaluate()
        async with Episode(backend, "notes-index", source) as ep:
            second = await ep.evaluate()
        return first, second

    first, second = asyncio.run(go())
    assert first.passed is False and second.passed is False, (first, second)
    assert _tree_digest(source) == before


class _HostListener:
    """A TCP listener on the host's loopback, answering a secret to whoever connects."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.sendall(b"host-secret\n")
            conn.close()


def test_h3_the_agent_enters_no_other_namespace_and_reaches_no_host_listener():
    """H3: as root, the agent found another episode's service supervisor in /proc, setns-ed into its network
    namespace and posted what that episode's task asked for, then joined the host's namespace and read a
    listener on the host's loopback. Now it can enter neither, nor reach the host's loopback at all."""
    listener = _HostListener()

    async def go():
        backend = LocalBackend()
        async with Episode(backend, "mail-budget-forward", SERVICES) as victim, \
                Episode(backend, "notes-index", CONVENTIONS) as attacker:
            supervisor = json.loads((Path(victim.setup.workspace).parent / "state" / "services.json").read_text())["supervisor"]
            out = await attacker.python(f"""
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
for who, pid in (("victim", {supervisor}), ("host", 1), ("runner", {os.getpid()})):
    try:
        fd = os.open(f"/proc/{{pid}}/ns/net", os.O_RDONLY)
        ok = libc.setns(fd, 0x40000000) == 0
        print("SETNS", who, "ENTERED" if ok else "DENIED errno=%d" % ctypes.get_errno())
    except OSError as exc:
        print("SETNS", who, "DENIED", type(exc).__name__)
for who, port in (("host listener", {listener.port}), ("victim imap", 1143)):
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect(("127.0.0.1", port))
        print("CONNECT", who, "REACHED", s.recv(64))
    except OSError as exc:
        print("CONNECT", who, "UNREACHABLE", type(exc).__name__)
print("UID", os.getuid())
""")
            return out

    out = asyncio.run(go())
    assert "ENTERED" not in out and out.count("DENIED") == 3, out
    assert "REACHED" not in out and out.count("UNREACHABLE") == 2, out
    assert "UID 0" not in out, out


def test_l1_a_pid_file_the_agent_writes_makes_root_signal_nothing(backend, tmp_path):
    """L1: root's evaluate (and the local release) read the agent-owned run/daemon.pid; `-1` there made root
    signal every process of the container (or of the host). Root now acts only on the pid setup recorded;
    a process of root's beside the episode lives on."""
    mini = REPO / "fixtures" / "toolathlon-mini"

    async def go():
        async with Episode(backend, "csv-sales-summary", mini) as ep:
            # A process of root's beside the episode: in a container its main process (root's sleep), on the
            # host one of the test's own.
            local_canary = subprocess.Popen(["sleep", "300"]) if backend.name == "local" else None
            found = await ep.box.exec(["sh", "-c", "for p in /proc/[0-9]*; do [ \"$(tr '\\0' ' ' < $p/cmdline "
                                       "2>/dev/null)\" = 'sleep infinity ' ] && basename $p; done; true"], timeout=30)
            canary = local_canary.pid if local_canary is not None else int(found.stdout.split()[0])
            try:
                wrote = await ep.python("""
import pathlib
for p in (pathlib.Path.cwd().parent / "run" / "daemon.pid",):
    try:
        p.unlink(missing_ok=True)  # root's file maybe, but in the agent's folder
        p.write_text("-1")
        print("WROTE", p)
    except OSError as exc:
        print("REFUSED", p, type(exc).__name__)
""")
                verdict = await ep.evaluate()
                alive = await ep.box.exec(["sh", "-c", f"[ -d /proc/{canary} ] && echo alive; true"], timeout=30)
                assert "alive" in alive.stdout, (wrote, verdict)
                if local_canary is not None:
                    assert local_canary.poll() is None, "root signalled a process of the host"
                return wrote, verdict
            finally:
                if local_canary is not None:
                    local_canary.kill()
                    local_canary.wait()

    wrote, verdict = asyncio.run(go())
    assert "WROTE" in wrote, wrote  # the file is the agent's to write; root no longer reads it
    assert verdict.passed is False
