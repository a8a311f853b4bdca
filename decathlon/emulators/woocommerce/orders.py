"""`/wc/v3/orders`, their notes and refunds.

An order is saved the way `WC_REST_Orders_Controller::save_object` saves one: writable fields in
schema order, items added or updated by id (quantity 0 removes one), a line item priced from its
product unless `subtotal`/`total` are posted (a product that does not exist leaves product_id 0),
totals recalculated when items or addresses change, the status set last. A status change then has
WooCommerce's side effects: processing/completed/on-hold reduce managed stock once (the item gets
`_reduced_stock`, the order a note "Stock levels reduced: ...") and count the sale in the product's
`total_sales`; processing/completed stamp `date_paid`, completed `date_completed`; cancelled and
pending put reduced stock back; every change adds the note "Order status changed from A to B.".
Orders reserve their ID in the post sequence (HPOS keeps a placeholder post), so products and
orders interleave as upstream. The order key is "wc_order_" and 13 letters, from a seeded generator.
"""
from __future__ import annotations

import copy
from typing import Any

from . import catalog, media, php
from .clock import wp_date
from .errors import RestError, WcException, invalid_id
from .model import Comment, Order, OrderItem, Product
from .params import Schema
from .rest import CREATABLE, DELETABLE, EDITABLE, READABLE, Reply, Request, Router, paginate, self_links
from .site import WC_VERSION, Site, random_token
from .variations import attribute_label, option_name, variation_title
from .wcbase import META_DATA, batch, collection_params, context_param, item_args, require

STATUSES = ["pending", "processing", "on-hold", "completed", "cancelled", "refunded", "failed", "checkout-draft"]
STATUS_NAMES = {"pending": "Pending payment", "processing": "Processing", "on-hold": "On hold",
                "completed": "Completed", "cancelled": "Cancelled", "refunded": "Refunded", "failed": "Failed",
                "checkout-draft": "Draft", "trash": "Trash"}
BILLING_KEYS = ("first_name", "last_name", "company", "address_1", "address_2", "city", "state", "postcode",
                "country", "email", "phone")
SHIPPING_KEYS = ("first_name", "last_name", "company", "address_1", "address_2", "city", "state", "postcode",
                 "country", "phone")
ORDER_INTERNAL_META = frozenset({"_order_stock_reduced", "_recorded_sales", "_recorded_coupon_usage_counts",
                                 "_new_order_email_sent", "_wp_trash_meta_status", "_wp_trash_meta_time",
                                 "is_vat_exempt", "_edit_lock", "_edit_last"})
_STR = {"type": "string"}
_ADDRESS: dict[str, Any] = {"type": "object", "properties": {key: dict(_STR) for key in BILLING_KEYS}}
_ADDRESS["properties"]["email"] = {"type": "string", "format": "email"}
_ITEM_META = META_DATA
ORDER_SCHEMA: dict[str, Schema] = {
    "id": {"type": "integer", "readonly": True},
    "parent_id": {"type": "integer"},
    "status": {"type": "string", "default": "pending", "enum": STATUSES},
    "currency": {"type": "string", "default": "USD"},
    "customer_id": {"type": "integer", "default": 0},
    "customer_note": {"type": "string"},
    "billing": _ADDRESS,
    "shipping": {"type": "object", "properties": {key: dict(_STR) for key in SHIPPING_KEYS}},
    "payment_method": {"type": "string"}, "payment_method_title": {"type": "string"},
    "transaction_id": {"type": "string"},
    "meta_data": META_DATA,
    "line_items": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "integer"}, "name": {"type": ["string", "null"]}, "product_id": {"type": ["integer", "null"]},
        "variation_id": {"type": ["integer", "null"]}, "quantity": {"type": "integer"}, "tax_class": {"type": "string"},
        "subtotal": {"type": "string"}, "total": {"type": "string"}, "meta_data": _ITEM_META, "sku": {"type": ["string", "null"]},
        "price": {"type": "number"}}}},
    "shipping_lines": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "integer"}, "method_title": {"type": ["string", "null"]}, "method_id": {"type": ["string", "null"]},
        "instance_id": {"type": "string"}, "total": {"type": "string"}, "meta_data": _ITEM_META}}},
    "fee_lines": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "integer"}, "name": {"type": ["string", "null"]}, "tax_class": {"type": "string"},
        "tax_status": {"type": "string", "enum": ["taxable", "none"]}, "total": {"type": "string"},
        "meta_data": _ITEM_META}}},
    "coupon_lines": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "integer"}, "code": {"type": ["string", "null"]}, "meta_data": _ITEM_META}}},
    "set_paid": {"type": "boolean", "default": False},
}
CREATE_ARGS = item_args(ORDER_SCHEMA, creating=True)
UPDATE_ARGS = item_args(ORDER_SCHEMA, creating=False)
LIST_ARGS = collection_params(["date", "modified", "id", "include", "title", "slug"], extra={
    "parent": {"type": "array", "items": {"type": "integer"}, "default": [], "sanitize": "wp_parse_id_list", "validate": False},
    "parent_exclude": {"type": "array", "items": {"type": "integer"}, "default": [], "sanitize": "wp_parse_id_list",
                       "validate": False},
    "status": {"type": "array", "items": {"type": "string", "enum": ["any", "trash", *STATUSES]}, "default": ["any"]},
    "customer": {"type": "integer"},
    "product": {"type": "integer"},
    "dp": {"type": "integer", "default": 2},
    "created_via": {"type": "array", "items": {"type": "string"}},
})


