"""`/wc/v3/products`: list, read, create, update, delete (trash or force) and batch.

Responses follow the v3 controller of WooCommerce 10.2 field for field, in its order, with the
view/edit split recorded runs show: a read (view) shows descriptions through `wpautop` and the
rating as "0.00"; a create or update answers in edit context (raw descriptions, rating "0",
`permalink_template` and `generated_slug` added). Writes go through `prepare`, which follows
`prepare_object_for_database` step by step, on a copy: a failing step (an invalid image, a
duplicated SKU) leaves the stored product untouched.
"""
from __future__ import annotations

import copy
from typing import Any

from . import catalog, media, php
from .clock import parse_date, parse_rest_date, wp_date
from .errors import RestError, WcException, invalid_id
from .model import Product, ProductAttribute
from .params import Schema
from .rest import CREATABLE, DELETABLE, EDITABLE, READABLE, Reply, Request, Router, paginate, self_links
from .site import Site
from .wcbase import DATE_TYPE, META_DATA, batch, collection_params, context_param, item_args, require

PRODUCT_TYPES = ["simple", "grouped", "external", "variable"]
POST_STATUSES = ["draft", "pending", "private", "publish", "future", "auto-draft", "trash"]
KNOWN_STATUSES = {"publish", "future", "draft", "pending", "private", "trash", "auto-draft", "inherit"}
_TERM_REF = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"},
                                              "slug": {"type": "string"}}}
_IMAGE = {"type": "object", "properties": {"id": {"type": "integer"}, "date_created": {"type": DATE_TYPE},
                                           "date_created_gmt": {"type": DATE_TYPE}, "src": {"type": "string"},
                                           "name": {"type": "string"}, "alt": {"type": "string"}}}
