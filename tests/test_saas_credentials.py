"""The credentials and configs made per episode for the emulated SaaS (decathlon/sandbox/saas_credentials.py):
read by the vendors' real client libraries as the checkout's scripts read them; never the user's own keys (issue 29:
a real key in the checkout, or named by the user's token session, reached the agent of an offline episode)."""
from __future__ import annotations

import asyncio
import json
import os
import runpy
import shutil

import pytest

from conftest import REPO
from decathlon.emulators.gcp import credentials as google
from decathlon.emulators.snowflake import credentials as snowflake
from decathlon.sandbox import saas_credentials as creds
from key_hunt import digests, hunt_episode, new_key
from saas_venv import SERVERS, require, run_client, saas_python

BASE = ('all_token_key_session = {"gcp_project_id": "XX", "snowflake_account": "XX", "kept": "yes",\n'
        '                         "snowflake_warehouse": "COMPUTE_WH"}\n')


def _configs(tmp_path):
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "token_key_session.py").write_text(BASE)
    return configs


def test_the_token_session_is_laid_over_the_one_given_and_agrees_with_the_files(tmp_path):
    configs = _configs(tmp_path)
    written = creds.write(configs)
    assert written.replaced == ()
    assert sorted(written.files) == ["gcp-service_account.keys.json", "google_cloud_credentials.json",
                                     "google_credentials.json", "snowflake_rsa_key.p8"]
    tokens = runpy.run_path(str(configs / "token_key_session.py"))["all_token_key_session"]
    key = json.loads((configs / "gcp-service_account.keys.json").read_text())
    assert tokens["gcp_project_id"] == key["project_id"] == google.PROJECT_ID
    assert tokens["kept"] == "yes" and tokens["snowflake_warehouse"] == "COMPUTE_WH"
    assert tokens["snowflake_account"] == snowflake.ACCOUNT
    assert tokens["snowflake_private_key_path"] == str((configs / "snowflake_rsa_key.p8").resolve())
    assert (configs / "snowflake_rsa_key.p8").stat().st_mode & 0o077 == 0  # a key: its owner's alone


def test_the_users_own_key_files_are_replaced_and_their_token_session_points_at_the_episodes(tmp_path):
    """The checkout's configs/ holds the user's real keys (one a link to the user's key elsewhere) and the user's
    token session (DECATHLON_TOKEN_KEY_SESSION) names them: the episode's configs hold generated keys only, the user's
    files are untouched, and every key path of the token session names a generated file."""
    configs = _configs(tmp_path)
    mine = tmp_path / "my-keys"
    mine.mkdir()
    (mine / "sf.p8").write_bytes(new_key())
    (configs / "snowflake_rsa_key.p8").symlink_to(mine / "sf.p8")
    user_sa = {"type": "service_account", "project_id": "users-own", "private_key": new_key().decode(),
               "client_email": "me@users-own.iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token"}
    (configs / "gcp-service_account.keys.json").write_text(json.dumps(user_sa))
    (configs / "google_credentials.json").write_text('{"token": "mine", "refresh_token": "mine"}')
    (configs / "google_cloud_credentials.json").write_text('{"access_token": "mine", "refresh_token": "mine"}')
    before = {p: p.read_bytes() for p in (mine / "sf.p8", configs / "gcp-service_account.keys.json")}
    (configs / "token_key_session.py").write_text("import os\nall_token_key_session = " + repr({
        "gcp_project_id": "users-own", "kept": "yes", "snowflake_account": "USERS-OWN",
        "gcp_service_account_path": str(configs / "gcp-service_account.keys.json"),
        "google_oauth2_credentials_path": str(configs / "google_credentials.json"),
        "google_oauth2_token_path": str(configs / "google_credentials.json"),
        "snowflake_private_key_path": str(mine / "sf.p8")}) + "\n")
    written = creds.write(configs)
    assert sorted(written.replaced) == sorted(creds.KEY_FILES)
    assert (mine / "sf.p8").read_bytes() == before[mine / "sf.p8"]  # replaced in the episode, not written through
    assert not (configs / "snowflake_rsa_key.p8").is_symlink()
    sa = json.loads((configs / "gcp-service_account.keys.json").read_text())
    assert sa["project_id"] == google.PROJECT_ID and sa["private_key"] != user_sa["private_key"]
    assert json.loads((configs / "google_credentials.json").read_text())["token"] != "mine"
    tokens = runpy.run_path(str(configs / "token_key_session.py"))["all_token_key_session"]
    assert tokens["kept"] == "yes"
    for name in creds.KEY_FILE_TOKENS:
        assert os.path.dirname(tokens[name]) == str(configs.resolve()), (name, tokens[name])
        assert os.path.basename(tokens[name]) in written.files
    assert tokens["gcp_project_id"] == google.PROJECT_ID and tokens["snowflake_account"] == snowflake.ACCOUNT


def test_the_real_clients_take_the_files_as_valid_without_a_network(tmp_path):
    configs = _configs(tmp_path)
    creds.write(configs)
    code = f"""
import json
from google.oauth2 import credentials, service_account
user = credentials.Credentials.from_authorized_user_file({str(configs / 'google_credentials.json')!r})
assert user.valid and not user.expired, (user.expiry,)
sa = service_account.Credentials.from_service_account_file({str(configs / 'gcp-service_account.keys.json')!r},
    scopes=["https://www.googleapis.com/auth/cloud-platform"])
assertion = sa._make_authorization_grant_assertion()
assert assertion.count(b".") == 2, assertion[:40]
from cryptography.hazmat.primitives import serialization
key = serialization.load_pem_private_key(open({str(configs / 'snowflake_rsa_key.p8')!r}, "rb").read(), password=None)
print(json.dumps({{"project": sa.project_id, "bits": key.key_size}}))
"""
    out = run_client(code)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout) == {"project": google.PROJECT_ID, "bits": 2048}


