"""`/wc/v3/products/<product_id>/variations`: a variable product's variations.

A variation's attributes are stored as WooCommerce stores them (`pa_color` -> term slug `red`, a
custom attribute's sanitized name -> the value) and shown with the term name ("Red"); its title is
the parent's name with the attribute values ("Rainbow Sneakers - Red"), which is what order line
items show. Saving one re-syncs the parent's price (the lowest variation price) and stock status.
"""
from __future__ import annotations

from typing import Any

from . import catalog, media, php
from .clock import wp_date
from .errors import RestError, invalid_id
from .model import Product
from .params import Schema
from .products import (_list, apply_meta, load_for_write, permalink, save_shipping_data, set_prices,
                       valid_tax_class)
from .queries import sort_products
from .rest import CREATABLE, DELETABLE, EDITABLE, READABLE, Reply, Request, Router, paginate, self_links
from .site import Site
from .wcbase import DATE_TYPE, META_DATA, batch, collection_params, context_param, item_args, require

VARIATION_SCHEMA: dict[str, Schema] = {
    "id": {"type": "integer", "readonly": True},
    "description": {"type": "string"}, "sku": {"type": "string"}, "global_unique_id": {"type": "string"},
    "regular_price": {"type": "string"}, "sale_price": {"type": "string"},
    "date_on_sale_from": {"type": DATE_TYPE}, "date_on_sale_from_gmt": {"type": DATE_TYPE},
    "date_on_sale_to": {"type": DATE_TYPE}, "date_on_sale_to_gmt": {"type": DATE_TYPE},
    "status": {"type": "string", "default": "publish", "enum": ["draft", "pending", "private", "publish"]},
    "virtual": {"type": "boolean", "default": False}, "downloadable": {"type": "boolean", "default": False},
    "downloads": {"type": "array", "items": {"type": "object"}},
    "download_limit": {"type": "integer", "default": -1}, "download_expiry": {"type": "integer", "default": -1},
    "tax_status": {"type": "string", "default": "taxable", "enum": ["taxable", "shipping", "none"]},
    "tax_class": {"type": "string"},
    "manage_stock": {"type": ["boolean", "string"], "default": False},
    "stock_quantity": {"type": "integer"},
    "stock_status": {"type": "string", "default": "instock", "enum": ["instock", "outofstock", "onbackorder"]},
    "backorders": {"type": "string", "default": "no", "enum": ["no", "notify", "yes"]},
    "low_stock_amount": {"type": ["integer", "null"]},
    "weight": {"type": "string"},
    "dimensions": {"type": "object", "properties": {"length": {"type": "string"}, "width": {"type": "string"},
                                                    "height": {"type": "string"}}},
    "shipping_class": {"type": "string"},
    "image": {"type": ["null", "object"], "properties": {"id": {"type": "integer"}, "src": {"type": "string"},
                                                         "name": {"type": "string"}, "alt": {"type": "string"}}},
    "attributes": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "integer"}, "name": {"type": "string"}, "option": {"type": "string"}}}},
    "menu_order": {"type": "integer"},
    "meta_data": META_DATA,
}
CREATE_ARGS = item_args(VARIATION_SCHEMA, creating=True)
UPDATE_ARGS = item_args(VARIATION_SCHEMA, creating=False)
LIST_ARGS = collection_params(["date", "id", "include", "title", "slug", "modified", "menu_order"], extra={
    "parent": {"type": "array", "items": {"type": "integer"}, "default": [], "sanitize": "wp_parse_id_list", "validate": False},
    "slug": {"type": "string"},
    "status": {"type": "string", "default": "any", "enum": ["any", "future", "trash", "draft", "pending", "private", "publish"]},
    "sku": {"type": "string"},
    "tax_class": {"type": "string", "enum": ["standard", "reduced-rate", "zero-rate"]},
    "on_sale": {"type": "boolean"},
    "min_price": {"type": "string"}, "max_price": {"type": "string"},
    "stock_status": {"type": "string", "enum": ["instock", "outofstock", "onbackorder"]},
})


def attribute_label(site: Site, parent: Product | None, key: str) -> str:
    attribute = site.attribute_by_taxonomy(key)
    if attribute is not None:
        return attribute.name
    for candidate in (parent.attributes if parent else []):
        if not candidate.id and php.sanitize_title(candidate.name) == key:
            return candidate.name
    return key