PRODUCT_SCHEMA: dict[str, Schema] = {
    "id": {"type": "integer", "readonly": True},
    "name": {"type": "string"}, "slug": {"type": "string"},
    "permalink": {"type": "string", "readonly": True},
    "date_created": {"type": DATE_TYPE}, "date_created_gmt": {"type": DATE_TYPE},
    "type": {"type": "string", "default": "simple", "enum": PRODUCT_TYPES},
    "status": {"type": "string", "default": "publish", "enum": POST_STATUSES},
    "featured": {"type": "boolean", "default": False},
    "catalog_visibility": {"type": "string", "default": "visible", "enum": ["visible", "catalog", "search", "hidden"]},
    "description": {"type": "string"}, "short_description": {"type": "string"},
    "sku": {"type": "string"}, "global_unique_id": {"type": "string"},
    "price": {"type": "string", "readonly": True},
    "regular_price": {"type": "string"}, "sale_price": {"type": "string"},
    "date_on_sale_from": {"type": DATE_TYPE}, "date_on_sale_from_gmt": {"type": DATE_TYPE},
    "date_on_sale_to": {"type": DATE_TYPE}, "date_on_sale_to_gmt": {"type": DATE_TYPE},
    "virtual": {"type": "boolean", "default": False}, "downloadable": {"type": "boolean", "default": False},
    "downloads": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "string"}, "name": {"type": "string"}, "file": {"type": "string"}}}},
    "download_limit": {"type": "integer", "default": -1}, "download_expiry": {"type": "integer", "default": -1},
    "external_url": {"type": "string"}, "button_text": {"type": "string"},
    "tax_status": {"type": "string", "default": "taxable", "enum": ["taxable", "shipping", "none"]},
    "tax_class": {"type": "string"},
    "manage_stock": {"type": "boolean", "default": False},
    "stock_quantity": {"type": "integer"},
    "stock_status": {"type": "string", "default": "instock", "enum": ["instock", "outofstock", "onbackorder"]},
    "backorders": {"type": "string", "default": "no", "enum": ["no", "notify", "yes"]},
    "low_stock_amount": {"type": ["integer", "null"]},
    "sold_individually": {"type": "boolean", "default": False},
    "weight": {"type": "string"},
    "dimensions": {"type": "object", "properties": {"length": {"type": "string"}, "width": {"type": "string"},
                                                    "height": {"type": "string"}}},
    "shipping_class": {"type": "string"},
    "reviews_allowed": {"type": "boolean", "default": True},
    "upsell_ids": {"type": "array", "items": {"type": "integer"}},
    "cross_sell_ids": {"type": "array", "items": {"type": "integer"}},
    "parent_id": {"type": "integer"},
    "purchase_note": {"type": "string"},
    "categories": {"type": "array", "items": _TERM_REF},
    "tags": {"type": "array", "items": _TERM_REF},
    "brands": {"type": "array", "items": {"type": "integer"}},
    "images": {"type": "array", "items": _IMAGE},
    "attributes": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "integer"}, "name": {"type": "string"}, "position": {"type": "integer"},
        "visible": {"type": "boolean"}, "variation": {"type": "boolean"},
        "options": {"type": "array", "items": {"type": "string"}}}}},
    "default_attributes": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "integer"}, "name": {"type": "string"}, "option": {"type": "string"}}}},
    "grouped_products": {"type": "array", "items": {"type": "integer"}},
    "menu_order": {"type": "integer"},
    "meta_data": META_DATA,
    "post_password": {"type": "string"},
}
CREATE_ARGS = item_args(PRODUCT_SCHEMA, creating=True)
UPDATE_ARGS = item_args(PRODUCT_SCHEMA, creating=False)
LIST_ARGS = collection_params(
    ["date", "id", "include", "title", "slug", "modified", "menu_order", "price", "popularity", "rating"],
    extra={
        "parent": {"type": "array", "items": {"type": "integer"}, "default": [], "sanitize": "wp_parse_id_list",
                   "validate": False},
        "parent_exclude": {"type": "array", "items": {"type": "integer"}, "default": [],
                           "sanitize": "wp_parse_id_list", "validate": False},
        "slug": {"type": "string"},
        "status": {"type": "string", "default": "any",
                   "enum": ["any", "future", "trash", "draft", "pending", "private", "publish"], "sanitize": "sanitize_key"},
        "include_status": {"type": "array", "items": {"type": "string"}},
        "exclude_status": {"type": "array", "items": {"type": "string"}},
        "type": {"type": "string", "enum": PRODUCT_TYPES, "sanitize": "sanitize_key"},
        "include_types": {"type": "array", "items": {"type": "string"}},
        "exclude_types": {"type": "array", "items": {"type": "string"}},
        "sku": {"type": "string", "sanitize": "sanitize_text_field"},
        "search_sku": {"type": "string", "sanitize": "sanitize_text_field"},
        "search_name_or_sku": {"type": "string", "sanitize": "sanitize_text_field"},
        "global_unique_id": {"type": "string"},
        "featured": {"type": "boolean"},
        "category": {"type": "string", "sanitize": "wp_parse_id_list"},
        "tag": {"type": "string", "sanitize": "wp_parse_id_list"},
        "shipping_class": {"type": "string", "sanitize": "wp_parse_id_list"},
        "attribute": {"type": "string", "sanitize": "sanitize_text_field"},
        "attribute_term": {"type": "string", "sanitize": "wp_parse_id_list"},
        "tax_class": {"type": "string", "enum": ["standard", "reduced-rate", "zero-rate"]},
        "on_sale": {"type": "boolean"},
        "min_price": {"type": "string", "sanitize": "wc_clean"},
        "max_price": {"type": "string", "sanitize": "wc_clean"},
        "stock_status": {"type": "string", "enum": ["instock", "outofstock", "onbackorder"]},
        "stock_quantity": {"type": "integer"}, "min_stock_quantity": {"type": "integer"},
        "max_stock_quantity": {"type": "integer"},
        "virtual": {"type": "boolean"}, "downloadable": {"type": "boolean"},
    })


# --- reading ---------------------------------------------------------------------------------


def permalink(site: Site, scheme: str, product: Product) -> str:
    if product.type == "variation":
        parent = site.product(product.parent_id)
        base = permalink(site, scheme, parent) if parent else f"{site.home(scheme)}/?post_type=product_variation&p={product.id}"
        query = "&".join(f"attribute_{key}={value}" for key, value in product.variation_attributes.items())
        return base + (("&" if "?" in base else "?") + query if query else "")
    if product.status in ("publish", "private") and product.slug:
        return f"{site.home(scheme)}/product/{product.slug}/"
    return f"{site.home(scheme)}/?post_type=product&p={product.id}"


