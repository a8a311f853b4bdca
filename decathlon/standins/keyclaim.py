"""A stand-in's side of the episode's key broker (decathlon/sandbox/key_broker.py): how a server of ours, started by
the agent's daemon as the agent's user, gets the user's private key under `--saas real` without a file or a variable
the agent could read.

Setup (root) replaces the key file's path in the server's command line with a one-shot token (`decathlon-key:…`) and
names the broker's socket in `DECATHLON_KEY_BROKER`. The server, as its very first act, makes itself non-dumpable
(so the agent's processes, of the same uid, can neither ptrace it nor read its /proc/<pid>/{mem,environ,fd}), then
trades the token for the key's bytes and keeps them in memory. The broker hands each key out once, and only to a
non-dumpable process of the agent's uid.

Standard library only: it runs first thing in the stand-ins' own virtualenvs.
"""
from __future__ import annotations

import base64
import ctypes
import json
import os
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass

BROKER_ENV = "DECATHLON_KEY_BROKER"
TOKEN_PREFIX = "decathlon-key:"
# Which argument of which stand-in names a private key (the reference servers' own flags): setup brokers its value.
BROKERED_FLAGS: dict[str, str] = {"decathlon.standins.snowflake": "--private_key_path",
                                  "decathlon.standins.google_cloud": "--service-account-path"}
MAX_REQUEST = 4096
MAX_REPLY = 1 << 20  # a service-account JSON is ~2.4 KB; a bound all the same
PR_SET_DUMPABLE = 4
TIMEOUT = 10.0


class KeyClaimError(RuntimeError):
    """The broker would not hand the key over (or could not be reached): the server cannot start."""


@dataclass(frozen=True)
class KeyRequest:
    """What a server sends: one JSON line."""
    token: str

    def encode(self) -> bytes:
        return json.dumps({"token": self.token}).encode() + b"\n"

    @classmethod
    def decode(cls, line: bytes) -> "KeyRequest":
        raw = json.loads(line)
        if not isinstance(raw, dict) or not isinstance(raw.get("token"), str):
            raise ValueError('a key request is {"token": "…"}')
        return cls(raw["token"])


@dataclass(frozen=True)
class KeyReply:
    """What the broker answers: the key's bytes, or why not. One JSON line."""
    secret: bytes | None = None
    error: str | None = None

    def encode(self) -> bytes:
        secret = base64.b64encode(self.secret).decode("ascii") if self.secret is not None else None
        return json.dumps({"secret": secret, "error": self.error}).encode() + b"\n"

    @classmethod
    def decode(cls, line: bytes) -> "KeyReply":
        raw = json.loads(line)
        if not isinstance(raw, dict):
            raise ValueError("a key reply is a JSON object")
        secret, error = raw.get("secret"), raw.get("error")
        return cls(base64.b64decode(secret, validate=True) if isinstance(secret, str) else None,
                   error if isinstance(error, str) else None)


def flag_value(argv: list[str], flag: str) -> int | None:
    """Where `flag`'s value is in argv (`--flag VALUE` or `--flag=VALUE`; the last one wins, as with argparse)."""
    found = None
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            found = i + 1
        elif arg.startswith(flag + "="):
            found = i
    return found


def read_value(argv: list[str], index: int, flag: str) -> str:
    arg = argv[index]
    return arg[len(flag) + 1:] if arg.startswith(flag + "=") else arg


def with_value(argv: list[str], index: int, flag: str, value: str) -> list[str]:
    out = list(argv)
    out[index] = f"{flag}={value}" if argv[index].startswith(flag + "=") else value
    return out


def without_flag(argv: list[str], index: int, flag: str) -> list[str]:
    """argv less `flag` and its value."""
    if argv[index].startswith(flag + "="):
        return argv[:index] + argv[index + 1:]
    return argv[:index - 1] + argv[index + 1:]


def undumpable() -> None:
    """No ptrace, no /proc/<pid>/{mem,environ,fd} for anyone but root (and no core dump), for this process and what
    it forks; an exec would undo it, which these servers never do with a key in memory."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_DUMPABLE, 0): {os.strerror(err)}")


def claim(token: str, broker: str, timeout: float = TIMEOUT) -> bytes:
    """The key `token` stands for, from the broker at `broker` (this process must be non-dumpable already)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(broker)
            conn.sendall(KeyRequest(token).encode())
            data = b""
            while not data.endswith(b"\n") and len(data) <= MAX_REPLY:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
        reply = KeyReply.decode(data)
    except (OSError, ValueError) as exc:
        raise KeyClaimError(f"the episode's key broker ({broker}) did not answer: {exc}") from None
    if reply.secret is None:
        raise KeyClaimError(f"the episode's key broker refused the key: {reply.error or 'no reason given'}")
    return reply.secret


def claim_flag(argv: list[str], flag: str, environ: Mapping[str, str] | None = None) -> tuple[int, bytes] | None:
    """Where `flag`'s value is and the key it stands for, when setup brokered it (this process is made non-dumpable
    first, before anything is asked); None when the value is a plain path (an emulated episode's key)."""
    env = os.environ if environ is None else environ
    index = flag_value(argv, flag)
    if index is None or not read_value(argv, index, flag).startswith(TOKEN_PREFIX):
        return None
    undumpable()
    broker = env.get(BROKER_ENV)
    if not broker:
        raise KeyClaimError(f"{flag} names a key of the episode's broker, but {BROKER_ENV} is not set")
    return index, claim(read_value(argv, index, flag)[len(TOKEN_PREFIX):], broker)


def claim_or_exit(argv: list[str], flag: str) -> tuple[int, bytes] | None:
    """claim_flag, or this server ends (status 1) saying why: a server without the key it was started with is none."""
    try:
        return claim_flag(argv, flag)
    except (KeyClaimError, OSError) as error:
        print(f"Error: {error}", file=sys.stderr)
        raise SystemExit(1) from None
