"""Poste.io for one episode: a real IMAP (pymap) and SMTP (aiosmtpd) server over one in-memory store.

Domain and accounts come from the task root's users file (decathlon/emulators/directory.py); every
mailbox starts empty with INBOX, Sent, Drafts, Trash and Junk. `start()` serves it in the caller's
event loop; `python -m decathlon.emulators.mail --root DIR` serves it as a process.
"""
from .service import DEFAULT_PORTS, MAX_MESSAGE_BYTES, RunningService, start

__all__ = ["DEFAULT_PORTS", "MAX_MESSAGE_BYTES", "RunningService", "start"]
