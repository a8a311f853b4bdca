"""Products and variations as WC_Product keeps them: saving, prices, stock, metadata, queries.

What a save does, as WooCommerce's data store does it: a SKU must be unique among products and
variations not in the trash ("Invalid or duplicated SKU."); a product with no category gets the
default one (Uncategorized, 15); the active price is the sale price while a sale runs and the
regular price otherwise; a managed stock decides the stock status (above 0 in stock, else on
backorder if allowed, else out of stock); a variable product takes its price and stock status from
its variations; every save stamps the modified date. Meta keys WooCommerce owns are not meta:
`total_sales`, `_sku`, `_price` ... set the product's own field, and such keys (and `_` + any field
name, like `_total_sales`) never show in `meta_data`, as recorded runs show.
"""
from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from . import php
from .errors import WcException
from .model import Meta, Product
from .site import Site

# WC_Product_Data_Store_CPT::$internal_meta_keys.
INTERNAL_META = frozenset({
    "_visibility", "_sku", "_price", "_regular_price", "_sale_price", "_sale_price_dates_from",
    "_sale_price_dates_to", "total_sales", "_tax_status", "_tax_class", "_manage_stock", "_stock", "_stock_status",
    "_backorders", "_low_stock_amount", "_sold_individually", "_weight", "_length", "_width", "_height",
    "_upsell_ids", "_crosssell_ids", "_purchase_note", "_default_attributes", "_product_attributes", "_virtual",
    "_downloadable", "_download_limit", "_download_expiry", "_featured", "_downloadable_files", "_wc_rating_count",
    "_wc_average_rating", "_wc_review_count", "_variation_description", "_thumbnail_id", "_file_paths",
    "_product_image_gallery", "_product_version", "_wp_old_slug", "_edit_last", "_edit_lock", "_global_unique_id",
    "_cogs_total_value", "attribute_pa_", "_children", "_product_url", "_button_text",
})
DATA_KEYS = ("name", "slug", "date_created", "date_modified", "status", "featured", "catalog_visibility",
             "description", "short_description", "sku", "global_unique_id", "price", "regular_price", "sale_price",
             "date_on_sale_from", "date_on_sale_to", "total_sales", "tax_status", "tax_class", "manage_stock",
             "stock_quantity", "stock_status", "backorders", "low_stock_amount", "sold_individually", "weight",
             "length", "width", "height", "upsell_ids", "cross_sell_ids", "parent_id", "reviews_allowed",
             "purchase_note", "attributes", "default_attributes", "menu_order", "post_password", "virtual",
             "downloadable", "category_ids", "tag_ids", "shipping_class_id", "downloads", "image_id",
             "gallery_image_ids", "download_limit", "download_expiry", "rating_counts", "average_rating",
             "review_count", "product_url", "button_text", "children", "brand_ids")
HIDDEN_META = INTERNAL_META | {"_" + key for key in DATA_KEYS}
VISIBLE_STATUSES = ("publish", "private", "draft", "pending", "future")


def _set_bool(attr: str):
    def setter(product: Product, value: Any) -> None:
        setattr(product, attr, php.wc_string_to_bool(value))
    return setter


def _set_text(attr: str):
    def setter(product: Product, value: Any) -> None:
        setattr(product, attr, php.php_string(value))
    return setter


def _set_price(attr: str):
    def setter(product: Product, value: Any) -> None:
        setattr(product, attr, php.wc_format_decimal(value))
    return setter


def _set_total_sales(product: Product, value: Any) -> None:
    product.total_sales = php.absint(value)


# Internal keys whose `set_<key without _>` exists: update_meta_data calls the setter instead.
META_SETTERS = {
    "total_sales": _set_total_sales, "_sku": _set_text("sku"), "_price": _set_price("price"),
    "_regular_price": _set_price("regular_price"), "_sale_price": _set_price("sale_price"),
    "_tax_status": _set_text("tax_status"), "_tax_class": _set_text("tax_class"),
    "_manage_stock": _set_bool("manage_stock"), "_stock_status": _set_text("stock_status"),
    "_backorders": _set_text("backorders"), "_sold_individually": _set_bool("sold_individually"),
    "_weight": _set_text("weight"), "_length": _set_text("length"), "_width": _set_text("width"),
    "_height": _set_text("height"), "_purchase_note": _set_text("purchase_note"), "_virtual": _set_bool("virtual"),
    "_downloadable": _set_bool("downloadable"), "_featured": _set_bool("featured"),
    "_global_unique_id": _set_text("global_unique_id"),
}