# --- json ------------------------------------------------------------------------------------


def money(value: float, dp: int = 2) -> str:
    return php.wc_format_decimal(value, dp)


def item_meta_json(site: Site, item: OrderItem) -> list[dict[str, Any]]:
    out = []
    for entry in item.meta:
        display_key, display_value = entry.key, entry.value
        if entry.key.startswith("pa_"):
            display_key = attribute_label(site, None, entry.key)
            display_value = option_name(site, entry.key, php.php_string(entry.value))
        elif isinstance(entry.value, str):
            display_value = php.wpautop(entry.value).strip() if "\n" in entry.value else entry.value
        out.append({"id": entry.id, "key": entry.key, "value": entry.value, "display_key": display_key,
                    "display_value": display_value})
    return out


def line_item_json(request: Request, item: OrderItem, dp: int) -> dict[str, Any]:
    site = request.site
    product = site.product(item.variation_id or item.product_id) if (item.variation_id or item.product_id) else None
    image: dict[str, Any] = {"id": 0, "src": ""} if product is None else {"id": "", "src": ""}
    if product is not None:
        image_id = product.image_id
        if not image_id and product.type == "variation":
            parent = site.product(product.parent_id)
            image_id = parent.image_id if parent else 0
        post = site.post(image_id, "attachment") if image_id else None
        if post is not None:
            image = {"id": post.id, "src": media.file_url(site, request.scheme, post)}
    parent_name = None
    if product is not None and product.type == "variation":
        parent = site.product(product.parent_id)
        parent_name = parent.name if parent else None
    quantity = item.quantity or 0
    return {
        "id": item.id, "name": item.name, "product_id": item.product_id, "variation_id": item.variation_id,
        "quantity": quantity, "tax_class": item.tax_class, "subtotal": money(item.subtotal, dp),
        "subtotal_tax": money(item.subtotal_tax, dp), "total": money(item.total, dp), "total_tax": money(item.total_tax, dp),
        "taxes": [], "meta_data": item_meta_json(site, item),
        "sku": product.sku if product is not None else None,
        "global_unique_id": product.global_unique_id if product is not None else None,
        "price": (item.total / quantity) if quantity else 0,
        "image": image, "parent_name": parent_name,
    }


def order_json(request: Request, order: Order, context: str | None = None) -> dict[str, Any]:
    site = request.site
    dp = php.php_int(request.params.get("dp", 2)) if request.params.isset("dp") else 2
    items = order.items
    refunds = [r for r in site.posts.values() if isinstance(r, Order) and r.type == "shop_order_refund"
               and r.parent_id == order.id]
    data: dict[str, Any] = {
        "id": order.id, "parent_id": order.parent_id, "status": order.status, "currency": order.currency,
        "version": order.version, "prices_include_tax": order.prices_include_tax,
        "date_created": wp_date(order.date_created), "date_modified": wp_date(order.date_modified),
        "discount_total": money(order.discount_total, dp), "discount_tax": money(order.discount_tax, dp),
        "shipping_total": money(order.shipping_total, dp), "shipping_tax": money(order.shipping_tax, dp),
        "cart_tax": money(order.cart_tax, dp), "total": money(order.total, dp), "total_tax": money(order.total_tax, dp),
        "customer_id": order.customer_id, "order_key": order.order_key,
        "billing": {key: order.billing.get(key, "") for key in BILLING_KEYS},
        "shipping": {key: order.shipping.get(key, "") for key in SHIPPING_KEYS},
        "payment_method": order.payment_method, "payment_method_title": order.payment_method_title,
        "transaction_id": order.transaction_id, "customer_ip_address": order.customer_ip_address,
        "customer_user_agent": order.customer_user_agent, "created_via": order.created_via,
        "customer_note": order.customer_note, "date_completed": wp_date(order.date_completed),
        "date_paid": wp_date(order.date_paid), "cart_hash": order.cart_hash, "number": str(order.id),
        "meta_data": catalog.visible_meta(order.meta, ORDER_INTERNAL_META),
        "line_items": [line_item_json(request, i, dp) for i in items if i.type == "line_item"],
        "tax_lines": [{"id": i.id, "rate_code": i.rate_code, "rate_id": i.rate_id, "label": i.label, "compound": i.compound,
                       "tax_total": money(i.total_tax, dp), "shipping_tax_total": money(i.subtotal_tax, dp),
                       "rate_percent": i.rate_percent, "meta_data": item_meta_json(site, i)}
                      for i in items if i.type == "tax"],
        "shipping_lines": [{"id": i.id, "method_title": i.name, "method_id": i.method_id, "instance_id": i.instance_id,
                            "total": money(i.total, dp), "total_tax": money(i.total_tax, dp), "taxes": [],
                            "tax_status": i.tax_status, "meta_data": item_meta_json(site, i)}
                           for i in items if i.type == "shipping"],
        "fee_lines": [{"id": i.id, "name": i.name, "tax_class": i.tax_class, "tax_status": i.tax_status,
                       "amount": php.wc_format_decimal(i.total), "total": money(i.total, dp),
                       "total_tax": money(i.total_tax, dp), "taxes": [], "meta_data": item_meta_json(site, i)}
                      for i in items if i.type == "fee"],
        "coupon_lines": [{"id": i.id, "code": i.code, "discount": money(i.discount, dp),
                          "discount_tax": money(i.discount_tax, dp), "discount_type": _coupon_type(site, i.code),
                          "nominal_amount": _coupon_amount(site, i.code), "free_shipping": False,
                          "meta_data": item_meta_json(site, i)}
                         for i in items if i.type == "coupon"],
        "refunds": [{"id": r.id, "reason": r.reason, "total": money(-r.amount, dp)}
                    for r in sorted(refunds, key=lambda r: -r.id)],
        "payment_url": f"{request.home()}/checkout/order-pay/{order.id}/?pay_for_order=true&key={order.order_key}",
        "is_editable": order.status in ("pending", "on-hold", "auto-draft"),
        "needs_payment": order.status in ("pending", "failed") and order.total > 0,
        "needs_processing": needs_processing(site, order),
        "date_created_gmt": wp_date(order.date_created), "date_modified_gmt": wp_date(order.date_modified),
        "date_completed_gmt": wp_date(order.date_completed), "date_paid_gmt": wp_date(order.date_paid),
        "currency_symbol": "$",
    }
    extra: dict[str, list[dict[str, Any]]] = {
        "email_templates": [{"embeddable": True,
                             "href": request.rest_url(f"/wc/v3/orders/{order.id}/actions/email_templates")}]}
    if order.customer_id:
        extra["customer"] = [{"href": request.rest_url(f"/wc/v3/customers/{order.customer_id}")}]
    if order.parent_id:
        extra["up"] = [{"href": request.rest_url(f"/wc/v3/orders/{order.parent_id}")}]
    data["_links"] = self_links(request, f"/wc/v3/orders/{order.id}", "/wc/v3/orders", extra=extra)
    return data