def option_name(site: Site, key: str, value: str) -> str:
    if key.startswith("pa_"):
        term = next((t for t in site.terms_of(key) if t.slug == value), None)
        return term.name if term else value
    return value


def variation_attributes_json(site: Site, variation: Product) -> list[dict[str, Any]]:
    parent = site.product(variation.parent_id)
    out = []
    for key, value in variation.variation_attributes.items():
        if value == "":
            continue
        attribute = site.attribute_by_taxonomy(key) if key.startswith("pa_") else None
        out.append({"id": attribute.id if attribute else 0, "name": attribute_label(site, parent, key),
                    "option": option_name(site, key, value)})
    return out


def variation_title(site: Site, variation: Product) -> str:
    parent = site.product(variation.parent_id)
    base = parent.name if parent else ""
    attributes = variation.variation_attributes
    include = len(attributes) < 3 and not (len(attributes) > 1 and any("-" in key for key in attributes))
    values = [option_name(site, key, value) for key, value in attributes.items() if value != ""]
    return f"{base} - {', '.join(values)}" if include and values else base


def image_json(request: Request, variation: Product) -> dict[str, Any] | None:
    post = request.site.post(variation.image_id, "attachment") if variation.image_id else None
    return media.wc_image(request.site, request.scheme, post, full=False) if post else None


def variation_json(request: Request, variation: Product) -> dict[str, Any]:
    site = request.site
    now = site.now()
    base = f"/wc/v3/products/{variation.parent_id}/variations"
    return {
        "id": variation.id,
        "date_created": wp_date(variation.date_created),
        "date_created_gmt": wp_date(variation.date_created),
        "date_modified": wp_date(variation.date_modified),
        "date_modified_gmt": wp_date(variation.date_modified),
        "description": php.wpautop(variation.description),
        "permalink": permalink(site, request.scheme, variation),
        "sku": variation.sku,
        "price": variation.price,
        "regular_price": variation.regular_price,
        "sale_price": variation.sale_price,
        "date_on_sale_from": wp_date(variation.date_on_sale_from),
        "date_on_sale_from_gmt": wp_date(variation.date_on_sale_from),
        "date_on_sale_to": wp_date(variation.date_on_sale_to),
        "date_on_sale_to_gmt": wp_date(variation.date_on_sale_to),
        "on_sale": catalog.is_on_sale(variation, now),
        "status": variation.status,
        "purchasable": variation.price != "",
        "virtual": variation.virtual,
        "downloadable": variation.downloadable,
        "downloads": variation.downloads if variation.downloadable else [],
        "download_limit": variation.download_limit,
        "download_expiry": variation.download_expiry,
        "tax_status": variation.tax_status,
        "tax_class": variation.tax_class,
        "manage_stock": variation.manage_stock,
        "stock_quantity": variation.stock_quantity if variation.manage_stock else None,
        "stock_status": variation.stock_status,
        "backorders": variation.backorders,
        "backorders_allowed": variation.backorders in ("yes", "notify"),
        "backordered": variation.stock_status == "onbackorder",
        "low_stock_amount": None if variation.low_stock_amount == "" else variation.low_stock_amount,
        "weight": variation.weight,
        "dimensions": {"length": variation.length, "width": variation.width, "height": variation.height},
        "shipping_class": "",
        "shipping_class_id": variation.shipping_class_id,
        "image": image_json(request, variation),
        "attributes": variation_attributes_json(site, variation),
        "menu_order": variation.menu_order,
        "meta_data": catalog.visible_meta(variation.meta),
        "_links": self_links(request, f"{base}/{variation.id}", base,
                             extra={"up": [{"href": request.rest_url(f"/wc/v3/products/{variation.parent_id}")}]}),
    }


def _variation(request: Request) -> Product | None:
    variation = request.site.product(request.id_param())
    if variation is None or variation.type != "variation" or variation.parent_id != php.php_int(request.params.get("product_id")):
        return None
    return variation


