"""The environment of the grader's processes (preprocess, preflight, evaluator) as far as git goes.

git decides what to run from its configs; the repository's own are defused (decathlon.sandbox.git_defuse), and
this closes the class from the other side: every key that names a program git may run while reading a
repository is forced, at git's highest precedence (GIT_CONFIG_COUNT is the command line's scope), to a
harmless value, whatever any config file says. And nothing git-related leaks in from the host's
environment: a GIT_DIR, GIT_CONFIG_PARAMETERS, GIT_SSH_COMMAND… of whoever started decathlon would
point the grader's git somewhere else.
"""
from __future__ import annotations

from typing import Mapping

# (key, value): each a program git would run, or a way to one.
FORCED: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),  # no hook is ever found
    ("core.fsmonitor", "false"),
    ("core.sshCommand", "ssh"),
    ("core.pager", "cat"),
    ("gpg.program", "gpg"),
    ("gpg.ssh.program", "ssh-keygen"),
    ("gpg.x509.program", "gpgsm"),
    ("log.showSignature", "false"),
    ("credential.helper", ""),  # an empty value empties the list of helpers
    ("protocol.ext.allow", "never"),
    ("safe.bareRepository", "explicit"),  # a bare repository planted in a folder is not discovered
)
# Variables of the host that would steer git (GIT_*), or hand it a program (SSH_ASKPASS).
_STEERING_PREFIXES = ("GIT_",)
_STEERING = frozenset({"SSH_ASKPASS", "EDITOR", "VISUAL", "PAGER"})


def scrub(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without what would steer git."""
    return {k: v for k, v in env.items() if not k.startswith(_STEERING_PREFIXES) and k not in _STEERING}


def forced() -> dict[str, str]:
    out = {"GIT_CONFIG_COUNT": str(len(FORCED)), "GIT_TERMINAL_PROMPT": "0"}
    for i, (key, value) in enumerate(FORCED):
        out[f"GIT_CONFIG_KEY_{i}"] = key
        out[f"GIT_CONFIG_VALUE_{i}"] = value
    return out


def grader_git_env(base: Mapping[str, str]) -> dict[str, str]:
    """`base` (a full environment) as the grader's processes get it."""
    return {**scrub(base), **forced()}