def term_refs(site: Site, ids: list[int], taxonomy: str) -> list[dict[str, Any]]:
    terms = [term for term in (site.term(term_id, taxonomy) for term_id in ids) if term is not None]
    terms.sort(key=lambda term: (term.name.lower(), term.id))
    return [{"id": term.id, "name": term.name, "slug": term.slug} for term in terms]


def attribute_terms_ordered(site: Site, taxonomy: str) -> list[Any]:
    return sorted(site.terms_of(taxonomy), key=lambda term: (term.menu_order, term.name.lower(), term.id))


def attributes_json(site: Site, product: Product) -> list[dict[str, Any]]:
    out = []
    for attribute in sorted(product.attributes, key=lambda a: a.position):
        if attribute.id:
            taxonomy_row = site.attributes.get(attribute.id)
            if taxonomy_row is None:
                continue
            chosen = set(php.php_int(option) for option in attribute.options)
            names = [term.name for term in attribute_terms_ordered(site, taxonomy_row.taxonomy) if term.id in chosen]
            out.append({"id": attribute.id, "name": taxonomy_row.name, "slug": taxonomy_row.taxonomy,
                        "position": attribute.position, "visible": attribute.visible, "variation": attribute.variation,
                        "options": names})
        else:
            out.append({"id": 0, "name": attribute.name, "slug": attribute.name, "position": attribute.position,
                        "visible": attribute.visible, "variation": attribute.variation,
                        "options": [php.php_string(option) for option in attribute.options]})
    return out


def images_json(site: Site, scheme: str, product: Product) -> list[dict[str, Any]]:
    out = []
    for attachment_id in [product.image_id, *product.gallery_image_ids] if product.image_id else product.gallery_image_ids:
        post = site.post(attachment_id, "attachment")
        if post is not None:
            out.append(media.wc_image(site, scheme, post))
    return out


def shipping_class_slug(site: Site, product: Product) -> str:
    term = site.term(product.shipping_class_id, "product_shipping_class") if product.shipping_class_id else None
    return term.slug if term else ""