def stored_meta_value(value: Any) -> Any:
    """What a meta value reads back as: scalars become strings (the meta table holds text)."""
    if isinstance(value, (dict, list)) or value is None:
        return value
    return php.php_string(value)


def update_meta(site: Site, entries: list[Meta], key: str, value: Any, meta_id: Any = None, table: str = "postmeta",
                target: Any = None, setters: dict[str, Any] | None = None) -> None:
    """WC_Data::update_meta_data: by id when it names an existing entry, else the first entry with the key
    (other entries with that key are dropped), else a new entry; a null value deletes on save."""
    key = php.php_string(key)
    if setters and target is not None and key in setters:
        setters[key](target, value)
        return
    stored = stored_meta_value(value)
    wanted_id = php.absint(meta_id) if meta_id not in (None, "") else 0
    if wanted_id:
        for entry in entries:
            if entry.id == wanted_id:
                entry.key, entry.value = key, stored
                _drop_nulls(entries)
                return
    matches = [entry for entry in entries if entry.key == key]
    if matches:
        matches[0].value = stored
        for extra in matches[1:]:
            entries.remove(extra)
        _drop_nulls(entries)
        return
    if stored is not None:
        site.add_meta(entries, key, stored, table)


def _drop_nulls(entries: list[Meta]) -> None:
    entries[:] = [entry for entry in entries if entry.value is not None]


def visible_meta(entries: list[Meta], hidden: frozenset[str] = HIDDEN_META) -> list[dict[str, Any]]:
    return [{"id": entry.id, "key": entry.key, "value": entry.value} for entry in entries
            if entry.key not in hidden and not entry.key.lower().startswith("wp_")]


# --- prices and stock -----------------------------------------------------------------------


def is_on_sale(product: Product, now: datetime, site: Site | None = None) -> bool:
    if product.type in ("variable", "grouped"):
        return site is not None and any(is_on_sale(child, now) for child in children(site, product))
    if product.sale_price == "" or php.php_float(product.regular_price) <= php.php_float(product.sale_price):
        return False
    if product.date_on_sale_from and product.date_on_sale_from > now:
        return False
    if product.date_on_sale_to and product.date_on_sale_to < now:
        return False
    return True


def touch(site: Site) -> None:
    """Record a change to products or terms: the cached indexes below are stale from now on."""
    site.catalog_version += 1


def _cached(site: Site, name: str, build: Any) -> Any:
    entry = site.derived.get(name)
    if entry is None or entry[0] != site.catalog_version:
        entry = (site.catalog_version, build(site))
        site.derived[name] = entry
    return entry[1]


def _variation_index(site: Site) -> dict[int, list[int]]:
    index: dict[int, list[int]] = {}
    for record in site.posts.values():
        if isinstance(record, Product) and record.type == "variation":
            index.setdefault(record.parent_id, []).append(record.id)
    return index


def _related_index(site: Site) -> dict[tuple[str, int], list[int]]:
    index: dict[tuple[str, int], list[int]] = {}
    for record in site.posts.values():
        if isinstance(record, Product) and record.type != "variation" and record.status == "publish" \
                and record.catalog_visibility in ("visible", "catalog"):
            for term_id in record.category_ids:
                index.setdefault(("cat", term_id), []).append(record.id)
            for term_id in record.tag_ids:
                index.setdefault(("tag", term_id), []).append(record.id)
    return {key: sorted(ids) for key, ids in index.items()}


def children(site: Site, product: Product) -> list[Product]:
    """A variable product's variations (menu order, then id) or a grouped product's children."""
    if product.type == "grouped":
        return [child for child in (site.product(pid) for pid in product.children) if child is not None]
    if product.type != "variable":
        return []
    ids = _cached(site, "variations", _variation_index).get(product.id, [])
    found = [child for child in (site.product(pid) for pid in ids)
             if child is not None and child.status in ("publish", "private")]
    return sorted(found, key=lambda child: (child.menu_order, child.id))


