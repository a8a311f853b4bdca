"""A stateful emulator of upstream's WordPress multisite with WooCommerce 10.2.2 (REST wc/v3 and wp/v2).

`start(directory, host, ports)` serves every store `/storeN/` of the directory (and the main site)
on one HTTP port, 10003 by default; `python -m decathlon.emulators.woocommerce --root DIR` does the same
from a task root and prints `ready woocommerce {"http": N}`. Each store has its own products,
orders, customers, media and settings, IDs allocated as WordPress allocates them, and answers with
WooCommerce's field order, status codes and error bodies (see the modules for the details taken
from upstream and from recorded runs). The clock is injectable; state lives in memory only.
"""
from __future__ import annotations

from typing import Any

__all__ = ["RunningService", "start"]


def __getattr__(name: str) -> Any:
    # Lazily: the registry reads this package's descriptor (.vendor) on the host, without the emulator's dependencies.
    if name in __all__:
        from . import service
        return getattr(service, name)
    raise AttributeError(name)