def _coupon_type(site: Site, code: str) -> str:
    from .model import Coupon
    coupon = next((c for c in site.posts.values() if isinstance(c, Coupon) and c.code == code), None)
    return coupon.discount_type if coupon else "fixed_cart"


def _coupon_amount(site: Site, code: str) -> float:
    from .model import Coupon
    coupon = next((c for c in site.posts.values() if isinstance(c, Coupon) and c.code == code), None)
    return php.php_float(coupon.amount) if coupon else 0


def needs_processing(site: Site, order: Order) -> bool:
    for item in order.items:
        if item.type != "line_item":
            continue
        product = site.product(item.variation_id or item.product_id) if (item.variation_id or item.product_id) else None
        if product is not None and not (product.virtual and product.downloadable):
            return True
    return False


# --- writing ---------------------------------------------------------------------------------


def new_order(site: Site) -> Order:
    now = site.now()
    return Order(0, now, now, version=WC_VERSION)


def add_note(site: Site, order: Order, text: str, customer_note: bool = False, by_user: Any = None) -> Comment:
    comment = Comment(site.next_id("comment"), order.id, "order_note", text, site.now(),
                      author=by_user.display_name if by_user else "WooCommerce",
                      author_email=by_user.email if by_user else "woocommerce@localhost",
                      customer_note=customer_note, added_by_user=by_user is not None,
                      user_id=by_user.id if by_user else 0)
    site.comments[comment.id] = comment
    return comment


def _item_is_null_or_zero(item: dict[str, Any]) -> bool:
    for key in ("product_id", "method_id", "method_title", "name", "code"):
        if key in item and item[key] is None:
            return True
    return "quantity" in item and php.absint(item["quantity"]) == 0


def _set_item_meta(site: Site, item: OrderItem, posted: dict[str, Any]) -> None:
    if isinstance(posted.get("meta_data"), list):
        for meta in posted["meta_data"]:
            if isinstance(meta, dict):
                catalog.update_meta(site, item.meta, php.php_string(meta.get("key")), meta.get("value"), meta.get("id"),
                                    table="order_itemmeta")


def _product_reference(site: Site, posted: dict[str, Any], item: OrderItem | None) -> int:
    if not php.php_empty(posted.get("sku")):
        owner = catalog.sku_owner(site, php.php_string(posted["sku"]), 0)
        return owner or 0
    if not php.php_empty(posted.get("variation_id")):
        return php.php_int(posted["variation_id"])
    if not php.php_empty(posted.get("product_id")):
        return php.php_int(posted["product_id"])
    if item is not None:
        return item.variation_id or item.product_id
    raise WcException("woocommerce_rest_required_product_reference", "Product ID or SKU is required.", 400)


def _set_product(site: Site, item: OrderItem, product: Product) -> None:
    item.meta = [m for m in item.meta if not m.key.startswith("pa_")]
    if product.type == "variation":
        item.product_id, item.variation_id = product.parent_id, product.id
        item.name = variation_title(site, product) or product.name
        for key, value in product.variation_attributes.items():
            site.add_meta(item.meta, key, value, "order_itemmeta")
    else:
        item.product_id, item.variation_id = product.id, 0
        item.name = product.name
    item.tax_class = product.tax_class


def prepare_line_item(site: Site, posted: dict[str, Any], action: str, item: OrderItem | None) -> OrderItem:
    item = item or OrderItem(0, "line_item")
    product = site.product(_product_reference(site, posted, item if action == "update" else None))
    current = site.product(item.variation_id or item.product_id) if (item.variation_id or item.product_id) else None
    if product is not None and product.type in ("variable", "grouped"):
        pass  # upstream allows it; the line simply has no usable price
    if product is not None and product is not current:
        _set_product(site, item, product)
        if action == "create":
            quantity = php.php_float(posted.get("quantity", 1)) if posted.get("quantity") is not None else 1
            total = php.php_float(product.price) * quantity
            item.total = item.subtotal = total
    for prop in ("name", "quantity", "total", "subtotal", "tax_class"):
        if posted.get(prop) is not None:
            value = posted[prop]
            if prop in ("total", "subtotal"):
                setattr(item, prop, php.php_float(php.wc_format_decimal(value)))
            elif prop == "quantity":
                item.quantity = php.php_int(value) if php.php_float(value) == php.php_int(value) else php.php_float(value)
            else:
                setattr(item, prop, php.php_string(value))
    _set_item_meta(site, item, posted)
    return item


