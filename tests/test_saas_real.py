"""`--saas real` (issue 24, item 7; issue 23, item 7): with the user's own accounts, what is missing is said
once, before any sandbox, naming the fix; the sandbox side installs no front. Issue 29: the user's keys reach the
grader's scripts and our servers (through the episode's one-shot key broker), never the agent, on every backend."""
from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

import lines

from conftest import LAUNCH, REPO
from decathlon.sandbox import saas
from decathlon.sandbox.taskdef import load_task
from key_hunt import digests, hunt_episode, new_key
from saas_venv import SERVERS, require, saas_python

PACK = REPO / "fixtures" / "toolathlon-saas"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k != "DECATHLON_TOKEN_KEY_SESSION"}
    return subprocess.run([sys.executable, "-m", "decathlon", "run", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**clean, **(env or {})})


def test_real_saas_without_the_users_token_session_is_refused_before_any_sandbox():
    began = time.monotonic()
    p = run("bq-region-totals", "sf-overdue-flags", "--source", str(PACK), "--policy", "null", "--saas", "real",
            "--launch-time", LAUNCH)
    assert p.returncode != 0
    assert "DECATHLON_TOKEN_KEY_SESSION is not set" in p.stderr
    assert "bq-region-totals, sf-overdue-flags" in p.stderr
    assert "decathlon: run " not in p.stderr  # refused before a run (and its sandboxes) began
    assert time.monotonic() - began < 30


def test_real_saas_names_the_missing_key_files(tmp_path):
    tks = tmp_path / "token_key_session.py"
    tks.write_text("all_token_key_session = {}\n")
    p = run("sf-overdue-flags", "--source", str(PACK), "--policy", "null", "--saas", "real", "--launch-time", LAUNCH,
            env={"DECATHLON_TOKEN_KEY_SESSION": str(tks)})
    assert p.returncode != 0
    assert "configs/snowflake_rsa_key.p8 is not there" in p.stderr


def test_only_tasks_that_reach_an_emulated_vendor_get_the_front():
    assert saas.emulators_for(load_task(PACK, "bq-region-totals")) == ["gcp", "gcplogging"]
    assert saas.emulators_for(load_task(PACK, "sf-overdue-flags")) == ["snowflake"]
    assert saas.emulators_for(load_task(PACK, "sf-overdue-flags"), "real") is None
    mini = load_task(REPO / "fixtures" / "toolathlon-mini", "csv-sales-summary")
    assert saas.emulators_for(mini) is None


def test_a_task_whose_scripts_use_a_vendor_without_naming_its_server_gets_the_front(tmp_path):
    from conftest import write_task
    write_task(tmp_path, "forms-no-server", servers=["filesystem"],
               preprocess="from googleapiclient.discovery import build\nforms = build('forms', 'v1')\n")
    assert saas.emulators_for(load_task(tmp_path, "forms-no-server")) == []  # the front, its emulators on first use


# Issue 29 (M2, L2): `--saas real` handed the user's real key to the agent, and did not work on the local backend.

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the local backend gives the agent a user of its own only as "
                                "root (CI runs as root); not as root the agent is you and reads your keys by design")
SNOWFLAKE_TOKENS = {"snowflake_account": "USERS-OWN", "snowflake_user": "ME", "snowflake_role": "ACCOUNTADMIN",
                    "snowflake_warehouse": "COMPUTE_WH", "snowflake_database": "SNOWFLAKE", "snowflake_schema": "PUBLIC",
                    "snowflake_op_allowed_databases": "null"}


def test_the_local_backend_passes_the_users_token_session_to_the_sandbox(monkeypatch):
    """L2: its name looks like a credential's, so the sandbox never saw it and every SaaS task's preprocess read the
    example's placeholders. It is a path; real credentials stay out."""
    from decathlon.backends.local import sandbox_env
    monkeypatch.delenv("DECATHLON_SANDBOX_ENV", raising=False)
    monkeypatch.setenv("DECATHLON_TOKEN_KEY_SESSION", "/home/me/toolathlon/token_key_session.py")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-the-sandbox-0123456789")
    env = sandbox_env()
    assert env["DECATHLON_TOKEN_KEY_SESSION"] == "/home/me/toolathlon/token_key_session.py"
    assert "OPENAI_API_KEY" not in env


def test_real_saas_says_at_its_start_when_nothing_can_keep_the_keys_from_the_agent(monkeypatch):
    from decathlon.backends import local, local_users
    monkeypatch.setattr(local_users, "isolating", lambda: False)
    note = local.real_saas_note()
    assert note is not None and note.startswith("warning: --saas real") and f"uid {os.getuid()}" in note
    monkeypatch.setattr(local_users, "isolating", lambda: True)
    assert local.real_saas_note() is None


