"""The WooCommerce emulator's state as a folder (decathlon.emulators.kit.state): `network.json`, the multisite's users
and id sequences, and every site built so far (its posts, products, orders, coupons, terms, comments, taxes,
shipping zones, webhooks, options, id sequences and seeded generator) as plain records
(decathlon.emulators.kit.plain); uploaded files' bytes in `blobs/` once large. A site not built yet is built on
first use as a fresh install, exactly as before.

Handlers run on the event loop, which owns the network, so the work needs no lock. The network object stays the
one the app holds: its contents are replaced in place; derived indexes are rebuilt on first use.
"""
from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any, Callable

from decathlon.emulators.kit.plain import Codec, PlainError
from decathlon.emulators.kit.state import FolderState, StateError, part, read_json, write_json
from decathlon.emulators.woocommerce import model
from decathlon.emulators.woocommerce.site import Network, Site

NAME = "woocommerce"
FILE = "network.json"
TYPES = tuple(c for _, c in inspect.getmembers(model, inspect.isclass)
              if dataclasses.is_dataclass(c) and c.__module__ == model.__name__)
# The process's configuration (directory, clock, host, seed, the stores' table: all from the task root), not state.
_NETWORK_STATE = ("created", "users", "_next_user", "_next_usermeta", "_owners_made")
_SITE_NOT_STATE = ("network", "derived")


class WooCommerceState(FolderState):
    name = NAME

    def __init__(self, network: Network, fresh: Callable[[], Network]) -> None:
        self.network, self.fresh = network, fresh

    async def _fresh(self) -> None:
        new = self.fresh()
        self.network.__dict__.clear()
        self.network.__dict__.update(vars(new))
        for site in self.network._sites.values():
            site.network = self.network

    async def _dump(self, folder: Path) -> None:
        codec = Codec(TYPES, folder / "blobs")
        doc: dict[str, Any] = {k: codec.encode(getattr(self.network, k)) for k in _NETWORK_STATE}
        doc["sites"] = [{k: codec.encode(v) for k, v in vars(site).items() if k not in _SITE_NOT_STATE}
                        for _, site in sorted(self.network._sites.items())]
        write_json(folder / FILE, doc)

    async def _load(self, folder: Path, seed: bool) -> None:
        path = part(folder, FILE, seed)
        if path is None:
            return
        raw = read_json(path)
        if not isinstance(raw, dict) or not isinstance(raw.get("sites", []), list):
            raise StateError(f"{path}: not a WooCommerce network (an object with \"sites\", a list)", "bad_file")
        codec = Codec(TYPES, folder / "blobs")
        try:
            for key in _NETWORK_STATE:
                if key in raw:
                    setattr(self.network, key, codec.decode(raw[key]))
            sites = {}
            for doc in raw.get("sites", []):
                site = Site.__new__(Site)
                contents = codec.decode(doc)
                if not isinstance(contents, dict) or not isinstance(contents.get("blog_id"), int):
                    raise StateError(f"{path}: each site is an object with its \"blog_id\"", "bad_file")
                site.__dict__.update(contents)
                site.network, site.derived = self.network, {}
                sites[site.blog_id] = site
        except PlainError as exc:
            raise StateError(f"{path}: {exc}", "bad_file") from None
        self.network._sites.update(sites)