def prepare_shipping_line(site: Site, posted: dict[str, Any], action: str, item: OrderItem | None) -> OrderItem:
    item = item or OrderItem(0, "shipping")
    if posted.get("method_title") is not None:
        item.name = php.php_string(posted["method_title"])
    if posted.get("method_id") is not None:
        item.method_id = php.php_string(posted["method_id"])
    if posted.get("instance_id") is not None:
        item.instance_id = php.php_string(posted["instance_id"])
    if posted.get("total") is not None:
        item.total = php.php_float(php.wc_format_decimal(posted["total"]))
    _set_item_meta(site, item, posted)
    return item


def prepare_fee_line(site: Site, posted: dict[str, Any], action: str, item: OrderItem | None) -> OrderItem:
    item = item or OrderItem(0, "fee")
    if action == "create" and php.php_empty(posted.get("name")):
        raise WcException("woocommerce_rest_invalid_fee_item", "Fee name is required.", 400)
    for prop in ("name", "tax_class", "tax_status"):
        if posted.get(prop) is not None:
            setattr(item, prop, php.php_string(posted[prop]))
    if posted.get("total") is not None:
        item.total = php.php_float(php.wc_format_decimal(posted["total"]))
    _set_item_meta(site, item, posted)
    return item


_PREPARERS = {"line_items": prepare_line_item, "shipping_lines": prepare_shipping_line, "fee_lines": prepare_fee_line}


def set_items(site: Site, order: Order, key: str, value: Any) -> None:
    if not isinstance(value, list):
        return
    for posted in value:
        if not isinstance(posted, dict):
            continue
        if _item_is_null_or_zero(posted):
            item_id = php.absint(posted.get("id"))
            order.items = [i for i in order.items if i.id != item_id] if item_id else order.items
            continue
        action = "update" if not php.php_empty(posted.get("id")) else "create"
        existing = None
        if action == "update":
            existing = next((i for i in order.items if i.id == php.absint(posted["id"])), None)
            if existing is None:
                raise WcException("woocommerce_rest_invalid_item_id", "Order item ID provided is not associated with order.", 400)
        item = _PREPARERS[key](site, posted, action, existing)
        if action == "create":
            item.id = site.next_id("order_item")
            order.items.append(item)


def apply_coupons(site: Site, order: Order, value: Any) -> None:
    from .model import Coupon
    if not isinstance(value, list):
        return
    for posted in value:
        if not isinstance(posted, dict):
            continue
        if not php.php_empty(posted.get("id")):
            continue  # existing coupon lines are not edited through the REST API
        code = php.php_string(posted.get("code")).strip().lower()
        if not code:
            raise WcException("woocommerce_rest_invalid_coupon", "Coupon code is required.", 400)
        coupon = next((c for c in site.posts.values() if isinstance(c, Coupon) and c.code.lower() == code
                       and c.status == "publish"), None)
        if coupon is None:
            raise WcException("woocommerce_rest_invalid_coupon", f'Coupon "{code}" does not exist!', 400)
        if any(i.type == "coupon" and i.code == code for i in order.items):
            continue
        item = OrderItem(site.next_id("order_item"), "coupon", code=code, name=code)
        order.items.append(item)


def calculate_totals(site: Site, order: Order) -> None:
    from .model import Coupon
    lines = [i for i in order.items if i.type == "line_item"]
    subtotal = sum(i.subtotal for i in lines)
    discount = 0.0
    for coupon_item in [i for i in order.items if i.type == "coupon"]:
        coupon = next((c for c in site.posts.values() if isinstance(c, Coupon) and c.code == coupon_item.code), None)
        if coupon is None:
            continue
        amount = php.php_float(coupon.amount)
        if coupon.discount_type == "percent":
            value = round(subtotal * amount / 100, 2)
        elif coupon.discount_type == "fixed_product":
            value = amount * sum(php.php_float(i.quantity) for i in lines)
        else:
            value = amount
        value = min(value, max(subtotal - discount, 0))
        coupon_item.discount = value
        discount += value
    if discount:
        remaining = discount
        for index, line in enumerate(lines):
            share = round(discount * (line.subtotal / subtotal), 2) if subtotal else 0
            if index == len(lines) - 1:
                share = round(remaining, 2)
            line.total = line.subtotal - share
            remaining -= share
    order.discount_total = discount
    order.shipping_total = sum(i.total for i in order.items if i.type == "shipping")
    fees = sum(i.total for i in order.items if i.type == "fee")
    order.cart_tax = order.shipping_tax = order.total_tax = order.discount_tax = 0.0
    order.total = php.php_round(sum(i.total for i in lines) + fees + order.shipping_total, 2)


