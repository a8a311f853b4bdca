"""The WooCommerce store a recorded run met, as the emulator's own seed: the records the run's answers printed whole
(decathlon.emulators.fidelity.woocommerce reads them) turned into the emulator's model records with their real ids, on
a fresh network of upstream's deployed stores, and written in the snapshot format (`manifest.json` + `network.json`,
decathlon.emulators.woocommerce.state) for `load_seed`.

The stand-in prints `JSON.stringify(result, null, 2)` with every backslash taken out, as upstream's server does, so an
answer whose strings hold a quote or a newline is no longer JSON; `loads` reads it back line by line (a string value
is always on a line of its own there). A stored text is recovered where rendering a candidate gives the shown text
back exactly (`shown`); a description is stored without the paragraphs `wpautop` adds to what is shown.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from decathlon.emulators.directory import Account, Directory
from decathlon.emulators.kit.state import MANIFEST, Manifest, write_json
from decathlon.emulators.woocommerce import php
from decathlon.emulators.woocommerce.clock import Clock, parse_date
from decathlon.emulators.woocommerce.model import Meta, Order, OrderItem, Post, Product, ProductAttribute, Term, User
from decathlon.emulators.woocommerce.site import DEPLOYED_STORES, FIRST_DEPLOYED_STORE, Network, Site
from decathlon.emulators.woocommerce.state import WooCommerceState

STRING_LINE = re.compile(r'^(\s*)("[^"]*": )?"(.*)"(,?)$')
UPLOADS = re.compile(r"/wp-content/uploads/(?:sites/\d+/)?(.+)$")
WIDTH = re.compile(r"\(max-width: (\d+)px\)")
MIME = {"jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp"}
TEXTS = ("description", "short_description", "purchase_note")
MONEY = ("discount_total", "discount_tax", "shipping_total", "shipping_tax", "cart_tax", "total", "total_tax")


def replay_key(store: int) -> tuple[str, str]:
    """The REST key the replay gives a store's owner (the run's own key is not in its answers)."""
    return f"ck_fidelity_{store}", f"cs_fidelity_{store}"


def directory() -> Directory:
    """Upstream's deployed stores (users 81-100), so each store has its blog id (and its uploads' folder)."""
    accounts = []
    for n in range(FIRST_DEPLOYED_STORE, FIRST_DEPLOYED_STORE + DEPLOYED_STORES):
        key, secret = replay_key(n)
        accounts.append(Account(n, "Store", str(n), f"Store {n}", f"store{n}@mcp.com", f"pw{n}",
                                wc_consumer_key=key, wc_consumer_secret=secret))
    return Directory("mcp.com", tuple(accounts))


def shown(value: str) -> str:
    """A string as an answer shows it: JSON.stringify's escaping, then every backslash removed."""
    return json.dumps(value, ensure_ascii=False)[1:-1].replace("\\", "")


def loads(text: str) -> Any:
    """An answer's JSON, string values re-escaped line by line; None where it is not JSON even so."""
    lines = []
    for line in text.splitlines():
        m = STRING_LINE.match(line)
        lines.append(f"{m.group(1)}{m.group(2) or ''}{json.dumps(m.group(3))}{m.group(4)}" if m else line)
    try:
        return json.loads("\n".join(lines))
    except ValueError:
        return None


def stored_text(text: str) -> str | None:
    """The raw text whose `wpautop` is shown as `text`, or None where no simple candidate gives it back."""
    inner = text[3:-5] if text.startswith("<p>") and text.endswith("</p>n") else text
    paragraphs = inner.replace("</p>n<p>", "\n\n")
    # the most decoded first: a text of paragraphs renders as one with their tags kept would
    for candidate in ("", paragraphs.replace("<br />n", "\n"), paragraphs, inner):
        if shown(php.wpautop(candidate)) == text:
            return candidate
    return None


def _date(value: Any) -> datetime | None:
    return parse_date(value) if isinstance(value, str) else None


def _meta(items: Any) -> list[Meta]:
    return [Meta(int(m["id"]), str(m["key"]), m.get("value")) for m in items or [] if isinstance(m, dict)]


@dataclass
class Seen:
    """What a run's answers printed whole, keyed by id: the first answer showing an object, the state the run met."""

    store: int | None = None
    products: dict[int, dict[str, Any]] = field(default_factory=dict)
    categories: dict[int, dict[str, Any]] = field(default_factory=dict)  # from a category listing: whole
    category_refs: dict[int, dict[str, Any]] = field(default_factory=dict)  # a product's {id, name, slug}
    attributes: dict[int, dict[str, Any]] = field(default_factory=dict)  # a product's global attribute
    images: dict[int, dict[str, Any]] = field(default_factory=dict)
    orders: dict[int, dict[str, Any]] = field(default_factory=dict)
    customers: dict[int, dict[str, Any]] = field(default_factory=dict)
    unrebuilt: dict[int, str] = field(default_factory=dict)  # product id → why it cannot be stored as shown
    store_complete: bool = False  # an unfiltered product listing showed every product of the store

    def first_id_after(self) -> int:
        ids = [*self.products, *self.images, *self.orders, 8]
        return max(ids) + 1


