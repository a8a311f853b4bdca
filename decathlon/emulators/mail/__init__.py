"""Poste.io for one episode: a real IMAP (pymap) and SMTP (aiosmtpd) server over one in-memory store.

Domain and accounts come from the task root's users file (decathlon/emulators/directory.py); every
mailbox starts empty with INBOX, Sent, Drafts, Trash and Junk. `start()` serves it in the caller's
event loop; `python -m decathlon.emulators.mail --root DIR` serves it as a process.
"""
from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_PORTS", "MAX_MESSAGE_BYTES", "RunningService", "start"]


def __getattr__(name: str) -> Any:
    # Lazily: the registry reads this package's descriptor (.vendor) on the host, where pymap is not installed.
    if name in __all__:
        from . import service
        return getattr(service, name)
    raise AttributeError(name)