class _Container:
    name = "decathlon-test"

    def __init__(self) -> None:
        self.archives: list[bytes] = []

    def put_archive(self, path: str, data: bytes) -> bool:
        self.archives.append(data)
        return True


def test_compose_puts_the_users_token_session_into_the_containers_source(tmp_path, monkeypatch):
    """The host path DECATHLON_TOKEN_KEY_SESSION names means nothing in a container: its file goes in as the source
    copy's configs/token_key_session.py (the checkout's own left out), the grader's alone."""
    from decathlon.backends.base import SandboxSpec
    from decathlon.backends.compose import GRADER_UID, ComposeSandbox
    source = tmp_path / "checkout"
    shutil.copytree(PACK, source)
    (source / "configs" / "token_key_session.py").write_text("all_token_key_session = {'whose': 'checkout'}\n")
    mine = tmp_path / "mine.py"
    mine.write_text("all_token_key_session = {'whose': 'mine'}\n")
    monkeypatch.setenv("DECATHLON_TOKEN_KEY_SESSION", str(mine))
    container = _Container()
    box = ComposeSandbox(None, container, SandboxSpec("r", "e", "sf-overdue-flags", source))  # type: ignore[arg-type]
    asyncio.run(box.copy_source(source, "sf-overdue-flags"))
    with tarfile.open(fileobj=io.BytesIO(container.archives[0])) as tar:
        members = [m for m in tar.getmembers() if m.name == "source/configs/token_key_session.py"]
        assert len(members) == 1 and members[0].isfile() and members[0].uid == GRADER_UID
        handle = tar.extractfile(members[0])
        assert handle is not None and handle.read() == mine.read_bytes()
    monkeypatch.setenv("DECATHLON_TOKEN_KEY_SESSION", str(tmp_path / "missing.py"))
    from decathlon.errors import InfraError
    with pytest.raises(InfraError, match="DECATHLON_TOKEN_KEY_SESSION=.*no such file"):
        asyncio.run(box.copy_source(source, "sf-overdue-flags"))


def test_the_users_key_files_go_to_the_grader_and_never_into_a_copy_for_the_agents_servers(tmp_path, monkeypatch):
    """M2's root: a key path in the grader's root was handed to the agent's snowflake server as a 0444 copy. Under
    `--saas real` the keys the token session names are copied into the episode's private configs (one kept outside the
    checkout too), the token session points there, no copy is made for a server, and our servers get broker tokens."""
    from decathlon.sandbox import real_keys
    from decathlon.sandbox.key_broker import KeyBroker
    from decathlon.sandbox.servers_config import ServerSpec, Templates
    from decathlon.standins.keyclaim import BROKER_ENV, TOKEN_PREFIX
    monkeypatch.setenv("DECATHLON_TASK_PYTHON", sys.executable)
    root = tmp_path / "grader" / "checkout"
    configs = root / "configs"
    configs.mkdir(parents=True)
    (configs / "gcp-service_account.keys.json").write_text('{"type": "service_account"}')
    outside = tmp_path / "keys" / "sf.p8"
    outside.parent.mkdir()
    outside.write_bytes(new_key())
    (configs / "token_key_session.py").write_text("import os\nall_token_key_session = " + repr({
        **SNOWFLAKE_TOKENS, "snowflake_private_key_path": str(outside),
        "gcp_service_account_path": "configs/gcp-service_account.keys.json"}) + "\n")
    found = real_keys.gather(configs)
    copy = configs / real_keys.COPIES / "snowflake_private_key_path" / "sf.p8"
    assert found == {"snowflake_private_key_path": copy.resolve(),
                     "gcp_service_account_path": (configs / "gcp-service_account.keys.json").resolve()}
    assert copy.read_bytes() == outside.read_bytes() and copy.stat().st_mode & 0o077 == 0
    tokens = runpy_table(configs / "token_key_session.py")
    assert tokens["snowflake_private_key_path"] == str(copy.resolve()) and tokens["snowflake_account"] == "USERS-OWN"

    shared = tmp_path / "server-files"
    shared.mkdir()
    templates = Templates(root, tmp_path / "ws", root / "tasks" / "finalpool" / "t", private=root, shared=shared,
                          withheld=real_keys.withheld(configs, found))
    assert templates.fill("${token.snowflake_private_key_path}") == str(copy.resolve())
    assert templates.fill("${token.gcp_service_account_path}") == str((configs / "gcp-service_account.keys.json").resolve())
    assert list(shared.iterdir()) == []  # nothing handed over

    specs = [ServerSpec("snowflake", "py", ["-m", "decathlon.standins.snowflake", "--account", "A", "--private_key_path",
                                            str(copy.resolve())]),
             ServerSpec("google-cloud", "py", ["-m", "decathlon.standins.google_cloud",
                                               f"--service-account-path={configs / 'gcp-service_account.keys.json'}"]),
             ServerSpec("other", "py", ["-m", "elsewhere", "--private_key_path", str(copy.resolve())])]
    with KeyBroker(os.geteuid(), tmp_path) as broker:
        brokered = real_keys.broker_specs(specs, broker)
        assert broker.unclaimed() == 2
        assert brokered[0].args[-1].startswith(TOKEN_PREFIX) and brokered[0].env[BROKER_ENV] == str(broker.path)
        assert brokered[1].args[-1].startswith("--service-account-path=" + TOKEN_PREFIX)
        assert brokered[2] == specs[2]
        assert not any(str(copy) in a or "gcp-service_account" in a for s in brokered[:2] for a in s.args)
    assert not broker.path.exists() and not broker.folder.exists()