def prepare(request: Request, creating: bool) -> Order:
    site, p = request.site, request.params
    order_id = php.absint(p.get("id")) if p.isset("id") else 0
    existing = site.order(order_id) if order_id else None
    order = copy.deepcopy(existing) if existing is not None else new_order(site)
    for key in ORDER_SCHEMA:
        if ORDER_SCHEMA[key].get("readonly") or key in ("status", "coupon_lines", "set_paid"):
            continue
        value = p.values.get(key)
        if value is None:
            continue
        if key in ("billing", "shipping"):
            if isinstance(value, dict):
                target = order.billing if key == "billing" else order.shipping
                for field_name, field_value in value.items():
                    if field_name in (BILLING_KEYS if key == "billing" else SHIPPING_KEYS):
                        target[field_name] = php.sanitize_text_field(field_value) if field_name != "email" \
                            else php.sanitize_text_field(field_value)
        elif key in _PREPARERS:
            set_items(site, order, key, value)
        elif key == "meta_data":
            if isinstance(value, list):
                for meta in value:
                    if isinstance(meta, dict):
                        catalog.update_meta(site, order.meta, php.php_string(meta.get("key")), meta.get("value"),
                                            meta.get("id"), table="ordermeta")
        elif key == "parent_id":
            order.parent_id = php.absint(value)
        elif key == "customer_id":
            order.customer_id = php.absint(value)
        elif key == "currency":
            order.currency = php.php_string(value).upper() or "USD"
        else:
            setattr(order, key, php.php_string(value))
    if p.isset("coupon_lines"):
        apply_coupons(site, order, p.get("coupon_lines"))
    return order


def record_sales_and_stock(site: Site, order: Order, by_status: str) -> None:
    """The hooks of `woocommerce_order_status_<status>`: stock reduced once, sales counted once, the customer paying."""
    if by_status in ("processing", "completed", "on-hold"):
        if not order.stock_reduced:
            changes = []
            for item in order.items:
                if item.type != "line_item":
                    continue
                product = site.product(item.variation_id or item.product_id) if (item.variation_id or item.product_id) else None
                if product is None or not product.manage_stock:
                    continue
                old = php.php_int(product.stock_quantity or 0)
                quantity = php.php_int(item.quantity)
                product.stock_quantity = old - quantity
                catalog.sync_stock_status(site, product)
                product.date_modified = site.now()
                if product.type == "variation":
                    parent = site.product(product.parent_id)
                    if parent is not None:
                        catalog.sync_stock_status(site, parent)
                        parent.date_modified = product.date_modified
                catalog.update_meta(site, item.meta, "_reduced_stock", str(quantity), table="order_itemmeta")
                changes.append(f"{formatted_name(product)} {old}&rarr;{product.stock_quantity}")
            order.stock_reduced = True
            if changes:
                add_note(site, order, "Stock levels reduced: " + ", ".join(changes))
        if not order.sales_recorded:
            for item in order.items:
                if item.type == "line_item" and item.product_id:
                    product = site.product(item.product_id)
                    if product is not None:
                        product.total_sales += php.php_int(item.quantity)
            order.sales_recorded = True
    if by_status in ("cancelled", "pending") and order.stock_reduced:
        changes = []
        for item in order.items:
            reduced = next((m for m in item.meta if m.key == "_reduced_stock"), None)
            if item.type != "line_item" or reduced is None:
                continue
            product = site.product(item.variation_id or item.product_id)
            if product is None or not product.manage_stock:
                continue
            old = php.php_int(product.stock_quantity or 0)
            product.stock_quantity = old + php.php_int(reduced.value)
            catalog.sync_stock_status(site, product)
            item.meta.remove(reduced)
            changes.append(f"{formatted_name(product)} {old}&rarr;{product.stock_quantity}")
        order.stock_reduced = False
        if changes:
            add_note(site, order, "Stock levels increased: " + ", ".join(changes))
    if by_status in ("processing", "completed") and order.customer_id:
        user = site.user(order.customer_id)
        if user is not None:
            user.paying_customer = True


def formatted_name(product: Product) -> str:
    identifier = product.sku if product.sku else f"#{product.id}"
    return f"{product.name} ({identifier})"


def save_order(request: Request, order: Order, creating: bool) -> Order:
    site, p = request.site, request.params
    customer_id = p.get("customer_id")
    if customer_id not in (None, 0, "0"):
        user = site.user(php.php_int(customer_id))
        if user is None:
            raise WcException("woocommerce_rest_invalid_customer_id", "Customer ID is invalid.", 400)
        if site.blog_id not in user.roles:
            user.roles[site.blog_id] = "customer"
    if creating:
        order.created_via = "rest-api"
        calculate_totals(site, order)
    elif any(p.isset(k) for k in ("billing", "shipping", "line_items", "shipping_lines", "fee_lines", "coupon_lines")):
        calculate_totals(site, order)
    old_status = order.status if not creating else "pending"
    if not php.php_empty(p.get("status")):
        new_status = php.php_string(p.get("status"))
        new_status = new_status[3:] if new_status.startswith("wc-") else new_status
        order.status = new_status if new_status in STATUSES or new_status in ("trash", "auto-draft") else "pending"
    now = site.now()
    if order.customer_id and not order.billing.get("email"):
        user = site.user(order.customer_id)
        if user is not None:
            order.billing["email"] = user.email
    if order.status in ("processing", "completed") and order.date_paid is None:
        order.date_paid = now
    if order.status == "completed" and order.date_completed is None:
        order.date_completed = now
    if creating:
        order.id = site.next_id("post")
        order.order_key = "wc_order_" + random_token(site.rng, 13)
        order.date_created = now
    order.date_modified = now
    site.posts[order.id] = order
    if old_status != order.status:
        # The status hooks (stock, sales) run before WooCommerce writes the transition note.
        record_sales_and_stock(site, order, order.status)
        add_note(site, order, f"Order status changed from {STATUS_NAMES.get(old_status, old_status)} to "
                              f"{STATUS_NAMES.get(order.status, order.status)}.")
    if p.get("set_paid") is True and (creating or order.status in ("pending", "failed")):
        payment_complete(site, order, php.php_string(p.get("transaction_id", "")))
    return order


