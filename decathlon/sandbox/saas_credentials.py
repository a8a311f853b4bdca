"""The credentials and configs a checkout's SaaS scripts and servers read, made for the episode and pointing
at its emulators (decathlon/emulators/front):

- `configs/gcp-service_account.keys.json`: a service account with a real RSA key, so the clients sign their
  tokens as they would; its `project_id` is the episode's project;
- `configs/google_credentials.json`: an OAuth user token with an `expiry` far ahead (google-auth refreshes
  a token without one at oauth2.googleapis.com whatever the file says; the front emulates that too);
- `configs/snowflake_rsa_key.p8`: the Snowflake key pair's private half;
- `configs/token_key_session.py`: the checkout's own (or its example), kept beside it, with the emulated
  accounts laid over it, so project ids, accounts and allowed-resource lists agree with the files.

The user's own files win: a token_key_session named by DECATHLON_TOKEN_KEY_SESSION is left as it is, and so
is any of these files the user's configs already hold.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

PROJECT_ID = "decathlon-emulated"
SERVICE_ACCOUNT = f"decathlon-agent@{PROJECT_ID}.iam.gserviceaccount.com"
SNOWFLAKE_ACCOUNT = "DECATHLON"
SNOWFLAKE_USER = "DECATHLON_AGENT"
BASE_MODULE = "token_key_session_base.py"
_FAR_AHEAD = "2099-12-31T23:59:59Z"


@dataclass(frozen=True)
class Written:
    files: tuple[str, ...]
    token_key_session: str  # "overlaid" or "user's"


def _rsa_pem() -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _write_new(path: Path, text: str, written: list[str]) -> None:
    if path.exists():
        return  # the user's own
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    written.append(path.name)


def _overlay(configs: Path) -> str:
    """The episode's token_key_session: the one it was given, run as it is, then the emulated accounts."""
    values = {
        "gcp_project_id": PROJECT_ID,
        # Absolute: the agent's servers get a read-only copy of what a token value names in the grader's root
        # (decathlon/sandbox/servers_config.py), and they do not start in it.
        "gcp_service_account_path": str((configs / "gcp-service_account.keys.json").resolve()),
        "google_oauth2_credentials_path": str((configs / "google_credentials.json").resolve()),
        "google_oauth2_token_path": str((configs / "google_credentials.json").resolve()),
        "snowflake_account": SNOWFLAKE_ACCOUNT,
        "snowflake_user": SNOWFLAKE_USER,
        "snowflake_private_key_path": str((configs / "snowflake_rsa_key.p8").resolve()),
    }
    return ("# Written by decathlon for this episode: the token_key_session it was given (beside it, as\n"
            f"# {BASE_MODULE}) with the accounts of the episode's emulated SaaS laid over it.\n"
            "import os as _os\nimport runpy as _runpy\n\n"
            f"_base = _runpy.run_path(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), {BASE_MODULE!r}))\n"
            "globals().update({k: v for k, v in _base.items() if not k.startswith('__')})\n"
            f"all_token_key_session.update({json.dumps(values, indent=4, sort_keys=True)})\n")


def write(configs: Path, origin: dict[str, str]) -> Written:
    """Into the episode's `configs/` (its private copy: decathlon/sandbox/task_copy.py)."""
    written: list[str] = []
    key = _rsa_pem().decode("ascii")
    _write_new(configs / "gcp-service_account.keys.json", json.dumps({
        "type": "service_account", "project_id": PROJECT_ID, "private_key_id": "0" * 40, "private_key": key,
        "client_email": SERVICE_ACCOUNT, "client_id": "100000000000000000001",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token",
        "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "client_x509_cert_url": f"https://www.googleapis.com/robot/v1/metadata/x509/{SERVICE_ACCOUNT}",
        "universe_domain": "googleapis.com"}, indent=2), written)
    _write_new(configs / "google_credentials.json", json.dumps({
        "token": "ya29.decathlon-emulated-token", "refresh_token": "1//decathlon-emulated-refresh",
        "token_uri": "https://oauth2.googleapis.com/token",
        "client_id": "100000000001-decathlon.apps.googleusercontent.com", "client_secret": "GOCSPX-decathlon-emulated",
        "scopes": ["https://www.googleapis.com/auth/drive", "https://www.googleapis.com/auth/spreadsheets",
                   "https://www.googleapis.com/auth/forms.body", "https://www.googleapis.com/auth/calendar",
                   "https://www.googleapis.com/auth/cloud-platform"],
        "universe_domain": "googleapis.com", "account": "", "expiry": _FAR_AHEAD}, indent=2), written)
    _write_new(configs / "snowflake_rsa_key.p8", key, written)
    tks = configs / "token_key_session.py"
    if origin.get("token_key_session.py") == "DECATHLON_TOKEN_KEY_SESSION" or not tks.is_file():
        return Written(tuple(written), "user's")
    os.replace(tks, configs / BASE_MODULE)
    tks.write_text(_overlay(configs), encoding="utf-8")
    return Written(tuple(written), "overlaid")