def variation_prices(site: Site, product: Product, now: datetime) -> list[tuple[float, float, bool]]:
    """(active price, regular price, on sale) of each priced variation."""
    out = []
    for child in children(site, product):
        if child.price == "":
            continue
        out.append((php.php_float(child.price), php.php_float(child.regular_price or child.price), is_on_sale(child, now)))
    return out


def sync_price(site: Site, product: Product, now: datetime) -> None:
    if product.type in ("simple", "external", "variation"):
        product.price = product.sale_price if is_on_sale(product, now) else product.regular_price
    elif product.type == "variable":
        prices = [child.price for child in children(site, product) if child.price != ""]
        product.price = min(prices, key=php.php_float) if prices else ""
    else:
        product.price = ""


def sync_stock_status(site: Site, product: Product) -> None:
    if product.type == "variable" and not product.manage_stock:
        statuses = [child.stock_status for child in children(site, product)]
        if "instock" in statuses:
            product.stock_status = "instock"
        elif "onbackorder" in statuses:
            product.stock_status = "onbackorder"
        else:
            product.stock_status = "outofstock"
        return
    if product.manage_stock and product.type not in ("grouped", "external"):
        quantity = product.stock_quantity if product.stock_quantity is not None else 0
        if php.php_int(quantity) > 0:
            product.stock_status = "instock"
        elif product.backorders != "no":
            product.stock_status = "onbackorder"
        else:
            product.stock_status = "outofstock"


def sku_owner(site: Site, sku: str, exclude: int) -> int | None:
    for record in site.posts.values():
        if isinstance(record, Product) and record.id != exclude and record.sku == sku and record.status != "trash":
            return record.id
    return None


def unique_product_slug(site: Site, product: Product) -> None:
    if not product.slug:
        return
    base = product.slug
    taken = {record.slug for record in site.posts.values()
             if isinstance(record, Product) and record.id != product.id and record.post_type == product.post_type}
    suffix = 2
    while product.slug in taken:
        product.slug = f"{base}-{suffix}"
        suffix += 1


def check_sku(site: Site, product: Product) -> None:
    if product.sku == "":
        return
    owner = sku_owner(site, product.sku, product.id)
    if owner is not None:
        unique = product.sku
        suffix = 1
        while sku_owner(site, f"{product.sku}-{suffix}", product.id) is not None:
            suffix += 1
        unique = f"{product.sku}-{suffix}"
        error = WcException("product_invalid_sku", "Invalid or duplicated SKU.", 400)
        error.extra.update({"resource_id": owner, "unique_sku": unique})
        raise error


def save(site: Site, product: Product, creating: bool) -> Product:
    """Store a product or variation the way WC_Product::save does, then keep its parent in sync."""
    now = site.now()
    check_sku(site, product)
    if creating:
        product.id = site.next_id("post")
    product.date_modified = now
    if product.type != "variation":
        if not product.category_ids:
            product.category_ids = [int(site.option("default_product_cat", 15))]
        if product.status in ("draft", "pending", "auto-draft") and not product.slug_given:
            product.slug = product.slug if not creating else ""
        elif not product.slug:
            product.slug = php.sanitize_title(product.name, str(product.id))
        unique_product_slug(site, product)
    if product.type in ("grouped", "external"):
        product.manage_stock = False
        product.stock_quantity = None
    if not product.manage_stock:
        product.stock_quantity = None
        product.low_stock_amount = ""
    sync_price(site, product, now)
    sync_stock_status(site, product)
    site.posts[product.id] = product
    touch(site)
    _attach_images(site, product, now)
    if product.type == "variation" and product.parent_id:
        parent = site.product(product.parent_id)
        if parent is not None and parent.type == "variable":
            sync_price(site, parent, now)
            sync_stock_status(site, parent)
    return product


def _attach_images(site: Site, product: Product, now: datetime) -> None:
    for attachment_id in [product.image_id, *product.gallery_image_ids]:
        post = site.post(attachment_id, "attachment")
        if post is not None and post.parent == 0 and product.type != "variation":
            post.parent = product.id
            post.modified = now