def _attachment(image: dict[str, Any]) -> Post:
    when = _date(image.get("date_created")) or datetime(2025, 1, 1)
    m = UPLOADS.search(str(image.get("src") or ""))
    path = m.group(1) if m else ""
    width = WIDTH.search(str(image.get("sizes") or ""))
    post = Post(int(image["id"]), "attachment", when, _date(image.get("date_modified")) or when,
                title=str(image.get("name") or ""), status="inherit", file=path,
                mime_type=MIME.get(path.rpartition(".")[2].lower(), ""),
                width=int(width.group(1)) if width else 0, height=int(width.group(1)) if width else 0)
    if image.get("alt"):
        post.meta.append(Meta(0, "_wp_attachment_image_alt", image["alt"]))
    return post


def _product(doc: dict[str, Any]) -> Product:
    created = _date(doc.get("date_created")) or datetime(2025, 1, 1)
    p = Product(int(doc["id"]), str(doc.get("type") or "simple"), created, _date(doc.get("date_modified")) or created)
    for name in ("name", "slug", "status", "featured", "catalog_visibility", "sku", "global_unique_id", "price",
                 "regular_price", "sale_price", "total_sales", "tax_status", "tax_class", "manage_stock",
                 "stock_status", "backorders", "sold_individually", "weight", "upsell_ids", "cross_sell_ids",
                 "parent_id", "reviews_allowed", "menu_order", "post_password", "virtual", "downloadable",
                 "download_limit", "download_expiry", "external_url", "button_text", "rating_count",
                 "shipping_class_id", "default_attributes"):
        if name in doc and doc[name] is not None:
            setattr(p, name, doc[name])
    p.stock_quantity = doc.get("stock_quantity")
    p.low_stock_amount = "" if doc.get("low_stock_amount") is None else doc["low_stock_amount"]
    p.date_on_sale_from, p.date_on_sale_to = _date(doc.get("date_on_sale_from")), _date(doc.get("date_on_sale_to"))
    dims = doc.get("dimensions") or {}
    p.length, p.width, p.height = (str(dims.get(k, "")) for k in ("length", "width", "height"))
    p.average_rating = str(php.php_float(doc.get("average_rating") or 0)).rstrip("0").rstrip(".") or "0"
    p.category_ids = [int(c["id"]) for c in doc.get("categories") or []]
    p.tag_ids = [int(c["id"]) for c in doc.get("tags") or []]
    p.brand_ids = [int(c["id"]) for c in doc.get("brands") or []]
    images = [int(i["id"]) for i in doc.get("images") or []]
    p.image_id, p.gallery_image_ids = (images[0], images[1:]) if images else (0, [])
    p.children = list(doc.get("grouped_products") or [])
    p.downloads = [dict(d) for d in doc.get("downloads") or []]
    p.attributes = [ProductAttribute(int(a.get("id") or 0), str(a.get("name") or ""),
                                     list(a.get("options") or []), int(a.get("position") or 0),
                                     bool(a.get("visible")), bool(a.get("variation")))
                    for a in doc.get("attributes") or []]
    p.meta = _meta(doc.get("meta_data"))
    p.slug_given = True
    for name in TEXTS:
        text = stored_text(str(doc.get(name) or ""))
        setattr(p, name, text or "")
    return p


def _item(kind: str, doc: dict[str, Any]) -> OrderItem:
    item = OrderItem(int(doc["id"]), kind, name=str(doc.get("name") or doc.get("method_title") or ""),
                     product_id=int(doc.get("product_id") or 0), variation_id=int(doc.get("variation_id") or 0),
                     quantity=doc.get("quantity") or 0, tax_class=str(doc.get("tax_class") or ""),
                     subtotal=php.php_float(doc.get("subtotal") or 0), subtotal_tax=php.php_float(doc.get("subtotal_tax") or 0),
                     total=php.php_float(doc.get("total") or 0), total_tax=php.php_float(doc.get("total_tax") or 0),
                     method_id=str(doc.get("method_id") or ""), instance_id=str(doc.get("instance_id") or ""),
                     tax_status=str(doc.get("tax_status") or "taxable"), code=str(doc.get("code") or ""),
                     discount=php.php_float(doc.get("discount") or 0))
    price, quantity = doc.get("price"), doc.get("quantity")
    if isinstance(price, (int, float)) and isinstance(quantity, (int, float)) and quantity \
            and php.wc_format_decimal(price * quantity, 2) == php.wc_format_decimal(item.total, 2):
        item.total = price * quantity  # WooCommerce keeps the line's total unrounded: `price` shows it
    item.meta = _meta(doc.get("meta_data"))
    return item