def product_json(request: Request, product: Product, context: str | None = None) -> dict[str, Any]:
    site, scheme = request.site, request.scheme
    context = context or request.context
    now = site.now()
    edit = context == "edit"
    on_sale = catalog.is_on_sale(product, now, site)
    kids = catalog.children(site, product)
    data: dict[str, Any] = {
        "id": product.id,
        "name": product.name,
        "slug": product.slug,
        "permalink": permalink(site, scheme, product),
        "date_created": wp_date(product.date_created),
        "date_created_gmt": wp_date(product.date_created),
        "date_modified": wp_date(product.date_modified),
        "date_modified_gmt": wp_date(product.date_modified),
        "type": product.type,
        "status": product.status,
        "featured": product.featured,
        "catalog_visibility": product.catalog_visibility,
        "description": product.description if edit else php.wpautop(product.description),
        "short_description": product.short_description if edit else php.wpautop(php.wptexturize(product.short_description)),
        "sku": product.sku,
        "price": product.price,
        "regular_price": product.regular_price,
        "sale_price": product.sale_price,
        "date_on_sale_from": wp_date(product.date_on_sale_from),
        "date_on_sale_from_gmt": wp_date(product.date_on_sale_from),
        "date_on_sale_to": wp_date(product.date_on_sale_to),
        "date_on_sale_to_gmt": wp_date(product.date_on_sale_to),
        "on_sale": on_sale,
        "purchasable": is_purchasable(site, product),
        "total_sales": product.total_sales,
        "virtual": product.virtual,
        "downloadable": product.downloadable,
        "downloads": downloads_json(product),
        "download_limit": product.download_limit,
        "download_expiry": product.download_expiry,
        "external_url": product.external_url,
        "button_text": product.button_text,
        "tax_status": product.tax_status,
        "tax_class": product.tax_class,
        "manage_stock": product.manage_stock,
        "stock_quantity": product.stock_quantity if product.manage_stock else None,
        "backorders": product.backorders,
        "backorders_allowed": product.backorders in ("yes", "notify"),
        "backordered": is_backordered(product),
        "low_stock_amount": None if product.low_stock_amount == "" else product.low_stock_amount,
        "sold_individually": product.sold_individually,
        "weight": product.weight,
        "dimensions": {"length": product.length, "width": product.width, "height": product.height},
        "shipping_required": not product.virtual,
        "shipping_taxable": not product.virtual and product.tax_status in ("taxable", "shipping"),
        "shipping_class": shipping_class_slug(site, product),
        "shipping_class_id": product.shipping_class_id,
        "reviews_allowed": product.reviews_allowed,
        "average_rating": product.average_rating if edit else php.wc_format_decimal(product.average_rating, 2),
        "rating_count": product.rating_count,
        "upsell_ids": list(product.upsell_ids),
        "cross_sell_ids": list(product.cross_sell_ids),
        "parent_id": product.parent_id,
        "purchase_note": product.purchase_note if edit else php.wpautop(product.purchase_note),
        "categories": term_refs(site, product.category_ids, "product_cat"),
        "brands": term_refs(site, product.brand_ids, "product_brand"),
        "tags": term_refs(site, product.tag_ids, "product_tag"),
        "images": images_json(site, scheme, product),
        "attributes": attributes_json(site, product),
        "default_attributes": list(product.default_attributes),
        "variations": [child.id for child in kids] if product.type == "variable" else [],
        "grouped_products": list(product.children) if product.type == "grouped" else [],
        "menu_order": product.menu_order,
        "price_html": catalog.price_html(site, product, now),
        "related_ids": catalog.related_ids(site, product),
        "meta_data": catalog.visible_meta(product.meta),
        "stock_status": product.stock_status,
        "has_options": product.type == "variable" and bool(kids),
        "post_password": product.post_password,
        "global_unique_id": product.global_unique_id,
    }
    if edit:
        data["permalink_template"] = f"{site.home(scheme)}/product/%pagename%/"
        data["generated_slug"] = product.slug or php.sanitize_title(product.name, str(product.id))
    data["_links"] = self_links(request, f"/wc/v3/products/{product.id}", "/wc/v3/products",
                                extra={"up": [{"href": request.rest_url(f"/wc/v3/products/{product.parent_id}")}]}
                                if product.parent_id else None)
    return data


def downloads_json(product: Product) -> list[dict[str, Any]]:
    return [{"id": item["id"], "name": item["name"], "file": item["file"]} for item in product.downloads] \
        if product.downloadable else []


def is_purchasable(site: Site, product: Product) -> bool:
    if product.type == "variable":
        return any(child.price != "" for child in catalog.children(site, product))
    if product.type == "grouped":
        return False
    return product.price != ""


def is_backordered(product: Product) -> bool:
    if product.stock_status == "onbackorder":
        return True
    return product.manage_stock and product.backorders in ("yes", "notify") and php.php_float(product.stock_quantity) < 0


# --- writing ---------------------------------------------------------------------------------


def new_product(site: Site, product_type: str) -> Product:
    now = site.now()
    return Product(0, product_type, now, now)


def load_for_write(site: Site, product_id: int) -> Product | None:
    product = site.product(product_id)
    return copy.deepcopy(product) if product is not None else None