def related_ids(site: Site, product: Product, limit: int = 5) -> list[int]:
    """`wc_get_related_products`: products sharing a category or tag; upstream shuffles, we shuffle with a fixed seed."""
    if product.type == "variation":
        return []
    # Picks depend only on the catalogue, so they are kept until the next product or term change.
    memo = _cached(site, "related_picks", lambda _site: {})
    key = (product.id, limit)
    if key not in memo:
        memo[key] = _pick_related(site, product, limit)
    return list(memo[key])


def _pick_related(site: Site, product: Product, limit: int) -> list[int]:
    index = _cached(site, "related", _related_index)
    pools = [index.get(("cat", term_id), []) for term_id in product.category_ids]
    pools += [index.get(("tag", term_id), []) for term_id in product.tag_ids]
    pools = [pool for pool in pools if pool]
    if not pools:
        return []
    pool = pools[0] if len(pools) == 1 else sorted(set().union(*pools))
    picks = random.Random(product.id).sample(pool, min(len(pool), limit + 1))
    return [pid for pid in picks if pid != product.id][:limit]


def delete_product(site: Site, product: Product, force: bool) -> None:
    now = site.now()
    touch(site)
    if force:
        if product.type == "variable":
            for child in [r for r in site.posts.values() if isinstance(r, Product) and r.parent_id == product.id
                          and r.type == "variation"]:
                site.posts.pop(child.id, None)
        site.posts.pop(product.id, None)
        if product.type == "variation" and product.parent_id:
            parent = site.product(product.parent_id)
            if parent is not None:
                sync_price(site, parent, now)
                sync_stock_status(site, parent)
        return
    update_meta(site, product.meta, "_wp_trash_meta_status", product.status)
    update_meta(site, product.meta, "_wp_trash_meta_time", str(int(now.timestamp())))
    product.status = "trash"
    if product.slug and not product.slug.endswith("__trashed"):
        product.slug += "__trashed"
    product.date_modified = now


# --- price html -----------------------------------------------------------------------------


def wc_price(amount: float) -> str:
    return ('<span class="woocommerce-Price-amount amount"><bdi><span class="woocommerce-Price-currencySymbol">'
            f'&#36;</span>{php.number_format(amount, 2)}</bdi></span>')


def _hidden_price(amount: float) -> str:
    return ('<span class="woocommerce-Price-amount amount" aria-hidden="true"><bdi>'
            '<span class="woocommerce-Price-currencySymbol">'
            f'&#36;</span>{php.number_format(amount, 2)}</bdi></span>')


def sale_price_html(regular: float, sale: float) -> str:
    return (f'<del aria-hidden="true">{wc_price(regular)}</del> <span class="screen-reader-text">Original price was: '
            f'&#036;{php.number_format(regular, 2)}.</span><ins aria-hidden="true">{wc_price(sale)}</ins>'
            f'<span class="screen-reader-text">Current price is: &#036;{php.number_format(sale, 2)}.</span>')


def range_html(low: float, high: float) -> str:
    return (f'{_hidden_price(low)} <span aria-hidden="true">&ndash;</span> {_hidden_price(high)}'
            f'<span class="screen-reader-text">Price range: &#36;{php.number_format(low, 2)} through '
            f'&#36;{php.number_format(high, 2)}</span>')


def price_html(site: Site, product: Product, now: datetime) -> str:
    if product.type == "variable":
        prices = variation_prices(site, product, now)
        if not prices:
            return ""
        low, high = min(p[0] for p in prices), max(p[0] for p in prices)
        if low != high:
            return range_html(low, high)
        regular_low, regular_high = min(p[1] for p in prices), max(p[1] for p in prices)
        if any(p[2] for p in prices) and regular_low == regular_high:
            return sale_price_html(regular_low, low)
        return wc_price(low)
    if product.type == "grouped":
        child_prices = [php.php_float(child.price) for child in children(site, product) if child.price != ""]
        if not child_prices:
            return ""
        low, high = min(child_prices), max(child_prices)
        return range_html(low, high) if low != high else wc_price(low)
    if product.price == "":
        return ""
    if is_on_sale(product, now):
        return sale_price_html(php.php_float(product.regular_price), php.php_float(product.price))
    return wc_price(php.php_float(product.price))