def payment_complete(site: Site, order: Order, transaction_id: str) -> None:
    if transaction_id:
        order.transaction_id = transaction_id
    if order.date_paid is None:
        order.date_paid = site.now()
    if order.status in ("pending", "failed", "on-hold", "cancelled", "checkout-draft"):
        old = order.status
        order.status = "processing" if needs_processing(site, order) else "completed"
        if order.status == "completed" and order.date_completed is None:
            order.date_completed = site.now()
        record_sales_and_stock(site, order, order.status)
        add_note(site, order, f"Order status changed from {STATUS_NAMES[old]} to {STATUS_NAMES[order.status]}.")
    if order.customer_id:
        user = site.user(order.customer_id)
        if user is not None:
            user.paying_customer = True


# --- handlers --------------------------------------------------------------------------------


def _exists(request: Request) -> bool:
    return request.site.order(request.id_param()) is not None


def get_item(request: Request) -> Reply:
    order = request.site.order(request.id_param())
    if order is None:
        raise invalid_id("shop_order")
    return Reply(order_json(request, order))


def create_item(request: Request) -> Reply:
    if not php.php_empty(request.params.get("id")):
        raise RestError("woocommerce_rest_shop_order_exists", "Cannot create existing shop_order.", 400)
    order = save_order(request, prepare(request, creating=True), creating=True)
    request.params.set("context", "edit")
    return Reply(order_json(request, order), 201, [("Location", request.rest_url(f"/wc/v3/orders/{order.id}"))])


def update_item(request: Request) -> Reply:
    if request.site.order(request.id_param()) is None:
        raise invalid_id("shop_order", 400)
    order = save_order(request, prepare(request, creating=False), creating=False)
    return Reply(order_json(request, order))


def delete_item(request: Request) -> Reply:
    site = request.site
    order = site.order(request.id_param())
    if order is None:
        raise invalid_id("shop_order")
    force = php.php_bool(request.params.get("force"))
    data = order_json(request, order)
    if force:
        for refund in [r for r in site.posts.values() if isinstance(r, Order) and r.parent_id == order.id
                       and r.type == "shop_order_refund"]:
            site.posts.pop(refund.id, None)
        site.posts.pop(order.id, None)
        for comment_id in [c.id for c in site.comments.values() if c.post_id == order.id]:
            site.comments.pop(comment_id, None)
        return Reply(data)
    if order.status == "trash":
        raise RestError("woocommerce_rest_already_trashed", "The shop_order has already been deleted.", 410)
    catalog.update_meta(site, order.meta, "_wp_trash_meta_status", order.status, table="ordermeta")
    order.status = "trash"
    order.date_modified = site.now()
    return Reply(data)


def list_items(request: Request) -> Reply:
    site, p = request.site, request.params
    statuses = [php.php_string(s) for s in (p.get("status") or ["any"])]
    orders = [o for o in site.posts.values() if isinstance(o, Order) and o.type == "shop_order"]
    if "any" in statuses:
        orders = [o for o in orders if o.status not in ("trash", "auto-draft", "checkout-draft")]
    else:
        orders = [o for o in orders if o.status in statuses]
    if p.get("include"):
        orders = [o for o in orders if o.id in p.get("include")]
    if p.get("exclude"):
        orders = [o for o in orders if o.id not in p.get("exclude")]
    if p.get("parent"):
        orders = [o for o in orders if o.parent_id in p.get("parent")]
    if p.get("parent_exclude"):
        orders = [o for o in orders if o.parent_id not in p.get("parent_exclude")]
    if p.isset("customer"):
        customer = php.php_int(p.get("customer"))
        orders = [o for o in orders if o.customer_id == customer]
    if p.isset("product"):
        product = php.php_int(p.get("product"))
        orders = [o for o in orders if any(i.type == "line_item" and product in (i.product_id, i.variation_id)
                                           for i in o.items)]
    if isinstance(p.get("created_via"), list) and p.get("created_via"):
        orders = [o for o in orders if o.created_via in p.get("created_via")]
    if p.get("search"):
        needle = php.php_string(p.get("search")).lower()
        orders = [o for o in orders if needle in _search_text(o)]
    from .queries import _date_filter
    for key, attr, after in (("after", "date_created", True), ("before", "date_created", False),
                             ("modified_after", "date_modified", True), ("modified_before", "date_modified", False)):
        moment = _date_filter(p.get(key))
        if moment is not None:
            orders = [o for o in orders if (getattr(o, attr) > moment if after else getattr(o, attr) < moment)]
    orderby = p.get("orderby", "date")
    descending = p.get("order", "desc") == "desc"
    if orderby == "include" and p.get("include"):
        position = {oid: i for i, oid in enumerate(p.get("include"))}
        orders.sort(key=lambda o: position.get(o.id, 0))
    else:
        keys = {"date": lambda o: (o.date_created, o.id), "modified": lambda o: (o.date_modified, o.id),
                "id": lambda o: o.id, "title": lambda o: o.id, "slug": lambda o: o.id}
        orders.sort(key=keys.get(orderby, keys["date"]), reverse=descending)
    page, per_page = php.php_int(p.get("page", 1)), php.php_int(p.get("per_page", 10))
    chunk, headers = paginate(orders, request, page, per_page, "/wc/v3/orders")
    return Reply([order_json(request, o) for o in chunk], headers=headers)


