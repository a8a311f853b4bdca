"""Each tool's request, as the reference's services build it.

List tools send their arguments as query parameters after `toSnakeCase` (`perPage` -> `per_page`,
`dateAfter` -> `date_after`, which WooCommerce then ignores, as upstream); tools that need an id
check it first with JavaScript truthiness (`Product ID is required` for a missing or 0 id); a few
tools post their whole argument object as the body (batch updates, zone and tax creation). Ids are
interpolated into the path as JavaScript would (`/products/22.5`, `/orders/undefined/notes`).
"""
from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from .client import UNDEFINED, ToolError, WooClient, js_string

Args = dict[str, Any]


def snake(params: Any) -> dict[str, Any]:
    """`toSnakeCase`: camelCase keys to snake_case, values untouched."""
    if not isinstance(params, dict):
        return {}
    return {re.sub(r"[A-Z]", lambda m: "_" + m.group().lower(), key): value for key, value in params.items()}


def truthy(value: Any) -> bool:
    if value is UNDEFINED or value is None or value is False:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0 and value == value
    if isinstance(value, str):
        return value != ""
    return True


def arg(args: Args, key: str) -> Any:
    return args.get(key, UNDEFINED) if isinstance(args, dict) else UNDEFINED


def require(args: Args, key: str, message: str) -> Any:
    value = arg(args, key)
    if not truthy(value):
        raise ToolError(message)
    return value


def _or(value: Any, fallback: Any) -> Any:
    return value if truthy(value) else fallback


Handler = Callable[[WooClient, Args], Awaitable[Any]]


def _list(path: str) -> Handler:
    async def run(client: WooClient, args: Args) -> Any:
        return await client.request("GET", path, snake(args))
    return run


def _get(path: str, key: str, message: str) -> Handler:
    async def run(client: WooClient, args: Args) -> Any:
        value = require(args, key, message)
        return await client.request("GET", path.format(js_string(value)))
    return run


def _create(path: str, key: str, message: str) -> Handler:
    async def run(client: WooClient, args: Args) -> Any:
        data = require(args, key, message)
        return await client.request("POST", path, data=data)
    return run


def _update(path: str, id_key: str, id_message: str, data_key: str, data_message: str) -> Handler:
    async def run(client: WooClient, args: Args) -> Any:
        value = require(args, id_key, id_message)
        data = require(args, data_key, data_message)
        return await client.request("PUT", path.format(js_string(value)), data=data)
    return run


def _delete(path: str, key: str, message: str, default_force: bool) -> Handler:
    async def run(client: WooClient, args: Args) -> Any:
        value = require(args, key, message)
        force = _or(arg(args, "force"), default_force)
        return await client.request("DELETE", path.format(js_string(value)), {"force": force})
    return run


def _plain(method: str, path: str) -> Handler:
    async def run(client: WooClient, args: Args) -> Any:
        return await client.request(method, path)
    return run


def _with_body(method: str, path: str) -> Handler:
    async def run(client: WooClient, args: Args) -> Any:
        return await client.request(method, path, data=args)
    return run


def _path_arg(method: str, path: str, key: str, body: bool = False) -> Handler:
    async def run(client: WooClient, args: Args) -> Any:
        target = path.format(js_string(arg(args, key)))
        return await client.request(method, target, data=args if body else UNDEFINED)
    return run


async def _variations(client: WooClient, args: Args) -> Any:
    product_id = require(args, "productId", "Product ID is required")
    return await client.request("GET", f"/products/{js_string(product_id)}/variations",
                                {"per_page": arg(args, "perPage"), "page": arg(args, "page")})


async def _create_category(client: WooClient, args: Args) -> Any:
    return await client.request("POST", "/products/categories", data=arg(args, "categoryData"))


async def _order_note(client: WooClient, args: Args) -> Any:
    data = {"note": arg(args, "note"), "customer_note": _or(arg(args, "customerNote"), False)}
    return await client.request("POST", f"/orders/{js_string(arg(args, 'orderId'))}/notes", data=data)


async def _refund(client: WooClient, args: Args) -> Any:
    data = {"amount": arg(args, "amount"), "reason": arg(args, "reason"), "refunded_by": arg(args, "refundedBy"),
            "meta_data": arg(args, "metaData"), "line_items": arg(args, "lineItems"),
            "api_refund": _or(arg(args, "refundPayment"), False)}
    return await client.request("POST", f"/orders/{js_string(arg(args, 'orderId'))}/refunds", data=data)


async def _zone_method(client: WooClient, args: Args) -> Any:
    zone_id = arg(args, "zoneId")
    if not truthy(zone_id):
        raise ToolError("Zone ID and method data are required")
    data = {"method_id": arg(args, "methodId"), "enabled": arg(args, "enabled"), "settings": arg(args, "settings")}
    return await client.request("POST", f"/shipping/zones/{js_string(zone_id)}/methods", data=data)


