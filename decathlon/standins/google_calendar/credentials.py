"""The reference's sign-in files, read as it reads them at start-up.

- The OAuth client: CALENDAR_OAUTH_PATH, else ~/.calendar-mcp/gcp-oauth.keys.json (Google's client-secret download:
  `{"installed": {...}}` or `{"web": {...}}`); a `gcp-oauth.keys.json` in the working folder is copied there first.
- The user's tokens: CALENDAR_CREDENTIALS_PATH, else ~/.calendar-mcp/credentials.json, given to Node's
  OAuth2Client.setCredentials as they are (`access_token`, `refresh_token`, `expiry_date` in epoch milliseconds).
  Toolathlon copies its google_credentials.json there, whose access token is under `token`, which setCredentials does
  not read: the reference then signs in with the refresh token alone, and so does this.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..google_api import UserCredentials

KEYS_FILE = "gcp-oauth.keys.json"


class CredentialsError(Exception):
    """The reference prints this and exits 1 before it serves."""


def config_dir() -> Path:
    return Path.home() / ".calendar-mcp"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CredentialsError(f"Error loading credentials: {exc}") from None


def _expiry(millis: Any) -> datetime | None:
    if isinstance(millis, bool) or not isinstance(millis, (int, float)):
        return None
    try:
        return datetime.fromtimestamp(millis / 1000, tz=timezone.utc).replace(tzinfo=None)
    except (OverflowError, OSError, ValueError):
        return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def load(cwd: Path, env: dict[str, str]) -> UserCredentials:
    folder = config_dir()
    keys_path = Path(env.get("CALENDAR_OAUTH_PATH") or folder / KEYS_FILE)
    tokens_path = Path(env.get("CALENDAR_CREDENTIALS_PATH") or folder / "credentials.json")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        local = cwd / KEYS_FILE
        if local.exists():
            shutil.copyfile(local, keys_path)
            # Upstream says this on stdout, ahead of the protocol; stderr keeps the stream clean.
            print("OAuth keys found in current directory, copied to global config.", file=sys.stderr)
    except OSError as exc:
        raise CredentialsError(f"Error loading credentials: {exc}") from None
    if not keys_path.exists():
        raise CredentialsError(f"Error: OAuth keys file not found. Please place {KEYS_FILE} in current directory or "
                               f"{folder}")
    keys_file = _read_json(keys_path)
    keys = (keys_file.get("installed") or keys_file.get("web")) if isinstance(keys_file, dict) else None
    if not isinstance(keys, dict):
        raise CredentialsError('Error: Invalid OAuth keys file format. File should contain either "installed" or '
                               '"web" credentials.')
    tokens = _read_json(tokens_path) if tokens_path.exists() else {}
    if not isinstance(tokens, dict):
        tokens = {}
    return UserCredentials(client_id=_text(keys.get("client_id")), client_secret=_text(keys.get("client_secret")),
                           refresh_token=_text(tokens.get("refresh_token")),
                           access_token=_text(tokens.get("access_token")), expiry=_expiry(tokens.get("expiry_date")))


def from_environment() -> UserCredentials:
    return load(Path.cwd(), dict(os.environ))