def _search_text(order: Order) -> str:
    parts = [str(order.id), order.order_key, *order.billing.values(), *order.shipping.values(), order.customer_note]
    parts += [i.name for i in order.items]
    return "\n".join(parts).lower()


def batch_items(request: Request) -> Reply:
    return batch(request, create_item, update_item, delete_item, CREATE_ARGS, UPDATE_ARGS)


# --- notes -----------------------------------------------------------------------------------


def _note_order(request: Request) -> Order:
    order = request.site.order(php.php_int(request.params.get("order_id")))
    if order is None:
        raise RestError("woocommerce_rest_order_invalid_id", "Invalid order ID.", 404)
    return order


def note_json(request: Request, note: Comment) -> dict[str, Any]:
    base = f"/wc/v3/orders/{note.post_id}/notes"
    return {"id": note.id, "author": note.author if note.added_by_user else "system",
            "date_created": wp_date(note.date), "date_created_gmt": wp_date(note.date), "note": note.content,
            "customer_note": note.customer_note,
            "_links": self_links(request, f"{base}/{note.id}", base,
                                 extra={"up": [{"href": request.rest_url(f"/wc/v3/orders/{note.post_id}")}]})}


def list_notes(request: Request) -> Reply:
    order = _note_order(request)
    kind = request.params.get("type", "any")
    notes = [c for c in request.site.comments.values() if c.post_id == order.id and c.type == "order_note"]
    if kind == "customer":
        notes = [n for n in notes if n.customer_note]
    elif kind == "internal":
        notes = [n for n in notes if not n.customer_note]
    notes.sort(key=lambda n: (n.date, n.id), reverse=True)
    return Reply([note_json(request, n) for n in notes])


def _note(request: Request) -> Comment:
    order = _note_order(request)
    note = request.site.comments.get(request.id_param())
    if note is None or note.post_id != order.id or note.type != "order_note":
        raise RestError("woocommerce_rest_invalid_id", "Invalid resource ID.", 404)
    return note


def get_note(request: Request) -> Reply:
    return Reply(note_json(request, _note(request)))


def create_note(request: Request) -> Reply:
    order = _note_order(request)
    p = request.params
    text = php.php_string(p.get("note"))
    if not text:
        raise RestError("woocommerce_rest_invalid_order_note", "Cannot create order note, please try again.", 500)
    user = request.user if php.php_bool(p.get("added_by_user")) else None
    note = add_note(request.site, order, php.kses_post(text), php.php_bool(p.get("customer_note")), user)
    return Reply(note_json(request, note), 201,
                 [("Location", request.rest_url(f"/wc/v3/orders/{order.id}/notes/{note.id}"))])


def delete_note(request: Request) -> Reply:
    note = _note(request)
    if not php.php_bool(request.params.get("force")):
        raise RestError("woocommerce_rest_trash_not_supported", "Webhooks do not support trashing.", 501)
    data = note_json(request, note)
    request.site.comments.pop(note.id, None)
    return Reply(data)


# --- refunds ---------------------------------------------------------------------------------


def refund_json(request: Request, refund: Order) -> dict[str, Any]:
    base = f"/wc/v3/orders/{refund.parent_id}/refunds"
    return {"id": refund.id, "date_created": wp_date(refund.date_created), "date_created_gmt": wp_date(refund.date_created),
            "amount": money(refund.amount), "reason": refund.reason, "refunded_by": refund.refunded_by,
            "refunded_payment": refund.refunded_payment, "meta_data": catalog.visible_meta(refund.meta),
            "line_items": [line_item_json(request, i, 2) for i in refund.items if i.type == "line_item"],
            "shipping_lines": [], "tax_lines": [], "fee_lines": [],
            "_links": self_links(request, f"{base}/{refund.id}", base,
                                 extra={"up": [{"href": request.rest_url(f"/wc/v3/orders/{refund.parent_id}")}]})}


def _refunds_of(site: Site, order: Order) -> list[Order]:
    return [r for r in site.posts.values() if isinstance(r, Order) and r.type == "shop_order_refund"
            and r.parent_id == order.id]


def list_refunds(request: Request) -> Reply:
    order = _note_order(request)
    refunds = sorted(_refunds_of(request.site, order), key=lambda r: (r.date_created, r.id), reverse=True)
    page, per_page = php.php_int(request.params.get("page", 1)), php.php_int(request.params.get("per_page", 10))
    chunk, headers = paginate(refunds, request, page, per_page, f"/wc/v3/orders/{order.id}/refunds")
    return Reply([refund_json(request, r) for r in chunk], headers=headers)


def _refund(request: Request) -> Order:
    order = _note_order(request)
    refund = request.site.order(request.id_param(), "shop_order_refund")
    if refund is None or refund.parent_id != order.id:
        raise invalid_id("shop_order_refund")
    return refund


def get_refund(request: Request) -> Reply:
    return Reply(refund_json(request, _refund(request)))


