"""The credentials and configs a checkout's SaaS scripts and servers read, made for the episode and pointing
at its emulators (decathlon/emulators/front):

- `configs/gcp-service_account.keys.json`: a service account with a real RSA key, so the clients sign their
  tokens as they would; its `project_id` is the episode's project;
- `configs/google_credentials.json`: an OAuth user token with an `expiry` far ahead (google-auth refreshes
  a token without one at oauth2.googleapis.com whatever the file says; the front emulates that too);
- `configs/snowflake_rsa_key.p8`: the Snowflake key pair's private half;
- `configs/token_key_session.py`: the one the episode was given (DECATHLON_TOKEN_KEY_SESSION, the checkout's, or its
  example), kept beside it and run as it is, with the emulated project and accounts laid over it and every key-file
  path it names (KEY_FILE_TOKENS) pointing at the files above: its allowed-resource lists and the rest still count.

Always made, whatever the checkout's configs/ holds: the user's own key files there (real accounts, copied into the
episode's configs with the rest) are replaced, never used. An emulated episode needs no real key, and a key file is
handed to the agent's servers as a readable copy (decathlon/sandbox/servers_config.py): the user's would be the
adversary's. `--saas real` is decathlon/sandbox/real_keys.py's.
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
# The token_key_session entries that name a credentials file (Toolathlon's, and what its scripts and servers read).
KEY_FILE_TOKENS = ("gcp_service_account_path", "google_oauth2_credentials_path", "google_oauth2_token_path",
                   "snowflake_private_key_path")
KEY_FILES = ("gcp-service_account.keys.json", "google_credentials.json", "snowflake_rsa_key.p8")


@dataclass(frozen=True)
class Written:
    files: tuple[str, ...]
    replaced: tuple[str, ...]  # of `files`, those the checkout's configs held (the user's own, not used)


def _rsa_pem() -> bytes:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _write(path: Path, text: str) -> bool:
    """A fresh file of the episode's own; True when it replaced one. Unlinked first, never written through: the
    checkout's copy may be a link to the user's real key."""
    existed = path.exists() or path.is_symlink()
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return existed


def lay_over(configs: Path, values: dict[str, str], why: str) -> None:
    """configs/token_key_session.py becomes the one it was (beside it, as BASE_MODULE, run as it is) with `values`
    laid over its all_token_key_session."""
    tks = configs / "token_key_session.py"
    os.replace(tks, configs / BASE_MODULE)
    tks.write_text("# Written by decathlon for this episode: the token_key_session it was given (beside it, as\n"
                   f"# {BASE_MODULE}) with {why} laid over it.\n"
                   "import os as _os\nimport runpy as _runpy\n\n"
                   f"_base = _runpy.run_path(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "
                   f"{BASE_MODULE!r}))\n"
                   "globals().update({k: v for k, v in _base.items() if not k.startswith('__')})\n"
                   f"all_token_key_session.update({json.dumps(values, indent=4, sort_keys=True)})\n",
                   encoding="utf-8")


def _emulated(configs: Path) -> dict[str, str]:
    return {
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


def _service_account(key: str) -> str:
    return json.dumps({
        "type": "service_account", "project_id": PROJECT_ID, "private_key_id": "0" * 40, "private_key": key,
        "client_email": SERVICE_ACCOUNT, "client_id": "100000000000000000001",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": "https://oauth2.googleapis.com/token",
        "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "client_x509_cert_url": f"https://www.googleapis.com/robot/v1/metadata/x509/{SERVICE_ACCOUNT}",
        "universe_domain": "googleapis.com"}, indent=2)


def _oauth_user() -> str:
    return json.dumps({
        "token": "ya29.decathlon-emulated-token", "refresh_token": "1//decathlon-emulated-refresh",
        "token_uri": "https://oauth2.googleapis.com/token",
        "client_id": "100000000001-decathlon.apps.googleusercontent.com", "client_secret": "GOCSPX-decathlon-emulated",
        "scopes": ["https://www.googleapis.com/auth/drive", "https://www.googleapis.com/auth/spreadsheets",
                   "https://www.googleapis.com/auth/forms.body", "https://www.googleapis.com/auth/calendar",
                   "https://www.googleapis.com/auth/cloud-platform"],
        "universe_domain": "googleapis.com", "account": "", "expiry": _FAR_AHEAD}, indent=2)


def write(configs: Path) -> Written:
    """Into the episode's `configs/` (its private copy: decathlon/sandbox/task_copy.py), whatever it holds."""
    key = _rsa_pem().decode("ascii")
    files = {"gcp-service_account.keys.json": _service_account(key), "google_credentials.json": _oauth_user(),
             "snowflake_rsa_key.p8": key}
    replaced = tuple(name for name, text in files.items() if _write(configs / name, text))
    if (configs / "token_key_session.py").is_file():
        lay_over(configs, _emulated(configs), "the accounts of the episode's emulated SaaS")
    return Written(tuple(files), replaced)
