"""The agent's own view of the host's files, on the local backend when it runs as root.

There the agent runs as an unprivileged user of its own (decathlon.sandbox.users), which already keeps it out
of the grader's and root's folders and off the checkout's files for writing. What every user of the
host may read stays readable, and that includes the task source with its ground truth. So the episode
daemon, before it drops to the agent's user, moves into a mount namespace of its own in which those
folders (the task source, and whatever the backend names in TASK_API_HIDE) are covered by an empty,
read-only tmpfs. The agent, without capabilities, cannot undo a mount.

In a container (compose, prime) the source is the grader's alone already, and the daemon is never root:
nothing happens here.

Python 3.11 has no os.unshare or mount, hence libc through ctypes (decathlon.sandbox.syscalls).
"""
from __future__ import annotations

import os

from decathlon.sandbox.syscalls import CLONE_NEWNS, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE, MS_RDONLY, MS_REC
from decathlon.sandbox.syscalls import check, libc, mount

HIDE_ENV = "TASK_API_HIDE"  # os.pathsep-separated folders the backend wants out of the agent's sight


class JailError(OSError):
    pass


def hidden(extra: list[str] | None = None) -> list[str]:
    """The folders to hide: `extra` and those of TASK_API_HIDE, existing and absolute, sorted, without
    one inside another (covering the outer one covers it)."""
    named = [*(extra or []), *filter(None, os.environ.get(HIDE_ENV, "").split(os.pathsep))]
    folders = sorted({os.path.realpath(p) for p in named if os.path.isabs(p) and os.path.isdir(p)})
    return [f for f in folders if not any(f != o and f.startswith(o.rstrip("/") + "/") for o in folders)]


def enter(folders: list[str]) -> None:
    """Into a mount namespace of this process's own, with `folders` covered. Needs CAP_SYS_ADMIN (root);
    call it before dropping to the agent's user."""
    if not folders:
        return
    check(libc().unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)", JailError)
    # Private, so that nothing mounted here reaches the host's namespace (and nothing of the host's
    # unmounts our cover).
    mount(None, "/", None, MS_REC | MS_PRIVATE, error=JailError)
    for folder in folders:
        mount("tmpfs", folder, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=000", JailError)

