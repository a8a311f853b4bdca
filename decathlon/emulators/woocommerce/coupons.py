"""`/wc/v3/coupons`: coupon posts (their IDs come from the post sequence too).

Codes are stored lower-case, as WooCommerce's `woocommerce_coupon_code` filter leaves them, and
must be unique ("The coupon code already exists"). Amounts read back with two decimals.
"""
from __future__ import annotations

import copy
from typing import Any

from . import catalog, php
from .clock import parse_date, wp_date
from .errors import RestError, invalid_id
from .model import Coupon
from .params import Schema
from .rest import CREATABLE, DELETABLE, EDITABLE, READABLE, Reply, Request, Router, paginate, self_links
from .site import Site
from .wcbase import DATE_TYPE, META_DATA, batch, collection_params, context_param, require

_IDS = {"type": "array", "items": {"type": "integer"}}
COUPON_ARGS: dict[str, Schema] = {
    "code": {"type": "string"}, "amount": {"type": "string"},
    "status": {"type": "string", "enum": ["draft", "pending", "private", "publish", "future"]},
    "discount_type": {"type": "string", "enum": ["percent", "fixed_cart", "fixed_product"]},
    "description": {"type": "string"},
    "date_expires": {"type": DATE_TYPE}, "date_expires_gmt": {"type": DATE_TYPE},
    "individual_use": {"type": "boolean"},
    "product_ids": _IDS, "excluded_product_ids": _IDS,
    "usage_limit": {"type": ["integer", "null"]}, "usage_limit_per_user": {"type": ["integer", "null"]},
    "limit_usage_to_x_items": {"type": ["integer", "null"]},
    "free_shipping": {"type": "boolean"},
    "product_categories": _IDS, "excluded_product_categories": _IDS,
    "exclude_sale_items": {"type": "boolean"},
    "minimum_amount": {"type": "string"}, "maximum_amount": {"type": "string"},
    "email_restrictions": {"type": "array", "items": {"type": "string"}},
    "meta_data": META_DATA,
}
CREATE_ARGS = {**COUPON_ARGS, "code": {"type": "string", "required": True},
               "discount_type": {"type": "string", "default": "fixed_cart", "enum": ["percent", "fixed_cart", "fixed_product"]},
               "individual_use": {"type": "boolean", "default": False},
               "free_shipping": {"type": "boolean", "default": False},
               "exclude_sale_items": {"type": "boolean", "default": False}}
LIST_ARGS = collection_params(["date", "modified", "id", "include", "title", "slug"],
                              extra={"code": {"type": "string"},
                                     "status": {"type": "string", "default": "any",
                                                "enum": ["any", "future", "trash", "draft", "pending", "private", "publish"]}})


def coupon_json(request: Request, coupon: Coupon) -> dict[str, Any]:
    return {
        "id": coupon.id, "code": coupon.code, "amount": php.wc_format_decimal(coupon.amount, 2),
        "status": coupon.status,
        "date_created": wp_date(coupon.date_created), "date_created_gmt": wp_date(coupon.date_created),
        "date_modified": wp_date(coupon.date_modified), "date_modified_gmt": wp_date(coupon.date_modified),
        "discount_type": coupon.discount_type, "description": coupon.description,
        "date_expires": wp_date(coupon.date_expires), "date_expires_gmt": wp_date(coupon.date_expires),
        "usage_count": coupon.usage_count, "individual_use": coupon.individual_use,
        "product_ids": coupon.product_ids, "excluded_product_ids": coupon.excluded_product_ids,
        "usage_limit": coupon.usage_limit, "usage_limit_per_user": coupon.usage_limit_per_user,
        "limit_usage_to_x_items": coupon.limit_usage_to_x_items, "free_shipping": coupon.free_shipping,
        "product_categories": coupon.product_categories, "excluded_product_categories": coupon.excluded_product_categories,
        "exclude_sale_items": coupon.exclude_sale_items,
        "minimum_amount": php.wc_format_decimal(coupon.minimum_amount or 0, 2),
        "maximum_amount": php.wc_format_decimal(coupon.maximum_amount or 0, 2),
        "email_restrictions": coupon.email_restrictions, "used_by": coupon.used_by,
        "meta_data": catalog.visible_meta(coupon.meta),
        "_links": self_links(request, f"/wc/v3/coupons/{coupon.id}", "/wc/v3/coupons"),
    }


def format_code(value: Any) -> str:
    return php.sanitize_text_field(value).lower()


def _coupon(site: Site, coupon_id: int) -> Coupon | None:
    record = site.posts.get(coupon_id)
    return record if isinstance(record, Coupon) else None


def _by_code(site: Site, code: str, exclude: int = 0) -> Coupon | None:
    for record in site.posts.values():
        if isinstance(record, Coupon) and record.code == code and record.id != exclude and record.status != "trash":
            return record
    return None