def prepare(request: Request, creating: bool) -> Product:
    site, p = request.site, request.params
    if p.isset("id") and not creating:
        variation = load_for_write(site, php.absint(p.get("id"))) or Product(0, "variation", site.now(), site.now())
    else:
        variation = Product(0, "variation", site.now(), site.now())
    variation.parent_id = php.absint(p.get("product_id"))
    if p.isset("status"):
        variation.status = p.get("status") if p.get("status") in ("publish", "private", "draft", "pending", "future",
                                                                   "trash") else "draft"
    if p.isset("sku"):
        variation.sku = php.sanitize_text_field(p.get("sku"))
    if p.isset("image"):
        image = p.get("image")
        if isinstance(image, dict):
            attachment_id = php.absint(image.get("id")) if image.get("id") is not None else 0
            if attachment_id == 0 and image.get("src") is not None:
                attachment_id = media.sideload(request, php.php_string(image.get("src")), variation.id,
                                         "woocommerce_variation_image_upload_error")
            if attachment_id == 0:
                variation.image_id = 0
            elif not media.is_image(site, attachment_id):
                raise RestError("woocommerce_variation_invalid_image_id", f"#{attachment_id} is an invalid image ID.", 400)
            else:
                variation.image_id = attachment_id
        else:
            variation.image_id = 0
    if p.isset("virtual"):
        variation.virtual = php.wc_string_to_bool(p.get("virtual"))
    if p.isset("downloadable"):
        variation.downloadable = php.wc_string_to_bool(p.get("downloadable"))
    if variation.downloadable:
        if p.isset("download_limit"):
            variation.download_limit = php.php_int(p.get("download_limit"))
        if p.isset("download_expiry"):
            variation.download_expiry = php.php_int(p.get("download_expiry"))
    save_shipping_data(site, variation, p)
    if p.isset("manage_stock"):
        variation.manage_stock = p.get("manage_stock") != "parent" and php.wc_string_to_bool(p.get("manage_stock"))
    if p.isset("stock_status"):
        variation.stock_status = php.php_string(p.get("stock_status"))
    if p.isset("backorders"):
        variation.backorders = php.php_string(p.get("backorders"))
    if variation.manage_stock:
        if p.isset("stock_quantity"):
            variation.stock_quantity = php.wc_stock_amount(p.get("stock_quantity"))
        elif p.isset("inventory_delta"):
            variation.stock_quantity = (php.wc_stock_amount(variation.stock_quantity)
                                        + php.wc_stock_amount(p.get("inventory_delta")))
        if p.sent("low_stock_amount"):
            value = p.values.get("low_stock_amount")
            variation.low_stock_amount = "" if value is None else php.wc_stock_amount(value)
    else:
        variation.backorders = "no"
        variation.stock_quantity = None
        variation.low_stock_amount = ""
    set_prices(variation, p)
    if p.isset("tax_class"):
        variation.tax_class = valid_tax_class(site, p.get("tax_class")) if p.get("tax_class") != "parent" else "parent"
    if p.isset("description"):
        variation.description = php.kses_post(p.get("description"))
    if p.isset("attributes"):
        parent = site.product(variation.parent_id)
        if parent is None:
            raise RestError("woocommerce_rest_product_variation_invalid_parent",
                            "Cannot set attributes due to invalid parent product.", 404)
        variation.variation_attributes = _attributes(site, parent, p.get("attributes"))
    if not php.php_empty(p.get("menu_order")):
        variation.menu_order = php.php_int(p.get("menu_order"))
    if isinstance(p.get("meta_data"), list):
        apply_meta(site, variation, p.get("meta_data"))
    return variation


def _attributes(site: Site, parent: Product, items: Any) -> dict[str, str]:
    chosen: dict[str, str] = {}
    by_name = {}
    for attribute in parent.attributes:
        key = site.attributes[attribute.id].taxonomy if attribute.id and attribute.id in site.attributes else attribute.name
        by_name[key] = attribute
    for item in _list(items):
        if not isinstance(item, dict):
            continue
        attribute_name = ""
        if not php.php_empty(item.get("id")):
            row = site.attributes.get(php.absint(item.get("id")))
            attribute_name = row.taxonomy if row else ""
        elif not php.php_empty(item.get("name")):
            attribute_name = php.sanitize_title(item.get("name"))
            if attribute_name not in by_name:
                attribute_name = next((name for name in by_name if php.sanitize_title(name) == attribute_name), attribute_name)
        if not attribute_name or attribute_name not in by_name or not by_name[attribute_name].variation:
            continue
        key = php.sanitize_title(by_name[attribute_name].name if not by_name[attribute_name].id else attribute_name)
        value = php.sanitize_text_field(item.get("option", "")) if item.get("option") is not None else ""
        if by_name[attribute_name].id:
            term = next((t for t in site.terms_of(attribute_name) if t.name == value), None)
            value = term.slug if term else php.sanitize_title(value)
            key = attribute_name
        chosen[key] = value
    return chosen