def runpy_table(path: Path) -> dict:
    import runpy
    return dict(runpy.run_path(str(path))["all_token_key_session"])


_CLAIM = """
import json, os, sys
sys.path.insert(0, {repo!r})
from decathlon.standins import keyclaim
out = {{}}
for label, token, undumpable in json.loads(sys.argv[1]):
    if undumpable:
        keyclaim.undumpable()
    try:
        out[label] = keyclaim.claim(token, sys.argv[2]).decode()
    except keyclaim.KeyClaimError as exc:
        out[label] = "refused: " + str(exc)
print(json.dumps(out))
"""


def _claims(broker, peer: list[str], steps: list[tuple[str, str, bool]]) -> dict[str, str]:
    code = _CLAIM.format(repo=str(REPO))
    proc = subprocess.run([*peer, sys.executable, "-c", code, json.dumps(steps), str(broker.path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_the_broker_hands_each_key_out_once_and_only_to_a_non_dumpable_process_of_the_agents_uid(tmp_path):
    """The one-shot key broker (decathlon/sandbox/key_broker.py): a dumpable peer (whose memory the agent could read)
    is refused and the key stays for the server; the second request for a key is refused; a token that is not the
    episode's is refused; as root, a peer of another uid (root itself) is refused, and only the agent's uid may even
    open the socket."""
    from decathlon.sandbox.key_broker import KeyBroker
    from decathlon.sandbox.users import Users
    from decathlon.standins.keyclaim import TOKEN_PREFIX
    agent = 65534 if os.geteuid() == 0 else os.geteuid()  # as root, the peer runs as another user, as the agent does
    peer = Users(agent=agent).prefix("agent")
    with KeyBroker(agent, tmp_path) as broker:
        assert oct(broker.folder.stat().st_mode & 0o777) == "0o711"
        assert broker.path.stat().st_uid == agent and broker.path.stat().st_mode & 0o077 == 0
        first, second = (broker.offer(f"KEY-{i}".encode())[len(TOKEN_PREFIX):] for i in (1, 2))
        got = _claims(broker, peer, [("dumpable", first, False), ("server", first, True), ("again", first, True),
                                     ("forged", "not-a-token", True)])
        assert got["dumpable"].startswith("refused:") and "dumpable" in got["dumpable"], got
        assert got["server"] == "KEY-1", got
        assert got["again"].startswith("refused:") and "handed out already" in got["again"], got
        assert got["forged"].startswith("refused:") and "not one of this episode's" in got["forged"], got
        if os.geteuid() == 0:
            from decathlon.standins.keyclaim import KeyClaimError, claim
            with pytest.raises(KeyClaimError, match="runs as uid 0, not the agent's"):
                claim(second, str(broker.path))
        assert broker.unclaimed() == 1
    assert not broker.path.exists()


def _outside_vendor(outside: Path) -> tuple[subprocess.Popen, int]:
    """The "real vendor": our front and emulators, started outside any episode, reached through the user's proxy."""
    (outside / "logs").mkdir(parents=True)
    front = subprocess.Popen([sys.executable, "-m", "decathlon.emulators.front", "--root", str(outside), "--home",
                              str(outside), "--logs", str(outside / "logs")], stdout=subprocess.PIPE,
                             env={**os.environ, "DECATHLON_SAAS_PYTHON": str(saas_python())})
    assert front.stdout is not None
    port = json.loads(lines.readline(front, what="the front's ready line").decode().split(" ", 2)[2])["http"]
    for path in [outside, *outside.rglob("*")]:  # the CA bundle, for the episode's own users
        path.chmod(path.stat().st_mode | (0o005 if path.is_dir() else 0o004))
    return front, port


@needs_root
@pytest.mark.parametrize("task,where", [("sf-overdue-flags", "checkout"), ("sf-overdue-flags", "outside"),
                                        ("bq-region-totals", "checkout")])
def test_real_saas_on_the_local_backend_works_and_the_agent_never_reaches_the_users_key(task, where, tmp_path,
                                                                                         monkeypatch):
    """M2 + L2, as the reproduction runs them: `--saas real` on the local backend as root, with only
    DECATHLON_TOKEN_KEY_SESSION set (no DECATHLON_SANDBOX_ENV). The user's key is in the checkout's configs/ and the
    token session names it as upstream's example does (`os.path.abspath("./configs/…")`), or it is kept outside the
    checkout (root's, 0600). The agent's python hunts its home, /proc and the memory of every process it can read:
    no digest of the user's key; the servers still reach the "vendor" with it, and the oracle passes."""
    monkeypatch.setenv("DECATHLON_TASK_PYTHON", str(saas_python()))
    for env in ("google-cloud", "snowflake"):
        require(SERVERS / env / "bin" / "python", "`python ci/install_servers.py` builds it")
    monkeypatch.delenv("DECATHLON_SANDBOX_ENV", raising=False)
    source = tmp_path / "checkout"
    shutil.copytree(PACK, source)
    config = source / "tasks" / "finalpool" / task / "task_config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "needed_local_tools": ["claim_done", "python_execute"]}))
    key = new_key()
    tokens = dict(SNOWFLAKE_TOKENS, gcp_project_id="users-own-project")
    if task == "bq-region-totals":
        (source / "configs" / "gcp-service_account.keys.json").write_text(json.dumps({
            "type": "service_account", "project_id": "users-own-project", "private_key_id": "1" * 40,
            "private_key": key.decode(), "client_email": "me@users-own-project.iam.gserviceaccount.com",
            "token_uri": "https://oauth2.googleapis.com/token"}))
        named = {"gcp_service_account_path": 'os.path.abspath("./configs/gcp-service_account.keys.json")'}
    elif where == "checkout":
        (source / "configs" / "snowflake_rsa_key.p8").write_bytes(key)
        named = {"snowflake_private_key_path": 'os.path.abspath("./configs/snowflake_rsa_key.p8")'}
    else:
        (source / "configs" / "snowflake_rsa_key.p8").write_bytes(new_key())  # what check_real_saas looks for
        keys = tmp_path / "my-keys"
        keys.mkdir(mode=0o700)
        (keys / "sf.p8").write_bytes(key)
        (keys / "sf.p8").chmod(0o600)
        named = {"snowflake_private_key_path": repr(str(keys / "sf.p8"))}
    tks = tmp_path / "token_key_session.py"
    tks.write_text((PACK / "configs" / "token_key_session_example.py").read_text() + "import os\n"
                   f"all_token_key_session.update({tokens!r})\n" +
                   "".join(f"all_token_key_session[{k!r}] = {v}\n" for k, v in named.items()))
    front, port = _outside_vendor(tmp_path / "outside")
    try:
        bundle = tmp_path / "outside" / "saas" / "ca-bundle.pem"
        # gRPC (Cloud Logging) reads the lower-case proxy variable and its own CA variable, as a user's setup has them.
        for name, value in {"DECATHLON_TOKEN_KEY_SESSION": str(tks), "HTTPS_PROXY": f"http://127.0.0.1:{port}",
                            "https_proxy": f"http://127.0.0.1:{port}", "SSL_CERT_FILE": str(bundle),
                            "REQUESTS_CA_BUNDLE": str(bundle), "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": str(bundle),
                            "DECATHLON_LOCAL_NETWORK": "host"}.items():
            monkeypatch.setenv(name, value)
        from decathlon.backends.local import LocalBackend
        oracle = json.loads((PACK / "oracles" / f"{task}.json").read_text())["steps"]
        got = asyncio.run(hunt_episode(LocalBackend(), source, task, "real", oracle))
        assert got.uid != 0
        assert not digests(key) & set(got.keys), {k: v for k, v in got.keys.items() if k in digests(key)}
        assert got.passed is True, got
        log = "snowflake.log" if task == "sf-overdue-flags" else "gcp.log"
        assert (tmp_path / "outside" / "logs" / log).stat().st_size > 0  # the "vendor" outside is what was reached
    finally:
        front.send_signal(signal.SIGTERM)
        front.wait(10)