HANDLERS: dict[str, Handler] = {
    "woo_products_list": _list("/products"),
    "woo_products_get": _get("/products/{}", "productId", "Product ID is required"),
    "woo_products_create": _create("/products", "productData", "Product data is required"),
    "woo_products_update": _update("/products/{}", "productId", "Product ID is required", "productData",
                                   "Product data is required"),
    "woo_products_delete": _delete("/products/{}", "productId", "Product ID is required", False),
    "woo_products_batch_update": _with_body("POST", "/products/batch"),
    "woo_products_variations_list": _variations,
    "woo_products_categories_list": _list("/products/categories"),
    "woo_products_categories_create": _create_category,
    "woo_products_tags_list": _list("/products/tags"),
    "woo_products_reviews_list": _list("/products/reviews"),
    "woo_orders_list": _list("/orders"),
    "woo_orders_get": _get("/orders/{}", "orderId", "Order ID is required"),
    "woo_orders_create": _create("/orders", "orderData", "Order data is required"),
    "woo_orders_update": _update("/orders/{}", "orderId", "Order ID is required", "orderData", "Order data is required"),
    "woo_orders_delete": _delete("/orders/{}", "orderId", "Order ID is required", False),
    "woo_orders_batch_update": _with_body("POST", "/orders/batch"),
    "woo_orders_notes_create": _order_note,
    "woo_orders_refunds_create": _refund,
    "woo_customers_list": _list("/customers"),
    "woo_customers_get": _get("/customers/{}", "customerId", "Customer ID is required"),
    "woo_customers_create": _create("/customers", "customerData", "Customer data is required"),
    "woo_customers_update": _update("/customers/{}", "customerId", "Customer ID is required", "customerData",
                                    "Customer data is required"),
    "woo_coupons_list": _list("/coupons"),
    "woo_coupons_get": _get("/coupons/{}", "couponId", "Coupon ID is required"),
    "woo_coupons_create": _create("/coupons", "couponData", "Coupon data is required"),
    "woo_coupons_update": _update("/coupons/{}", "couponId", "Coupon ID is required", "couponData",
                                  "Coupon data is required"),
    "woo_coupons_delete": _delete("/coupons/{}", "couponId", "Coupon ID is required", True),
    "woo_reports_sales": _list("/reports/sales"),
    "woo_reports_top_sellers": _list("/reports/top_sellers"),
    "woo_reports_customers": _list("/reports/customers/totals"),
    "woo_reports_orders": _list("/reports/orders/totals"),
    "woo_reports_products": _list("/reports/products/totals"),
    "woo_reports_stock": _list("/reports/stock"),
    "woo_reports_low_stock": _list("/reports/stock/low"),
    "woo_shipping_zones_list": _plain("GET", "/shipping/zones"),
    "woo_shipping_zones_get": _get("/shipping/zones/{}", "zoneId", "Zone ID is required"),
    "woo_shipping_zones_create": _with_body("POST", "/shipping/zones"),
    "woo_shipping_zones_update": _path_arg("PUT", "/shipping/zones/{}", "zoneId", body=True),
    "woo_shipping_zone_methods_list": _get("/shipping/zones/{}/methods", "zoneId", "Zone ID is required"),
    "woo_shipping_zone_methods_create": _zone_method,
    "woo_tax_rates_list": _list("/taxes"),
    "woo_tax_rates_get": _get("/taxes/{}", "rateId", "Tax rate ID is required"),
    "woo_tax_rates_create": _with_body("POST", "/taxes"),
    "woo_tax_classes_list": _plain("GET", "/taxes/classes"),
    "woo_system_status": _plain("GET", "/system_status"),
    "woo_system_tools_list": _plain("GET", "/system_status/tools"),
    "woo_system_tools_run": _path_arg("PUT", "/system_status/tools/{}", "toolId"),
    "woo_settings_list": _plain("GET", "/settings"),
    "woo_settings_get": _path_arg("GET", "/settings/{}", "groupId"),
    "woo_payment_gateways_list": _plain("GET", "/payment_gateways"),
    "woo_payment_gateways_get": _path_arg("GET", "/payment_gateways/{}", "gatewayId"),
    "woo_payment_gateways_update": _path_arg("PUT", "/payment_gateways/{}", "gatewayId", body=True),
    "woo_webhooks_list": _list("/webhooks"),
    "woo_webhooks_create": _with_body("POST", "/webhooks"),
}


async def run_tool(client: WooClient, name: str, args: Any) -> Any:
    handler = HANDLERS.get(name)
    if handler is None:
        raise ToolError(f"Unknown tool: {name}")
    return await handler(client, args if isinstance(args, dict) else {})