def _finish(site: Site, variation: Product, creating: bool) -> Product:
    if variation.tax_class == "parent":
        variation.tax_class = ""
    catalog.save(site, variation, creating)
    variation.name = variation_title(site, variation)
    return variation


def list_items(request: Request) -> Reply:
    site, p = request.site, request.params
    parent_id = php.php_int(p.get("product_id"))
    found = [r for r in site.posts.values() if isinstance(r, Product) and r.type == "variation" and r.parent_id == parent_id]
    status = p.get("status", "any")
    found = [v for v in found if (v.status not in ("trash", "auto-draft") if status == "any" else v.status == status)]
    if p.get("include"):
        found = [v for v in found if v.id in p.get("include")]
    if p.get("exclude"):
        found = [v for v in found if v.id not in p.get("exclude")]
    if p.get("sku"):
        found = [v for v in found if v.sku == p.get("sku")]
    if p.get("stock_status"):
        found = [v for v in found if v.stock_status == p.get("stock_status")]
    if isinstance(p.get("on_sale"), bool):
        now = site.now()
        found = [v for v in found if catalog.is_on_sale(v, now) == p.get("on_sale")]
    if not php.php_empty(p.get("min_price")):
        found = [v for v in found if v.price != "" and php.php_float(v.price) >= php.php_float(p.get("min_price"))]
    if not php.php_empty(p.get("max_price")):
        found = [v for v in found if v.price != "" and php.php_float(v.price) <= php.php_float(p.get("max_price"))]
    found = sort_products(site, found, p)
    page, per_page = php.php_int(p.get("page", 1)), php.php_int(p.get("per_page", 10))
    chunk, headers = paginate(found, request, page, per_page, f"/wc/v3/products/{parent_id}/variations")
    return Reply([variation_json(request, v) for v in chunk], headers=headers)


def get_item(request: Request) -> Reply:
    variation = _variation(request)
    if variation is None:
        raise invalid_id("product_variation")
    return Reply(variation_json(request, variation))


def create_item(request: Request) -> Reply:
    if not php.php_empty(request.params.get("id")):
        raise RestError("woocommerce_rest_product_variation_exists", "Cannot create existing product_variation.", 400)
    variation = _finish(request.site, prepare(request, creating=True), creating=True)
    return Reply(variation_json(request, variation), 201,
                 [("Location", request.rest_url(f"/wc/v3/products/{variation.parent_id}/variations/{variation.id}"))])


def update_item(request: Request) -> Reply:
    if _variation(request) is None:
        raise invalid_id("product_variation", 400)
    variation = _finish(request.site, prepare(request, creating=False), creating=False)
    return Reply(variation_json(request, variation))


def delete_item(request: Request) -> Reply:
    variation = _variation(request)
    if variation is None:
        raise invalid_id("product_variation")
    force = php.php_bool(request.params.get("force"))
    data = variation_json(request, variation)
    if not force:
        if variation.status == "trash":
            raise RestError("woocommerce_rest_already_trashed", "The product_variation has already been deleted.", 410)
    catalog.delete_product(request.site, variation, force)
    if not force:
        parent = request.site.product(variation.parent_id)
        if parent is not None:
            catalog.sync_price(request.site, parent, request.site.now())
            catalog.sync_stock_status(request.site, parent)
    return Reply(data)


def batch_items(request: Request) -> Reply:
    return batch(request, create_item, update_item, delete_item, CREATE_ARGS, UPDATE_ARGS,
                 {"product_id": request.params.get("product_id")})


def register(router: Router) -> None:
    base = r"/wc/v3/products/(?P<product_id>[\d]+)/variations"
    router.add(base, READABLE, list_items, LIST_ARGS, require("list"))
    router.add(base, CREATABLE, create_item, CREATE_ARGS, require("create"))
    router.add(base + "/batch", EDITABLE, batch_items, UPDATE_ARGS, require("batch"))
    item = base + r"/(?P<id>[\d]+)"
    router.add(item, READABLE, get_item, context_param(), require("read"))
    router.add(item, EDITABLE, update_item, UPDATE_ARGS, require("edit"))
    router.add(item, DELETABLE, delete_item, {"force": {"type": "boolean", "default": False}}, require("delete"))
