"""Secrets never reach a cassette: credential values, auth headers and URL tokens are replaced at record time."""
from __future__ import annotations

import os
import re
from typing import Any, Iterable

from decathlon.tape.canonical import map_strings

SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE)", re.I)
MIN_SECRET = 6
# Shapes of well-known credentials, for the scan of a finished cassette.
KNOWN_SHAPES = [
    re.compile(r"sk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"gh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"AKIA[0-9A-Z]{16}"),
    re.compile(r"xox[baprs]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"(?i)\bbearer\s+(?!<REDACTED)[A-Za-z0-9._\-]{12,}"),
]


def secret_names(env: dict[str, str]) -> list[str]:
    return sorted(k for k, v in env.items() if SECRET_NAME.search(k) and len(v or "") >= MIN_SECRET)


def secrets_from_env(*envs: dict[str, str]) -> dict[str, str]:
    """Name → value of every credential-looking variable (the process's and the servers' own)."""
    out: dict[str, str] = {}
    for env in (dict(os.environ), *envs):
        for name in secret_names(env):
            out[name] = env[name]
    return out


class Redactor:
    def __init__(self, secrets: dict[str, str]) -> None:
        # One mark per value (the first name, alphabetically, when several variables hold it), and
        # longest values first, so a secret containing another is replaced whole.
        names: dict[str, str] = {}
        for name, value in sorted(secrets.items()):
            if len(value) >= MIN_SECRET:
                names.setdefault(value, name)
        self.pairs = sorted(((v, f"<REDACTED:{k}>") for v, k in names.items()), key=lambda p: (-len(p[0]), p[0]))

    def text(self, s: str) -> str:
        for value, mark in self.pairs:
            if value in s:
                s = s.replace(value, mark)
        return s

    def apply(self, value: Any) -> Any:
        return map_strings(value, self.text) if self.pairs else value


def scan(strings: Iterable[str], secrets: dict[str, str]) -> list[str]:
    """Problems found: a known secret value, or something shaped like a credential."""
    problems = []
    values = {v: k for k, v in secrets.items() if len(v) >= MIN_SECRET}
    for s in strings:
        for value, name in values.items():
            if value in s:
                problems.append(f"the value of ${name} appears")
        for shape in KNOWN_SHAPES:
            m = shape.search(s)
            if m:
                problems.append(f"a credential-shaped string appears: {m.group(0)[:12]}…")
    return sorted(set(problems))
