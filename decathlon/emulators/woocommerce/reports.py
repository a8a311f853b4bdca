"""`/wc/v3/reports`: the legacy sales, top-seller and totals reports, computed from the stored orders.

Sales count orders that are paid or about to be (completed, processing, on-hold), dated inside the
period: `week` is the last seven days including today, `month` this month, `last_month` and `year`
as named, and `date_min`/`date_max` a custom range. Net sales leave out shipping, tax and refunds;
the average is per day (per month for a year). There is no `/reports/stock`: upstream has none either.
"""
from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from . import php
from .model import Coupon, Order, Product
from .params import Schema
from .rest import READABLE, Reply, Request, Router
from .site import Site
from .wcbase import context_param, require

PAID = ("completed", "processing", "on-hold")
REPORT_ARGS: dict[str, Schema] = {
    "context": {"type": "string", "enum": ["view"], "default": "view"},
    "period": {"type": "string", "enum": ["week", "month", "last_month", "year"]},
    "date_min": {"type": "string"}, "date_max": {"type": "string"},
}
TOTALS = {
    "orders": [("pending", "Pending payment"), ("processing", "Processing"), ("on-hold", "On hold"),
               ("completed", "Completed"), ("cancelled", "Cancelled"), ("refunded", "Refunded"), ("failed", "Failed"),
               ("checkout-draft", "Draft")],
    "products": [("external", "External/Affiliate product"), ("grouped", "Grouped product"),
                 ("simple", "Simple product"), ("variable", "Variable product")],
    "coupons": [("percent", "Percentage discount"), ("fixed_cart", "Fixed cart discount"),
                ("fixed_product", "Fixed product discount")],
    "customers": [("paying", "Paying customer"), ("non_paying", "Non-paying customer")],
    "reviews": [(f"rated_{n}_out_of_5", f"Rated {n} out of 5") for n in range(1, 6)],
}


def _period(request: Request) -> tuple[date, date, str]:
    p = request.params
    today = request.site.now().date()
    if p.get("date_min") or p.get("date_max"):
        start = _parse_day(p.get("date_min")) or today - timedelta(days=6)
        end = _parse_day(p.get("date_max")) or today
    else:
        period = p.get("period", "week")
        if period == "month":
            start, end = today.replace(day=1), today
        elif period == "last_month":
            end = today.replace(day=1) - timedelta(days=1)
            start = end.replace(day=1)
        elif period == "year":
            start, end = today.replace(month=1, day=1), today
        else:
            start, end = today - timedelta(days=6), today
    group = "month" if (p.get("period") == "year" or (end - start).days > 90) else "day"
    return start, end, group


def _parse_day(value: Any) -> date | None:
    try:
        return datetime.strptime(php.php_string(value)[:10], "%Y-%m-%d").date()
    except ValueError:
        return None


def _orders_in(site: Site, start: date, end: date) -> list[Order]:
    return [o for o in site.posts.values() if isinstance(o, Order) and o.type == "shop_order" and o.status in PAID
            and start <= o.date_created.date() <= end]


def sales(request: Request) -> Reply:
    site = request.site
    start, end, group = _period(request)
    orders = _orders_in(site, start, end)
    refunds = [r for r in site.posts.values() if isinstance(r, Order) and r.type == "shop_order_refund"
               and start <= r.date_created.date() <= end]
    buckets: dict[str, dict[str, Any]] = {}
    cursor = start
    while cursor <= end:
        key = cursor.strftime("%Y-%m") if group == "month" else cursor.isoformat()
        buckets.setdefault(key, {"sales": 0.0, "orders": 0, "items": 0, "tax": 0.0, "shipping": 0.0,
                                 "discount": 0.0, "customers": 0})
        cursor += timedelta(days=1)
    for order in orders:
        key = order.date_created.strftime("%Y-%m") if group == "month" else order.date_created.date().isoformat()
        bucket = buckets[key]
        bucket["sales"] += order.total
        bucket["orders"] += 1
        bucket["items"] += sum(php.php_int(i.quantity) for i in order.items if i.type == "line_item")
        bucket["tax"] += order.total_tax
        bucket["shipping"] += order.shipping_total
        bucket["discount"] += order.discount_total
    total_sales = sum(o.total for o in orders)
    shipping = sum(o.shipping_total for o in orders)
    tax = sum(o.total_tax for o in orders)
    refunded = sum(r.amount for r in refunds)
    net = total_sales - shipping - tax - refunded
    divisor = max(len(buckets), 1)
    customers = [u for u in site.members() if u.roles.get(site.blog_id) == "customer"
                 and start <= u.registered.date() <= end]
    report = {
        "total_sales": php.wc_format_decimal(total_sales, 2), "net_sales": php.wc_format_decimal(net, 2),
        "average_sales": php.wc_format_decimal(net / divisor, 2), "total_orders": len(orders),
        "total_items": sum(b["items"] for b in buckets.values()), "total_tax": php.wc_format_decimal(tax, 2),
        "total_shipping": php.wc_format_decimal(shipping, 2), "total_refunds": refunded if refunded else 0,
        "total_discount": php.wc_format_decimal(sum(o.discount_total for o in orders), 2),
        "totals_grouped_by": group,
        "totals": {key: {"sales": php.wc_format_decimal(b["sales"], 2), "orders": b["orders"], "items": b["items"],
                         "tax": php.wc_format_decimal(b["tax"], 2), "shipping": php.wc_format_decimal(b["shipping"], 2),
                         "discount": php.wc_format_decimal(b["discount"], 2), "customers": b["customers"]}
                   for key, b in buckets.items()},
        "total_customers": len(customers),
        "_links": {"about": [{"href": request.rest_url("/wc/v3/reports")}]},
    }
    return Reply([report])


