"""The credentials and configs made per episode for the emulated SaaS (decathlon/sandbox/saas_credentials.py):
read by the vendors' real client libraries as the checkout's scripts read them; the user's own files win."""
from __future__ import annotations

import json
import runpy

from decathlon.sandbox import saas_credentials as creds
from saas_venv import run_client

BASE = ('all_token_key_session = {"gcp_project_id": "XX", "snowflake_account": "XX", "kept": "yes",\n'
        '                         "snowflake_warehouse": "COMPUTE_WH"}\n')


def _configs(tmp_path):
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "token_key_session.py").write_text(BASE)
    return configs


def test_the_token_session_is_laid_over_the_one_given_and_agrees_with_the_files(tmp_path):
    configs = _configs(tmp_path)
    written = creds.write(configs, {"token_key_session.py": "example"})
    assert written.token_key_session == "overlaid"
    assert sorted(written.files) == ["gcp-service_account.keys.json", "google_credentials.json", "snowflake_rsa_key.p8"]
    tokens = runpy.run_path(str(configs / "token_key_session.py"))["all_token_key_session"]
    key = json.loads((configs / "gcp-service_account.keys.json").read_text())
    assert tokens["gcp_project_id"] == key["project_id"] == creds.PROJECT_ID
    assert tokens["kept"] == "yes" and tokens["snowflake_warehouse"] == "COMPUTE_WH"
    assert tokens["snowflake_account"] == creds.SNOWFLAKE_ACCOUNT
    assert tokens["snowflake_private_key_path"] == str((configs / "snowflake_rsa_key.p8").resolve())
    assert (configs / "snowflake_rsa_key.p8").stat().st_mode & 0o077 == 0  # a key: its owner's alone


def test_the_users_own_files_win(tmp_path):
    configs = _configs(tmp_path)
    (configs / "google_credentials.json").write_text('{"token": "mine"}')
    written = creds.write(configs, {"token_key_session.py": "DECATHLON_TOKEN_KEY_SESSION"})
    assert written.token_key_session == "user's"
    assert (configs / "token_key_session.py").read_text() == BASE
    assert json.loads((configs / "google_credentials.json").read_text()) == {"token": "mine"}
    assert "google_credentials.json" not in written.files


def test_the_real_clients_take_the_files_as_valid_without_a_network(tmp_path):
    configs = _configs(tmp_path)
    creds.write(configs, {"token_key_session.py": "example"})
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
    assert json.loads(out.stdout) == {"project": creds.PROJECT_ID, "bits": 2048}
