"""The mail service on an event loop of its own thread, for synchronous callers.

imaplib and smtplib block, so a caller that uses them (a test, a script) cannot share an event
loop with the server; here the server gets a loop in a daemon thread and the caller talks to it
over its sockets. `call()` runs a coroutine on that loop (e.g. to read the store).
"""
from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from ..directory import Directory
from .service import RunningService, start

T = TypeVar("T")
_TIMEOUT = 10.0


@dataclass
class ThreadedMail:
    service: RunningService
    loop: asyncio.AbstractEventLoop

    @property
    def imap_port(self) -> int:
        return self.service.ports["imap"]

    @property
    def smtp_port(self) -> int:
        return self.service.ports["smtp"]

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(_TIMEOUT)

    def messages(self, address: str, folder: str = "INBOX") -> list[bytes]:
        return self.call(self.service.store.messages(address, folder))


@contextmanager
def serve_in_thread(directory: Directory, host: str = "127.0.0.1", ports: dict[str, int] | None = None,
                    **options: Any) -> Iterator[ThreadedMail]:
    """Run `start(directory, host, ports, **options)` in a background loop until the block ends."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="mail-service", daemon=True)
    thread.start()
    try:
        service = asyncio.run_coroutine_threadsafe(start(directory, host, ports, **options), loop).result(_TIMEOUT)
        try:
            yield ThreadedMail(service, loop)
        finally:
            asyncio.run_coroutine_threadsafe(service.close(), loop).result(_TIMEOUT)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_TIMEOUT)
        loop.close()
