"""The product collection query: WP_Query plus WooCommerce's tax, meta and lookup-table filters.

Ordering by date (the default) or modified date adds the ID as a tie-breaker in the same direction,
as the CRUD controller does for stable paging; `price` sorts by the lowest price ascending and the
highest descending, `popularity` by total sales, `rating` by average rating. `search` matches every
word in the title, excerpt or content (case-insensitively), not the SKU; `sku` is an exact match and,
like upstream, also returns variations. Category and tag filters include child categories.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from . import catalog, php
from .clock import parse_date
from .model import Product
from .params import Params
from .site import Site


def _search_words(text: str) -> list[str]:
    words, current, quoted = [], "", False
    for char in text:
        if char == '"':
            quoted = not quoted
            continue
        if char.isspace() and not quoted:
            if current:
                words.append(current)
            current = ""
        else:
            current += char
    if current:
        words.append(current)
    return [w for w in words if w]


def matches_search(product: Product, text: str) -> bool:
    haystack = f"{product.name}\n{product.short_description}\n{product.description}".lower()
    for word in _search_words(text):
        if word.startswith("-") and len(word) > 1:
            if word[1:].lower() in haystack:
                return False
        elif word.lower() not in haystack:
            return False
    return True


def descendants(site: Site, taxonomy: str, roots: list[int]) -> set[int]:
    found = set(roots)
    frontier = list(roots)
    while frontier:
        parent = frontier.pop()
        for term in site.terms_of(taxonomy):
            if term.parent == parent and term.id not in found:
                found.add(term.id)
                frontier.append(term.id)
    return found


def _date_filter(value: Any) -> datetime | None:
    return parse_date(value) if value not in (None, "") else None


def _price_range(site: Site, product: Product) -> tuple[float, float] | None:
    if product.type == "variable":
        prices = [php.php_float(c.price) for c in catalog.children(site, product) if c.price != ""]
    else:
        prices = [php.php_float(product.price)] if product.price != "" else []
    return (min(prices), max(prices)) if prices else None


def query_products(site: Site, p: Params) -> list[Product]:
    now = site.now()
    sku = p.get("sku", "")
    search_sku = p.get("search_sku", "")
    name_or_sku = p.get("search_name_or_sku", "")
    with_variations = bool(sku or search_sku or name_or_sku or p.get("global_unique_id"))
    status = p.get("status", "any")
    include_status = p.get("include_status") if isinstance(p.get("include_status"), list) and p.get("include_status") else None
    exclude_status = p.get("exclude_status") if isinstance(p.get("exclude_status"), list) else []
    filters: list[Callable[[Product], bool]] = []

    def status_ok(product: Product) -> bool:
        if include_status:
            return product.status in include_status
        if status == "any":
            return product.status not in ("trash", "auto-draft")
        return product.status == status

    filters.append(status_ok)
    if exclude_status:
        filters.append(lambda product: product.status not in exclude_status)
    if p.get("include"):
        wanted = set(p.get("include"))
        filters.append(lambda product: product.id in wanted)
    if p.get("exclude"):
        unwanted = set(p.get("exclude"))
        filters.append(lambda product: product.id not in unwanted)
    if p.get("parent"):
        parents = set(p.get("parent"))
        filters.append(lambda product: product.parent_id in parents)
    if p.get("parent_exclude"):
        not_parents = set(p.get("parent_exclude"))
        filters.append(lambda product: product.parent_id not in not_parents)
    if p.get("slug"):
        slug = php.php_string(p.get("slug"))
        filters.append(lambda product: product.slug == slug)
    if p.get("search") and not name_or_sku:
        text = php.php_string(p.get("search"))
        filters.append(lambda product: matches_search(product, text))
    types = p.get("include_types") if isinstance(p.get("include_types"), list) and p.get("include_types") else (
        [p.get("type")] if p.get("type") else [])
    if types:
        filters.append(lambda product: product.type in types)
    if isinstance(p.get("exclude_types"), list) and p.get("exclude_types"):
        excluded_types = p.get("exclude_types")
        filters.append(lambda product: product.type not in excluded_types)
    for key, attr, taxonomy in (("category", "category_ids", "product_cat"), ("tag", "tag_ids", "product_tag")):
        ids = p.get(key)
        if ids:
            wanted_terms = descendants(site, taxonomy, list(ids))

            def has_terms(product: Product, attr: str = attr, wanted_terms: set = wanted_terms) -> bool:
                return bool(wanted_terms & set(getattr(product, attr)))
            filters.append(has_terms)
    if p.get("shipping_class"):
        classes = set(p.get("shipping_class"))
        filters.append(lambda product: product.shipping_class_id in classes)
    if p.get("attribute") and p.get("attribute_term"):
        attribute = site.attribute_by_taxonomy(php.php_string(p.get("attribute")))
        if attribute is not None:
            term_ids = set(p.get("attribute_term"))
            filters.append(lambda product: any(a.id == attribute.id and term_ids & {php.php_int(o) for o in a.options}
                                               for a in product.attributes))
    if isinstance(p.get("featured"), bool):
        featured = p.get("featured")
        filters.append(lambda product: product.featured == featured)
    if isinstance(p.get("on_sale"), bool):
        on_sale = p.get("on_sale")
        filters.append(lambda product: catalog.is_on_sale(product, now, site) == on_sale)
    if sku and not search_sku and not name_or_sku:
        skus = [part for part in php.php_string(sku).split(",")]
        if len(skus) > 1:
            skus.append(php.php_string(sku))
        filters.append(lambda product: product.sku in skus)
    if search_sku and not name_or_sku:
        needle = php.php_string(search_sku).lower()
        filters.append(lambda product: needle in product.sku.lower())
    if name_or_sku:
        tokens = [t for t in php.php_string(name_or_sku).split(" ") if t.strip()]
        filters.append(lambda product: all(t.lower() in product.name.lower() or t.lower() in product.sku.lower()
                                           for t in tokens))
    if p.get("global_unique_id"):
        gtins = [part.strip() for part in php.php_string(p.get("global_unique_id")).split(",")]
        filters.append(lambda product: product.global_unique_id in gtins)
    if p.get("tax_class"):
        tax_class = "" if p.get("tax_class") == "standard" else p.get("tax_class")
        filters.append(lambda product: product.tax_class == tax_class)
    if not php.php_empty(p.get("min_price")) or not php.php_empty(p.get("max_price")):
        low = php.php_float(p.get("min_price")) if not php.php_empty(p.get("min_price")) else None
        high = php.php_float(p.get("max_price")) if not php.php_empty(p.get("max_price")) else None

        def in_price(product: Product) -> bool:
            price_range = _price_range(site, product)
            if price_range is None:
                return False
            return (low is None or price_range[1] >= low) and (high is None or price_range[0] <= high)

        filters.append(in_price)
    if p.get("stock_status"):
        stock_status = p.get("stock_status")
        filters.append(lambda product: product.stock_status == stock_status)
    for key, compare in (("stock_quantity", lambda q, v: q == v), ("min_stock_quantity", lambda q, v: q >= v),
                         ("max_stock_quantity", lambda q, v: q <= v)):
        if p.isset(key):
            value = php.php_int(p.get(key))

            def stock_matches(product: Product, compare: Callable[[int, int], bool] = compare,
                              value: int = value) -> bool:
                return (product.manage_stock and product.stock_quantity is not None
                        and compare(php.php_int(product.stock_quantity), value))
            filters.append(stock_matches)
    if isinstance(p.get("virtual"), bool):
        virtual = p.get("virtual")
        filters.append(lambda product: product.virtual == virtual)
    if isinstance(p.get("downloadable"), bool):
        downloadable = p.get("downloadable")
        filters.append(lambda product: product.downloadable == downloadable)
    for key, attr, after in (("after", "date_created", True), ("before", "date_created", False),
                             ("modified_after", "date_modified", True), ("modified_before", "date_modified", False)):
        moment = _date_filter(p.get(key))
        if moment is not None:
            def dated(product: Product, attr: str = attr, moment: datetime = moment, after: bool = after) -> bool:
                return getattr(product, attr) > moment if after else getattr(product, attr) < moment
            filters.append(dated)
    candidates = [record for record in site.posts.values() if isinstance(record, Product)
                  and (record.type != "variation" or with_variations)]
    found = [product for product in candidates if all(check(product) for check in filters)]
    return sort_products(site, found, p)


def sort_products(site: Site, products: list[Product], p: Params) -> list[Product]:
    orderby = p.get("orderby", "date")
    descending = p.get("order", "desc") == "desc"
    if orderby == "include" and p.get("include"):
        position = {pid: index for index, pid in enumerate(p.get("include"))}
        return sorted(products, key=lambda product: position.get(product.id, 0))
    if orderby == "price":
        def price_key(product: Product) -> tuple[float, int]:
            price_range = _price_range(site, product) or (0.0, 0.0)
            return (price_range[1] if descending else price_range[0], product.id)
        return sorted(products, key=price_key, reverse=descending)
    keys: dict[str, Callable[[Product], Any]] = {
        "date": lambda product: (product.date_created, product.id),
        "modified": lambda product: (product.date_modified, product.id),
        "id": lambda product: product.id,
        "title": lambda product: (product.name.lower(), product.id),
        "slug": lambda product: (product.slug, product.id),
        "menu_order": lambda product: (product.menu_order, product.name.lower()),
        "popularity": lambda product: (product.total_sales, product.id),
        "rating": lambda product: (php.php_float(product.average_rating), product.id),
    }
    if orderby == "menu_order":
        return sorted(products, key=lambda product: (product.menu_order if not descending else -product.menu_order,
                                                     product.name.lower()))
    return sorted(products, key=keys.get(orderby, keys["date"]), reverse=descending)