def prepare(request: Request, creating: bool) -> Product:
    """`prepare_object_for_database` of the v3 products controller."""
    site, p = request.site, request.params
    product_id = php.absint(p.get("id")) if p.isset("id") else 0
    if p.isset("type"):
        wanted = p.get("type") if p.get("type") in PRODUCT_TYPES else "simple"
        existing = load_for_write(site, product_id) if product_id else None
        product = existing or new_product(site, wanted)
        if existing is not None and existing.type != "variation":
            product.type = wanted
    elif product_id:
        product = load_for_write(site, product_id) or new_product(site, "simple")
    else:
        product = new_product(site, "simple")
    if product.type == "variation":
        raise RestError("woocommerce_rest_invalid_product_id",
                        "To manipulate product variations you should use the "
                        "/products/&lt;product_id&gt;/variations/&lt;id&gt; endpoint.",
                        404)
    if p.isset("name"):
        product.name = php.kses_post(p.get("name"))
    if p.isset("description"):
        product.description = php.kses_post(p.get("description"))
    if p.isset("short_description"):
        product.short_description = php.kses_post(p.get("short_description"))
    if p.isset("status"):
        status = p.get("status")
        product.status = status if status in KNOWN_STATUSES else "draft"
    if p.isset("slug"):
        product.slug = php.sanitize_title(p.get("slug"))
        product.slug_given = bool(product.slug)
    if p.isset("menu_order"):
        product.menu_order = php.php_int(p.get("menu_order"))
    if p.isset("reviews_allowed"):
        product.reviews_allowed = php.wc_string_to_bool(p.get("reviews_allowed"))
    if p.isset("post_password"):
        product.post_password = php.php_string(p.get("post_password"))
    if p.isset("virtual"):
        product.virtual = php.wc_string_to_bool(p.get("virtual"))
    if p.isset("tax_status"):
        set_tax_status(product, p.get("tax_status"))
    if p.isset("tax_class"):
        product.tax_class = valid_tax_class(site, p.get("tax_class"))
    if p.isset("catalog_visibility"):
        if p.get("catalog_visibility") not in ("visible", "catalog", "search", "hidden"):
            raise WcException("product_invalid_catalog_visibility", "Invalid catalog visibility option.", 400)
        product.catalog_visibility = p.get("catalog_visibility")
    if p.isset("purchase_note"):
        product.purchase_note = php.kses_post(p.get("purchase_note"))
    if p.isset("featured"):
        product.featured = php.wc_string_to_bool(p.get("featured"))
    save_shipping_data(site, product, p)
    if p.isset("sku"):
        product.sku = php.sanitize_text_field(p.get("sku"))
    if p.isset("global_unique_id"):
        product.global_unique_id = php.sanitize_text_field(p.get("global_unique_id"))
    if p.isset("attributes"):
        product.attributes = prepare_attributes(site, p.get("attributes"))
    if product.type in ("variable", "grouped"):
        product.regular_price = product.sale_price = ""
        product.date_on_sale_from = product.date_on_sale_to = None
    else:
        set_prices(product, p)
    if p.isset("parent_id"):
        product.parent_id = php.absint(p.get("parent_id"))
    if p.isset("sold_individually"):
        product.sold_individually = php.wc_string_to_bool(p.get("sold_individually"))
    set_stock(product, p)
    if p.isset("upsell_ids"):
        product.upsell_ids = [php.php_int(i) for i in _list(p.get("upsell_ids")) if php.php_int(i) > 0]
    if p.isset("cross_sell_ids"):
        product.cross_sell_ids = [php.php_int(i) for i in _list(p.get("cross_sell_ids")) if php.php_int(i) > 0]
    if isinstance(p.get("categories"), list):
        product.category_ids = term_ids(p.get("categories"))
    if isinstance(p.get("tags"), list):
        product.tag_ids = term_ids(resolve_tags(site, p.get("tags")))
    if isinstance(p.get("brands"), list):
        product.brand_ids = [php.absint(item) for item in p.get("brands") if php.absint(item)]
    if p.isset("downloadable"):
        product.downloadable = php.wc_string_to_bool(p.get("downloadable"))
    if product.downloadable:
        if isinstance(p.get("downloads"), list):
            product.downloads = [{"id": php.php_string(d.get("id")) or _download_id(d), "name": php.php_string(d.get("name")),
                                  "file": php.php_string(d.get("file"))} for d in p.get("downloads") if isinstance(d, dict)]
        if p.isset("download_limit"):
            product.download_limit = php.php_int(p.get("download_limit"))
        if p.isset("download_expiry"):
            product.download_expiry = php.php_int(p.get("download_expiry"))
    if product.type == "external":
        if p.isset("external_url"):
            product.external_url = php.php_string(p.get("external_url"))
        if p.isset("button_text"):
            product.button_text = php.php_string(p.get("button_text"))
    if product.type == "variable" and isinstance(p.get("default_attributes"), list):
        product.default_attributes = default_attributes(site, product, p.get("default_attributes"))
    if product.type == "grouped" and p.isset("grouped_products"):
        product.children = [php.absint(i) for i in _list(p.get("grouped_products")) if php.absint(i)]
    if p.isset("images"):
        set_images(request, product, p.get("images"))
    if isinstance(p.get("meta_data"), list):
        apply_meta(site, product, p.get("meta_data"))
    for key, gmt in (("date_created", False), ("date_created_gmt", True)):
        if not php.php_empty(p.get(key)):
            moment = parse_rest_date(p.get(key))
            if moment is not None:
                product.date_created = moment
    return product


