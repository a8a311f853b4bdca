"""The Snowflake key pair's private half, and the account an emulated episode's scripts and servers sign in to."""
from __future__ import annotations

from pathlib import Path

ACCOUNT = "DECATHLON"
USER = "DECATHLON_AGENT"
KEY_FILE = "snowflake_rsa_key.p8"


def write(configs: Path, key: str) -> dict[str, str]:
    return {KEY_FILE: key}


def tokens(configs: Path) -> dict[str, str]:
    return {"snowflake_account": ACCOUNT, "snowflake_user": USER,
            "snowflake_private_key_path": str((configs / KEY_FILE).resolve())}