def top_sellers(request: Request) -> Reply:
    site = request.site
    start, end, _ = _period(request)
    counts: dict[int, int] = {}
    for order in _orders_in(site, start, end):
        for item in order.items:
            if item.type == "line_item" and item.product_id:
                counts[item.product_id] = counts.get(item.product_id, 0) + php.php_int(item.quantity)
    ranked = sorted(counts.items(), key=lambda entry: (-entry[1], entry[0]))
    out = []
    for product_id, quantity in ranked:
        product = site.product(product_id)
        out.append({"name": product.name if product else "", "product_id": product_id, "quantity": quantity,
                    "_links": {"about": [{"href": request.rest_url("/wc/v3/reports")}],
                               "product": [{"href": request.rest_url(f"/wc/v3/products/{product_id}")}]}})
    page = php.php_int(request.params.get("page", 1)) or 1
    per_page = php.php_int(request.params.get("per_page", 10)) or 10
    return Reply(out[(page - 1) * per_page: page * per_page] if request.params.isset("per_page") else out)


def totals(kind: str):
    def handler(request: Request) -> Reply:
        site = request.site
        counts: dict[str, int] = {}
        if kind == "orders":
            for record in site.posts.values():
                if isinstance(record, Order) and record.type == "shop_order":
                    counts[record.status] = counts.get(record.status, 0) + 1
        elif kind == "products":
            for record in site.posts.values():
                if isinstance(record, Product) and record.type != "variation" and record.status != "trash":
                    counts[record.type] = counts.get(record.type, 0) + 1
        elif kind == "coupons":
            for record in site.posts.values():
                if isinstance(record, Coupon) and record.status != "trash":
                    counts[record.discount_type] = counts.get(record.discount_type, 0) + 1
        elif kind == "customers":
            for user in site.members():
                if user.roles.get(site.blog_id) == "customer":
                    key = "paying" if user.paying_customer else "non_paying"
                    counts[key] = counts.get(key, 0) + 1
        return Reply([{"slug": slug, "name": name, "total": counts.get(slug, 0)} for slug, name in TOTALS[kind]])

    return handler


def index(request: Request) -> Reply:
    entries = [("sales", "List of sales reports."), ("top_sellers", "List of top sellers products."),
               ("coupons/totals", "Coupons totals."), ("customers/totals", "Customers totals."),
               ("orders/totals", "Orders totals."), ("products/totals", "Products totals."),
               ("reviews/totals", "Reviews totals.")]
    return Reply([{"slug": slug, "description": text,
                   "_links": {"self": [{"href": request.rest_url(f"/wc/v3/reports/{slug}")}],
                              "collection": [{"href": request.rest_url("/wc/v3/reports")}]}} for slug, text in entries])


def register(router: Router) -> None:
    router.add("/wc/v3/reports", READABLE, index, context_param(), require("list"))
    router.add("/wc/v3/reports/sales", READABLE, sales, REPORT_ARGS, require("list"))
    router.add("/wc/v3/reports/top_sellers", READABLE, top_sellers, REPORT_ARGS, require("list"))
    for kind in TOTALS:
        router.add(f"/wc/v3/reports/{kind}/totals", READABLE, totals(kind), context_param(), require("list"))