def _list(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return list(value.values())
    return php.wp_parse_list(value)


def _download_id(download: dict[str, Any]) -> str:
    import hashlib
    return hashlib.md5(php.php_string(download.get("file")).encode()).hexdigest()


def set_tax_status(product: Product, value: Any) -> None:
    if value and value not in ("taxable", "shipping", "none"):
        raise WcException("product_invalid_tax_status", "Invalid product tax status.", 400)
    product.tax_status = php.php_string(value)


def valid_tax_class(site: Site, value: Any) -> str:
    slug = php.sanitize_title(value)
    if slug == "standard":
        return ""
    return slug if slug in {s for _, s in site.tax_classes} else ""


def save_shipping_data(site: Site, product: Product, p: Any) -> None:
    if product.virtual:
        product.weight = product.length = product.width = product.height = ""
        product.shipping_class_id = 0
        return
    if p.isset("weight"):
        product.weight = _decimal_or_empty(p.get("weight"))
    dimensions = p.get("dimensions")
    if isinstance(dimensions, dict):
        for key in ("height", "width", "length"):
            if dimensions.get(key) is not None:
                setattr(product, key, _decimal_or_empty(dimensions.get(key)))
    if p.isset("shipping_class"):
        slug = php.sanitize_text_field(p.get("shipping_class"))
        found = next((t for t in site.terms_of("product_shipping_class") if t.slug == slug), None)
        product.shipping_class_id = found.id if found else 0


def _decimal_or_empty(value: Any) -> str:
    return "" if value == "" else php.wc_format_decimal(value)


def set_prices(product: Product, p: Any) -> None:
    if p.isset("regular_price"):
        product.regular_price = php.wc_format_decimal(p.get("regular_price"))
    if p.isset("sale_price"):
        product.sale_price = php.wc_format_decimal(p.get("sale_price"))
    if p.isset("date_on_sale_from"):
        product.date_on_sale_from = parse_date(p.get("date_on_sale_from")) if p.get("date_on_sale_from") != "" else None
    if p.isset("date_on_sale_from_gmt"):
        product.date_on_sale_from = parse_date(p.get("date_on_sale_from_gmt")) if p.get("date_on_sale_from_gmt") else None
    if p.isset("date_on_sale_to"):
        product.date_on_sale_to = parse_date(p.get("date_on_sale_to")) if p.get("date_on_sale_to") != "" else None
    if p.isset("date_on_sale_to_gmt"):
        product.date_on_sale_to = parse_date(p.get("date_on_sale_to_gmt")) if p.get("date_on_sale_to_gmt") else None


def set_stock(product: Product, p: Any) -> None:
    stock_status = p.get("stock_status") if p.isset("stock_status") else product.stock_status
    if p.isset("manage_stock"):
        product.manage_stock = php.wc_string_to_bool(p.get("manage_stock"))
    if p.isset("backorders"):
        product.backorders = php.php_string(p.get("backorders"))
    if product.type == "grouped":
        product.manage_stock, product.backorders, product.stock_quantity = False, "no", None
        product.stock_status = stock_status
    elif product.type == "external":
        product.manage_stock, product.backorders, product.stock_quantity = False, "no", None
        product.stock_status = "instock"
    elif product.manage_stock:
        if product.type != "variable":
            product.stock_status = stock_status
        if p.isset("stock_quantity"):
            product.stock_quantity = php.wc_stock_amount(p.get("stock_quantity"))
        elif p.isset("inventory_delta"):
            product.stock_quantity = php.wc_stock_amount(product.stock_quantity) + php.wc_stock_amount(p.get("inventory_delta"))
        if p.sent("low_stock_amount"):
            value = p.values.get("low_stock_amount")
            product.low_stock_amount = "" if value is None else php.wc_stock_amount(value)
    else:
        product.manage_stock = False
        product.stock_quantity = None
        product.stock_status = stock_status
        product.low_stock_amount = ""


def term_ids(items: list[Any]) -> list[int]:
    """`save_taxonomy_terms`: the ids of the given term references (ones without an id count for nothing)."""
    out = []
    for item in items:
        term_id = php.php_int(item.get("id")) if isinstance(item, dict) else php.php_int(item)
        if term_id and term_id not in out:
            out.append(term_id)
    return out


def resolve_tags(site: Site, tags: list[Any]) -> list[Any]:
    from .terms import insert_term
    out: list[Any] = []
    for tag in tags:
        if not isinstance(tag, dict) or tag.get("name") is None:
            out.append(tag)
            continue
        name = php.sanitize_text_field(tag["name"])
        found = next((t for t in site.terms_of("product_tag") if t.name.lower() == name.lower()), None)
        if found is None:
            try:
                found = insert_term(site, "product_tag", name)
            except RestError:
                continue
        out.append({"id": found.id})
    return out


def prepare_attributes(site: Site, items: Any) -> list[ProductAttribute]:
    attributes = []
    for item in _list(items):
        if not isinstance(item, dict):
            continue
        attribute_id, name = 0, ""
        if not php.php_empty(item.get("id")):
            attribute_id = php.absint(item.get("id"))
            row = site.attributes.get(attribute_id)
            name = row.taxonomy if row else ""
            if not name:
                attribute_id = 0
        elif not php.php_empty(item.get("name")):
            name = php.sanitize_text_field(item.get("name"))
        if not attribute_id and not name:
            continue
        position = php.absint(item.get("position")) if item.get("position") is not None else 0
        visible = php.php_bool(item.get("visible"))
        variation = php.php_bool(item.get("variation"))
        options = item.get("options")
        if attribute_id:
            if options is None:
                continue
            values = options if isinstance(options, list) else php.php_string(options).split("|")
            term_list = []
            for value in values:
                text = php.sanitize_text_field(value).strip() if not isinstance(value, (dict, list)) else ""
                if text == "":
                    continue
                term = _attribute_term(site, name, text)
                if term is not None and term.id not in term_list:
                    term_list.append(term.id)
            if term_list:
                attributes.append(ProductAttribute(attribute_id, name, term_list, position, visible, variation))
        elif options is not None:
            values = options if isinstance(options, list) else [v.strip() for v in php.php_string(options).split("|")]
            attributes.append(ProductAttribute(0, name, [php.php_string(v) for v in values], position, visible, variation))
    return attributes


def _attribute_term(site: Site, taxonomy: str, text: str) -> Any:
    """A posted option names an existing term (by name or slug), or becomes a new one, as wc_sanitize_term_text_based."""
    from .terms import insert_term
    for term in site.terms_of(taxonomy):
        if term.name == text or term.slug == php.sanitize_title(text):
            return term
    try:
        return insert_term(site, taxonomy, text)
    except RestError:
        return None


def default_attributes(site: Site, product: Product, items: list[Any]) -> list[dict[str, Any]]:
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        attribute_id = php.absint(item.get("id")) if item.get("id") is not None else 0
        if attribute_id and attribute_id in site.attributes:
            row = site.attributes[attribute_id]
            option = php.sanitize_text_field(item.get("option"))
            out.append({"id": attribute_id, "name": row.name, "option": option})
        elif item.get("name") is not None:
            out.append({"id": 0, "name": php.sanitize_text_field(item.get("name")),
                        "option": php.sanitize_text_field(item.get("option"))})
    return out


def set_images(request: Request, product: Product, images: Any) -> None:
    """`set_product_images`: the first image is the featured one, the rest the gallery."""
    site = request.site
    entries = [image for image in (_list(images) if images is not None else []) if not php.php_empty(image)]
    if not entries:
        product.image_id, product.gallery_image_ids = 0, []
        return
    gallery = []
    for index, image in enumerate(entries):
        image = image if isinstance(image, dict) else {}
        attachment_id = php.absint(image.get("id")) if image.get("id") is not None else 0
        if attachment_id == 0 and image.get("src") is not None:
            attachment_id = media.sideload(request, php.php_string(image.get("src")), product.id,
                                     "woocommerce_product_image_upload_error")
        if not media.is_image(site, attachment_id):
            raise WcException("woocommerce_product_invalid_image_id", f"#{attachment_id} is an invalid image ID.", 400)
        if index == 0:
            product.image_id = attachment_id
        else:
            gallery.append(attachment_id)
        post = site.post(attachment_id, "attachment")
        if post is not None:
            if not php.php_empty(image.get("alt")):
                catalog.update_meta(site, post.meta, "_wp_attachment_image_alt", php.sanitize_text_field(image.get("alt")))
            if not php.php_empty(image.get("name")):
                post.title = php.php_string(image.get("name"))
                post.modified = site.now()
    product.gallery_image_ids = gallery


def apply_meta(site: Site, product: Product, items: list[Any]) -> None:
    for meta in items:
        if not isinstance(meta, dict):
            continue
        catalog.update_meta(site, product.meta, php.php_string(meta.get("key")), meta.get("value"), meta.get("id"),
                            target=product, setters=catalog.META_SETTERS)


# --- handlers --------------------------------------------------------------------------------


def _exists(request: Request) -> bool:
    return request.site.product(request.id_param()) is not None


def get_item(request: Request) -> Reply:
    product = request.site.product(request.id_param())
    if product is None:
        raise invalid_id("product")
    return Reply(product_json(request, product))


def create_item(request: Request) -> Reply:
    if not php.php_empty(request.params.get("id")):
        raise RestError("woocommerce_rest_product_exists", "Cannot create existing product.", 400)
    product = prepare(request, creating=True)
    catalog.save(request.site, product, creating=True)
    return Reply(product_json(request, product, "edit"), 201,
                 [("Location", request.rest_url(f"/wc/v3/products/{product.id}"))])


def update_item(request: Request) -> Reply:
    if request.site.product(request.id_param()) is None:
        raise invalid_id("product", 400)
    product = prepare(request, creating=False)
    catalog.save(request.site, product, creating=False)
    return Reply(product_json(request, product, "edit"))


def delete_item(request: Request) -> Reply:
    site = request.site
    force = php.php_bool(request.params.get("force"))
    product = site.product(request.id_param())
    if product is None:
        raise invalid_id("product")
    if product.type == "variation":
        raise RestError("woocommerce_rest_invalid_product_id",
                        "To manipulate product variations you should use the "
                        "/products/&lt;product_id&gt;/variations/&lt;id&gt; endpoint.",
                        404)
    data = product_json(request, product, "edit")
    if not force and product.status == "trash":
        raise RestError("woocommerce_rest_already_trashed", "The product has already been deleted.", 410)
    catalog.delete_product(site, product, force)
    return Reply(data)


def list_items(request: Request) -> Reply:
    from .queries import query_products
    p = request.params
    found = query_products(request.site, p)
    page, per_page = php.php_int(p.get("page", 1)), php.php_int(p.get("per_page", 10))
    chunk, headers = paginate(found, request, page, per_page, "/wc/v3/products")
    return Reply([product_json(request, product) for product in chunk], headers=headers)


def batch_items(request: Request) -> Reply:
    return batch(request, create_item, update_item, delete_item, CREATE_ARGS, UPDATE_ARGS)


def register(router: Router) -> None:
    base = "/wc/v3/products"
    router.add(base, READABLE, list_items, LIST_ARGS, require("list"))
    router.add(base, CREATABLE, create_item, CREATE_ARGS, require("create"))
    # Registered before /products/<id> in upstream too, so "batch" is never read as an id.
    router.add(base + "/batch", EDITABLE, batch_items, UPDATE_ARGS, require("batch"))
    item = base + r"/(?P<id>[\d]+)"
    router.add(item, READABLE, get_item, context_param(), require("read", _exists))
    router.add(item, EDITABLE, update_item, UPDATE_ARGS, require("edit", _exists))
    router.add(item, DELETABLE, delete_item, {"force": {"type": "boolean", "default": False}}, require("delete", _exists))