def prepare(request: Request, coupon: Coupon) -> Coupon:
    site, p = request.site, request.params
    if p.isset("code"):
        code = format_code(p.get("code"))
        if _by_code(site, code, coupon.id) is not None:
            raise RestError("woocommerce_rest_coupon_code_already_exists", "The coupon code already exists", 400)
        coupon.code = code
    if p.isset("amount"):
        coupon.amount = php.wc_format_decimal(p.get("amount"))
    for key in ("status", "discount_type"):
        if p.isset(key):
            setattr(coupon, key, php.php_string(p.get(key)))
    if p.isset("description"):
        coupon.description = php.kses_post(p.get("description"))
    for key in ("date_expires", "date_expires_gmt"):
        if p.sent(key):
            value = p.values.get(key)
            coupon.date_expires = parse_date(value) if value else None
    for key in ("individual_use", "free_shipping", "exclude_sale_items"):
        if p.isset(key):
            setattr(coupon, key, php.wc_string_to_bool(p.get(key)))
    for key in ("product_ids", "excluded_product_ids", "product_categories", "excluded_product_categories"):
        if p.isset(key):
            setattr(coupon, key, php.wp_parse_id_list(p.get(key)))
    for key in ("usage_limit", "usage_limit_per_user", "limit_usage_to_x_items"):
        if p.sent(key):
            value = p.values.get(key)
            setattr(coupon, key, php.absint(value) or None if value is not None else None)
    for key in ("minimum_amount", "maximum_amount"):
        if p.isset(key):
            setattr(coupon, key, php.wc_format_decimal(p.get(key)))
    if p.isset("email_restrictions"):
        coupon.email_restrictions = [php.sanitize_text_field(e).lower() for e in php.wp_parse_list(p.get("email_restrictions"))]
    if isinstance(p.get("meta_data"), list):
        for meta in p.get("meta_data"):
            if isinstance(meta, dict):
                catalog.update_meta(site, coupon.meta, php.php_string(meta.get("key")), meta.get("value"), meta.get("id"))
    coupon.date_modified = site.now()
    return coupon


def create_item(request: Request) -> Reply:
    site = request.site
    if not php.php_empty(request.params.get("id")):
        raise RestError("woocommerce_rest_shop_coupon_exists", "Cannot create existing shop_coupon.", 400)
    if php.php_empty(request.params.get("code")):
        raise RestError("woocommerce_rest_empty_coupon_code", "The coupon code cannot be empty.", 400)
    now = site.now()
    coupon = prepare(request, Coupon(0, "", now, now))
    coupon.id = site.next_id("post")
    site.posts[coupon.id] = coupon
    return Reply(coupon_json(request, coupon), 201, [("Location", request.rest_url(f"/wc/v3/coupons/{coupon.id}"))])


def get_item(request: Request) -> Reply:
    coupon = _coupon(request.site, request.id_param())
    if coupon is None:
        raise invalid_id("shop_coupon")
    return Reply(coupon_json(request, coupon))


def update_item(request: Request) -> Reply:
    existing = _coupon(request.site, request.id_param())
    if existing is None:
        raise invalid_id("shop_coupon", 400)
    coupon = prepare(request, copy.deepcopy(existing))
    request.site.posts[coupon.id] = coupon
    return Reply(coupon_json(request, coupon))


def delete_item(request: Request) -> Reply:
    site = request.site
    coupon = _coupon(site, request.id_param())
    if coupon is None:
        raise invalid_id("shop_coupon")
    data = coupon_json(request, coupon)
    if php.php_bool(request.params.get("force")):
        site.posts.pop(coupon.id, None)
        return Reply(data)
    if coupon.status == "trash":
        raise RestError("woocommerce_rest_already_trashed", "The shop_coupon has already been deleted.", 410)
    coupon.status = "trash"
    return Reply(data)


def list_items(request: Request) -> Reply:
    site, p = request.site, request.params
    coupons = [c for c in site.posts.values() if isinstance(c, Coupon)]
    status = p.get("status", "any")
    coupons = [c for c in coupons if (c.status != "trash" if status == "any" else c.status == status)]
    if p.get("code"):
        code = format_code(p.get("code"))
        coupons = [c for c in coupons if c.code == code]
    if p.get("search"):
        needle = php.php_string(p.get("search")).lower()
        coupons = [c for c in coupons if needle in c.code or needle in c.description.lower()]
    if p.get("include"):
        coupons = [c for c in coupons if c.id in p.get("include")]
    if p.get("exclude"):
        coupons = [c for c in coupons if c.id not in p.get("exclude")]
    keys = {"date": lambda c: (c.date_created, c.id), "modified": lambda c: (c.date_modified, c.id),
            "id": lambda c: c.id, "title": lambda c: (c.code, c.id), "slug": lambda c: (c.code, c.id),
            "include": lambda c: c.id}
    coupons.sort(key=keys.get(p.get("orderby", "date"), keys["date"]), reverse=p.get("order", "desc") == "desc")
    page, per_page = php.php_int(p.get("page", 1)), php.php_int(p.get("per_page", 10))
    chunk, headers = paginate(coupons, request, page, per_page, "/wc/v3/coupons")
    return Reply([coupon_json(request, c) for c in chunk], headers=headers)


def batch_items(request: Request) -> Reply:
    return batch(request, create_item, update_item, delete_item, CREATE_ARGS, COUPON_ARGS)


def register(router: Router) -> None:
    base = "/wc/v3/coupons"
    router.add(base, READABLE, list_items, LIST_ARGS, require("list"))
    router.add(base, CREATABLE, create_item, CREATE_ARGS, require("create"))
    router.add(base + "/batch", EDITABLE, batch_items, COUPON_ARGS, require("batch"))
    item = base + r"/(?P<id>[\d]+)"
    router.add(item, READABLE, get_item, context_param(), require("read"))
    router.add(item, EDITABLE, update_item, COUPON_ARGS, require("edit"))
    router.add(item, DELETABLE, delete_item, {"force": {"type": "boolean", "default": False}}, require("delete"))
