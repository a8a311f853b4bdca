"""The credentials and configs a checkout's SaaS scripts and servers read, made for the episode and pointing
at its emulators (decathlon/emulators/front): each front vendor's descriptor says which files its family of checkouts
reads (decathlon.emulators.<name>.credentials: Google's service account, authorized user and OAuth token files,
Snowflake's key pair), all made with one fresh RSA key per episode, and what it lays over the token_key_session:

- `configs/token_key_session.py`: the one the episode was given (DECATHLON_TOKEN_KEY_SESSION, the checkout's, or its
  example), kept beside it and run as it is, with the emulated project and accounts laid over it and every key-file
  path it names (KEY_FILE_TOKENS) pointing at the vendors' files: its allowed-resource lists and the rest still count.

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

from decathlon.emulators import registry

BASE_MODULE = "token_key_session_base.py"
# The token_key_session entries that name a credentials file, and the files: every front vendor's.
KEY_FILE_TOKENS = tuple(t for v in registry.front_vendors() if v.credentials for t in v.credentials.token_files)
KEY_FILES = tuple(f for v in registry.front_vendors() if v.credentials for f in v.credentials.files)


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


def write(configs: Path) -> Written:
    """Into the episode's `configs/` (its private copy: decathlon/sandbox/task_copy.py), whatever it holds."""
    key = _rsa_pem().decode("ascii")
    vendors = [v.credentials for v in registry.front_vendors() if v.credentials is not None]
    files = {name: text for c in vendors for name, text in c.write(configs, key).items()}
    replaced = tuple(name for name, text in files.items() if _write(configs / name, text))
    if (configs / "token_key_session.py").is_file():
        # After the files: their paths resolve to the episode's own, no longer to a link the checkout held.
        tokens = {k: v for c in vendors for k, v in c.token_values(configs).items()}
        lay_over(configs, tokens, "the accounts of the episode's emulated SaaS")
    return Written(tuple(files), replaced)