PACK = REPO / "fixtures" / "toolathlon-saas"
TASKS = ["bq-region-totals", "sf-overdue-flags"]
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the local backend gives the agent a user of its own only as "
                                "root (CI runs as root); not as root the agent is you and reads your files by design")


@needs_root
@pytest.mark.parametrize("task", TASKS)
def test_an_emulated_episode_of_a_checkout_holding_real_keys_never_shows_them_to_the_agent(task, tmp_path, monkeypatch):
    """The user's real service-account key and Snowflake key in the checkout's configs/, and a token session written
    like upstream's example naming them (DECATHLON_TOKEN_KEY_SESSION): the agent's python, hunting its home, /proc
    and every process it can read, finds neither, nor the user's OAuth token; the oracle still passes."""
    monkeypatch.setenv("DECATHLON_TASK_PYTHON", str(saas_python()))
    for env in ("google-cloud", "snowflake"):
        require(SERVERS / env / "bin" / "python", "`python ci/install_servers.py` builds it")
    source = tmp_path / "checkout"
    shutil.copytree(PACK, source)
    config = source / "tasks" / "finalpool" / task / "task_config.json"
    raw = json.loads(config.read_text())
    config.write_text(json.dumps({**raw, "needed_local_tools": ["claim_done", "python_execute"]}))
    sa_key, sf_key = new_key(), new_key()
    (source / "configs" / "gcp-service_account.keys.json").write_text(json.dumps({
        "type": "service_account", "project_id": "users-own-project", "private_key_id": "1" * 40,
        "private_key": sa_key.decode(), "client_email": "me@users-own-project.iam.gserviceaccount.com",
        "token_uri": "https://oauth2.googleapis.com/token"}))
    (source / "configs" / "snowflake_rsa_key.p8").write_bytes(sf_key)
    (source / "configs" / "google_credentials.json").write_text(json.dumps({
        "token": "ya29.USERS-OWN" + "-ACCESS-TOKEN", "refresh_token": "1//USERS-OWN" + "-REFRESH-TOKEN"}))
    tks = tmp_path / "token_key_session.py"
    tks.write_text((PACK / "configs" / "token_key_session_example.py").read_text() +
                   "import os\nall_token_key_session.update({\n"
                   '    "gcp_project_id": "users-own-project", "snowflake_account": "USERS-OWN", "snowflake_user": "ME",\n'
                   '    "gcp_service_account_path": os.path.abspath("./configs/gcp-service_account.keys.json"),\n'
                   '    "google_oauth2_credentials_path": os.path.abspath("./configs/google_credentials.json"),\n'
                   '    "snowflake_private_key_path": os.path.abspath("./configs/snowflake_rsa_key.p8")})\n')
    monkeypatch.setenv("DECATHLON_TOKEN_KEY_SESSION", str(tks))
    from decathlon.backends.local import LocalBackend
    oracle = json.loads((PACK / "oracles" / f"{task}.json").read_text())["steps"]
    got = asyncio.run(hunt_episode(LocalBackend(), source, task, "emulated", oracle,
                                   (("ya29.USERS-OWN", "-ACCESS-TOKEN"), ("1//USERS-OWN", "-REFRESH-TOKEN"))))
    assert got.uid != 0
    users = digests(sa_key) | digests(sf_key) | {"ya29.USERS-OWN-ACCESS-TOKEN", "1//USERS-OWN-REFRESH-TOKEN"}
    assert not users & set(got.keys), {k: v for k, v in got.keys.items() if k in users}
    assert got.keys, "the hunt found nothing at all: the episode's own generated key should be in reach"
    assert got.passed is True, got
    assert (source / "configs" / "snowflake_rsa_key.p8").read_bytes() == sf_key  # the checkout is left as it was


def test_the_calendar_and_forms_servers_sign_in_as_the_emulated_account(tmp_path, monkeypatch):
    """Calendar's server reads the files its variables name (Toolathlon's preparation puts them in ~/.calendar-mcp);
    Forms' YAML passes the token session's client and refresh token: both the emulated OAuth user's."""
    from decathlon.sandbox import saas
    from decathlon.standins.google_calendar.credentials import load

    public = tmp_path / "saas"
    public.mkdir()
    assert saas.write_sign_in(public) == ["calendar-credentials.json", "gcp-oauth.keys.json"]
    env = saas.env({"services": {"front": {"ports": {"http": 8}}}}, public / "ca-bundle.pem")
    assert env["CALENDAR_OAUTH_PATH"] == str(public / "sign-in" / "gcp-oauth.keys.json")
    for name in ("CALENDAR_OAUTH_PATH", "CALENDAR_CREDENTIALS_PATH"):
        assert os.stat(env[name]).st_mode & 0o777 == 0o644
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    user = load(tmp_path, env)
    assert (user.client_id, user.client_secret, user.refresh_token) == (google.CLIENT_ID, google.CLIENT_SECRET,
                                                                        google.REFRESH_TOKEN)
    configs = _configs(tmp_path)
    creds.write(configs)
    tokens = runpy.run_path(str(configs / "token_key_session.py"))["all_token_key_session"]
    assert (tokens["google_client_id"], tokens["google_client_secret"], tokens["google_refresh_token"]) == (
        google.CLIENT_ID, google.CLIENT_SECRET, google.REFRESH_TOKEN)
    assert saas.env(None, public / "ca-bundle.pem") == {}  # no front (--saas real): the user's own ~/.calendar-mcp
