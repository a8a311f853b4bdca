"""Every REST route the emulator serves, registered in upstream's order (batch before item routes)."""
from __future__ import annotations

from . import coupons, customers, orders, products, reports, settings, shipping, system, taxes, terms, variations, wp
from .rest import Router


def build_router() -> Router:
    router = Router()
    # Sub-resources of /products first, so that "attributes", "categories" ... are never read as an id.
    terms.register(router)
    products.register(router)
    variations.register(router)
    orders.register(router)
    customers.register(router)
    coupons.register(router)
    reports.register(router)
    settings.register(router)
    shipping.register(router)
    taxes.register(router)
    system.register(router)
    wp.register(router)
    return router