def _order(doc: dict[str, Any]) -> Order:
    created = _date(doc.get("date_created")) or datetime(2025, 1, 1)
    order = Order(int(doc["id"]), created, _date(doc.get("date_modified")) or created)
    for name in ("status", "parent_id", "currency", "version", "prices_include_tax", "customer_id", "order_key",
                 "payment_method", "payment_method_title", "transaction_id", "customer_ip_address",
                 "customer_user_agent", "created_via", "customer_note", "cart_hash"):
        if doc.get(name) is not None:
            setattr(order, name, doc[name])
    for name in MONEY:
        setattr(order, name, php.php_float(doc.get(name) or 0))
    order.billing, order.shipping = dict(doc.get("billing") or {}), dict(doc.get("shipping") or {})
    order.date_completed, order.date_paid = _date(doc.get("date_completed")), _date(doc.get("date_paid"))
    order.items = [_item(kind, i) for key, kind in (("line_items", "line_item"), ("shipping_lines", "shipping"),
                                                     ("fee_lines", "fee"), ("coupon_lines", "coupon"))
                   for i in doc.get(key) or []]
    order.items.sort(key=lambda i: i.id)
    order.meta = _meta(doc.get("meta_data"))
    # what WooCommerce had done for it already (a seeded order is not counted again on a status change)
    order.stock_reduced = order.sales_recorded = order.status in ("processing", "completed", "on-hold")
    return order


def _customer(site: Site, doc: dict[str, Any]) -> None:
    user_id = int(doc["id"])
    network = site.network
    user = network.users.get(user_id)
    created = _date(doc.get("date_created")) or datetime(2025, 1, 1)
    if user is None:
        user = User(user_id, str(doc.get("username") or ""), str(doc.get("email") or ""), "", created, created)
        network.users[user_id] = user
        network._next_user = max(network._next_user, user_id + 1)
    user.login, user.email = str(doc.get("username") or user.login), str(doc.get("email") or user.email)
    user.registered, user.modified = created, _date(doc.get("date_modified")) or created
    user.first_name, user.last_name = str(doc.get("first_name") or ""), str(doc.get("last_name") or "")
    user.billing, user.shipping = dict(doc.get("billing") or {}), dict(doc.get("shipping") or {})
    user.paying_customer = bool(doc.get("is_paying_customer"))
    user.roles[site.blog_id] = str(doc.get("role") or "customer")


def build(seen: Seen, clock: Clock) -> tuple[Network, Site]:
    """A fresh network whose store holds what the run showed, the next ids after the largest it showed."""
    network = Network(directory(), clock)
    site = network.site_by_slug(f"store{seen.store or FIRST_DEPLOYED_STORE}")
    assert site is not None
    for ref in (*seen.category_refs.values(), *seen.categories.values()):
        term = Term(int(ref["id"]), "product_cat", str(ref["name"]), str(ref["slug"]))
        for name in ("description", "parent", "display", "menu_order"):
            if name in ref:
                setattr(term, name, ref[name])
        if isinstance(ref.get("image"), dict):
            term.image_id = int(ref["image"].get("id") or 0)
        site.terms[term.id] = term
    for image in seen.images.values():
        site.posts[int(image["id"])] = _attachment(image)
    for doc in seen.products.values():
        site.posts[int(doc["id"])] = _product(doc)
    for doc in seen.orders.values():
        site.posts[int(doc["id"])] = _order(doc)
    for doc in seen.customers.values():
        _customer(site, doc)
    site._next["post"] = max(site._next["post"], seen.first_id_after())
    site._next["term"] = max([site._next["term"], *(t + 1 for t in site.terms)])
    metas = [m.id for r in site.posts.values() for m in getattr(r, "meta", [])]
    metas += [m.id for r in site.posts.values() if isinstance(r, Order) for i in r.items for m in i.meta]
    site._next["postmeta"] = site._next["ordermeta"] = max([site._next["postmeta"], *(m + 1 for m in metas)])
    items = [i.id for r in site.posts.values() if isinstance(r, Order) for i in r.items]
    site._next["order_item"] = max([site._next["order_item"], *(i + 1 for i in items)])
    site.catalog_version += 1
    return network, site


async def write(network: Network, folder: Path) -> Path:
    """`network` as a seed pack in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    state = WooCommerceState(network, lambda: network)
    await state._dump(folder)
    write_json(folder / MANIFEST, Manifest(state.name).to_json())
    return folder