def create_refund(request: Request) -> Reply:
    site, p = request.site, request.params
    order = _note_order(request)
    lines = p.get("line_items") if isinstance(p.get("line_items"), list) else []
    amount = php.php_float(p.get("amount")) if not php.php_empty(p.get("amount")) else sum(
        php.php_float(line.get("refund_total")) for line in lines if isinstance(line, dict))
    if amount <= 0:
        raise RestError("woocommerce_rest_invalid_order_refund", "Refund amount must be greater than zero.", 400)
    already = sum(r.amount for r in _refunds_of(site, order))
    if php.php_round(amount, 2) > php.php_round(order.total - already, 2):
        raise RestError("woocommerce_rest_cannot_create_order_refund", "Invalid refund amount.", 500)
    if p.get("api_refund", True) is not False and p.get("api_refund", True) not in (0, "0", "false"):
        raise RestError("woocommerce_rest_cannot_create_order_refund",
                        "The payment gateway for this order does not support automatic refunds.", 500)
    now = site.now()
    refund = Order(site.next_id("post"), now, now, type="shop_order_refund", status="completed", parent_id=order.id,
                   version=WC_VERSION, amount=amount, reason=php.php_string(p.get("reason", "")),
                   refunded_by=php.absint(p.get("refunded_by")) or (request.user.id if request.user else 0))
    for line in lines:
        if not isinstance(line, dict):
            continue
        original = next((i for i in order.items if i.id == php.absint(line.get("id"))), None)
        if original is None:
            continue
        quantity = php.php_int(line.get("quantity", 0))
        refund.items.append(OrderItem(site.next_id("order_item"), "line_item", original.name, original.product_id,
                                      original.variation_id, -quantity, original.tax_class,
                                      -php.php_float(line.get("refund_total")), 0, -php.php_float(line.get("refund_total")), 0))
        product = site.product(original.variation_id or original.product_id)
        if quantity and product is not None and product.manage_stock:
            old = php.php_int(product.stock_quantity or 0)
            product.stock_quantity = old + quantity
            catalog.sync_stock_status(site, product)
            add_note(site, order, f"Item #{original.id} stock increased from {old} to {product.stock_quantity}.")
    if isinstance(p.get("meta_data"), list):
        for meta in p.get("meta_data"):
            if isinstance(meta, dict):
                catalog.update_meta(site, refund.meta, php.php_string(meta.get("key")), meta.get("value"), table="ordermeta")
    site.posts[refund.id] = refund
    if php.php_round(already + amount, 2) >= php.php_round(order.total, 2):
        old_status = order.status
        order.status = "refunded"
        add_note(site, order, f"Order status changed from {STATUS_NAMES.get(old_status, old_status)} to Refunded.")
    order.date_modified = now
    return Reply(refund_json(request, refund), 201,
                 [("Location", request.rest_url(f"/wc/v3/orders/{order.id}/refunds/{refund.id}"))])


def delete_refund(request: Request) -> Reply:
    refund = _refund(request)
    if not php.php_bool(request.params.get("force")):
        raise RestError("woocommerce_rest_trash_not_supported", "Refunds do not support trashing.", 501)
    data = refund_json(request, refund)
    request.site.posts.pop(refund.id, None)
    return Reply(data)


def register(router: Router) -> None:
    base = "/wc/v3/orders"
    router.add(base, READABLE, list_items, LIST_ARGS, require("list"))
    router.add(base, CREATABLE, create_item, CREATE_ARGS, require("create"))
    router.add(base + "/batch", EDITABLE, batch_items, UPDATE_ARGS, require("batch"))
    item = base + r"/(?P<id>[\d]+)"
    router.add(item, READABLE, get_item, {**context_param(), "dp": {"type": "integer", "default": 2}},
               require("read", _exists))
    router.add(item, EDITABLE, update_item, UPDATE_ARGS, require("edit", _exists))
    router.add(item, DELETABLE, delete_item, {"force": {"type": "boolean", "default": False}}, require("delete", _exists))
    notes = base + r"/(?P<order_id>[\d]+)/notes"
    router.add(notes, READABLE, list_notes, {**context_param(), "type": {"type": "string", "default": "any",
                                                                         "enum": ["any", "customer", "internal"]}},
               require("list"))
    router.add(notes, CREATABLE, create_note, {"note": {"type": "string", "required": True},
                                               "customer_note": {"type": "boolean", "default": False},
                                               "added_by_user": {"type": "boolean", "default": False}},
               require("create"))
    router.add(notes + r"/(?P<id>[\d]+)", READABLE, get_note, context_param(), require("read"))
    router.add(notes + r"/(?P<id>[\d]+)", DELETABLE, delete_note, {"force": {"type": "boolean", "default": False}},
               require("delete"))
    refunds = base + r"/(?P<order_id>[\d]+)/refunds"
    router.add(refunds, READABLE, list_refunds, collection_params(["date", "id", "include", "title", "slug", "modified"]),
               require("list"))
    router.add(refunds, CREATABLE, create_refund, {"amount": {"type": "string"}, "reason": {"type": "string"},
                                                   "refunded_by": {"type": "integer"}, "meta_data": META_DATA,
                                                   "line_items": {"type": "array", "items": {"type": "object"}},
                                                   "api_refund": {"type": "boolean", "default": True}},
               require("create"))
    router.add(refunds + r"/(?P<id>[\d]+)", READABLE, get_refund, context_param(), require("read"))
    router.add(refunds + r"/(?P<id>[\d]+)", DELETABLE, delete_refund, {"force": {"type": "boolean", "default": True}},
               require("delete"))

