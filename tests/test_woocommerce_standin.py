"""End-to-end tests of the `@lockon0927/woocommerce-mcp` stand-in (decathlon/standins/woocommerce) over MCP stdio.

The stand-in runs as a subprocess, as an agent's MCP client starts it, against the WooCommerce
emulator started in-process on an ephemeral port with a small made-up directory. The tests pin the
reference's tool list and schemas, its result text (`JSON.stringify(data, null, 2)` with every
backslash removed), its request shapes (snake_cased list parameters, axios' `status[]=` arrays,
whole-argument batch bodies) and its error texts, including failures that never reach WooCommerce.
"""
from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

from decathlon.standins.woocommerce.client import UNDEFINED, serialize_params
from decathlon.standins.woocommerce.tools import snake
from decathlon.emulators.directory import load_directory
from decathlon.emulators.woocommerce import start
from decathlon.emulators.woocommerce.clock import ManualClock

REPO = Path(__file__).resolve().parents[1]
KEY, SECRET = "ck_test_store85", "cs_test_store85"
TOOL_NAMES = [
    "woo_products_list", "woo_products_get", "woo_products_create", "woo_products_update", "woo_products_delete",
    "woo_products_batch_update", "woo_products_variations_list", "woo_products_categories_list",
    "woo_products_categories_create", "woo_products_tags_list", "woo_products_reviews_list", "woo_orders_list",
    "woo_orders_get", "woo_orders_create", "woo_orders_update", "woo_orders_delete", "woo_orders_batch_update",
    "woo_orders_notes_create", "woo_orders_refunds_create", "woo_customers_list", "woo_customers_get",
    "woo_customers_create", "woo_customers_update", "woo_coupons_list", "woo_coupons_get", "woo_coupons_create",
    "woo_coupons_update", "woo_coupons_delete", "woo_reports_sales", "woo_reports_top_sellers", "woo_reports_customers",
    "woo_reports_orders", "woo_reports_products", "woo_reports_stock", "woo_reports_low_stock",
    "woo_shipping_zones_list", "woo_shipping_zones_get", "woo_shipping_zones_create", "woo_shipping_zones_update",
    "woo_shipping_zone_methods_list", "woo_shipping_zone_methods_create", "woo_tax_rates_list", "woo_tax_rates_get",
    "woo_tax_rates_create", "woo_tax_classes_list", "woo_system_status", "woo_system_tools_list", "woo_system_tools_run",
    "woo_settings_list", "woo_settings_get", "woo_payment_gateways_list", "woo_payment_gateways_get",
    "woo_payment_gateways_update", "woo_webhooks_list", "woo_webhooks_create"]
NOT_FOUND = ("Error: WooCommerce API endpoint not found. Please check if WooCommerce is installed and REST API is "
             "enabled. URL: {}")


class Emulator:
    def __init__(self, root: Path) -> None:
        users = [{"id": 85, "first_name": "Ravi", "last_name": "Okafor", "full_name": "Ravi Okafor",
                  "email": "ravi.okafor@mcp.com", "password": "pw85", "woocommerce_consumer_key": KEY,
                  "woocommerce_consumer_secret": SECRET}]
        (root / "configs").mkdir(parents=True)
        (root / "configs" / "users_data.json").write_text(json.dumps({"domain": "mcp.com", "users": users}))
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        clock = ManualClock(datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc))
        self.service = asyncio.run_coroutine_threadsafe(
            start(load_directory(root), "127.0.0.1", {"http": 0}, clock=clock), self.loop).result(20)
        self.site = f"http://127.0.0.1:{self.service.ports['http']}/store85"
        self.http = httpx.Client(base_url=self.site + "/wp-json/wc/v3", auth=(KEY, SECRET), timeout=10)

    def close(self) -> None:
        self.http.close()
        asyncio.run_coroutine_threadsafe(self.service.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


class StandIn:
    def __init__(self, portal: BlockingPortal, session: ClientSession, info: Any, tools: list[Any]) -> None:
        self.portal, self.session, self.info, self.tools = portal, session, info, tools

    def call(self, name: str, arguments: dict[str, Any] | None) -> tuple[str, bool]:
        result = self.portal.call(self.session.call_tool, name, arguments)
        assert len(result.content) == 1 and result.content[0].type == "text"
        return result.content[0].text, bool(result.is_error)

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        text, failed = self.call(name, arguments or {})
        assert not failed, text
        return text

    def data(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """The result parsed back; the price_html lines go first: without their backslashes they are not JSON."""
        text = self.ok(name, arguments)
        return json.loads("\n".join(line for line in text.split("\n") if '"price_html": ' not in line))

    def error(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        text, failed = self.call(name, arguments or {})
        assert failed, text
        return text


@asynccontextmanager
async def _connect(env: dict[str, str]) -> AsyncIterator[tuple[ClientSession, Any, list[Any]]]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "decathlon.standins.woocommerce"], cwd=str(REPO),
                                   env={**get_default_environment(), "PYTHONPATH": str(REPO), **env})
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            info = await session.initialize()
            tools = await session.list_tools()
            yield session, info.server_info, tools.tools


@contextmanager
def stand_in(site: str, key: str = KEY, secret: str = SECRET, **extra: str) -> Iterator[StandIn]:
    env = {"WORDPRESS_SITE_URL": site, "WOOCOMMERCE_CONSUMER_KEY": key, "WOOCOMMERCE_CONSUMER_SECRET": secret, **extra}
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(_connect(env)) as connected:
        yield StandIn(portal, *connected)


@pytest.fixture(scope="module")
def emu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    e = Emulator(tmp_path_factory.mktemp("task"))
    yield e
    e.close()


@pytest.fixture(scope="module")
def woo(emu: Emulator) -> Iterator[StandIn]:
    with stand_in(emu.site + "/") as running:  # a trailing slash is dropped, as upstream drops it
        yield running


# --- pure parts ------------------------------------------------------------------------------


def test_query_strings_are_serialized_as_axios_does():
    assert serialize_params({"per_page": 100, "status": ["completed", "on-hold"], "on_sale": True, "x": UNDEFINED,
                             "search": "a b/c:d", "min": None, "price": 1.5}) == \
        "per_page=100&status[]=completed&status[]=on-hold&on_sale=true&search=a+b%2Fc:d&min=&price=1.5"
    assert serialize_params({"meta": {"key": "k", "value": [1, 2]}}) == "meta[key]=k&meta[value][0]=1&meta[value][1]=2"
    assert snake({"perPage": 5, "stockStatus": "instock", "dateAfter": "x", "page": 2}) == \
        {"per_page": 5, "stock_status": "instock", "date_after": "x", "page": 2}


# --- tool list -------------------------------------------------------------------------------


def test_tools_are_the_references_in_its_order(woo):
    assert (woo.info.name, woo.info.version) == ("woocommerce-mcp-server", "1.0.6")
    assert [t.name for t in woo.tools] == TOOL_NAMES
    by_name = {t.name: t for t in woo.tools}
    assert by_name["woo_products_get"].input_schema["required"] == ["productId"]
    assert by_name["woo_products_update"].input_schema["required"] == ["productId", "productData"]
    assert by_name["woo_orders_list"].input_schema["properties"]["status"]["items"]["enum"] == \
        ["pending", "processing", "on-hold", "completed", "cancelled", "refunded", "failed"]
    assert by_name["woo_coupons_delete"].input_schema["properties"]["force"]["default"] is True
    assert by_name["woo_products_list"].description.startswith("List products with optional filters. IMPORTANT: Use perPage")
    assert set(by_name["woo_products_list"].input_schema["properties"]) == {
        "perPage", "page", "search", "status", "category", "tag", "sku", "featured", "onSale", "minPrice", "maxPrice",
        "stockStatus", "orderby", "order"}
    assert by_name["woo_system_status"].input_schema == {"type": "object", "properties": {}}


# --- results ---------------------------------------------------------------------------------


def test_result_text_is_two_space_json_without_backslashes(woo, emu):
    created = emu.http.post("/products", json={"name": 'Quote "Lamp"', "regular_price": "1200.00",
                                               "description": "Warm light.\nBrass."}).json()
    text = woo.ok("woo_products_get", {"productId": created["id"]})
    assert text.startswith('{\n  "id": %d,\n  "name": "Quote "Lamp"",\n  "slug": "quote-lamp",\n' % created["id"])
    assert '\n  "description": "<p>Warm light.<br />nBrass.</p>n",\n' in text
    assert ('"price_html": "<span class="woocommerce-Price-amount amount"><bdi><span class="woocommerce-Price-'
            'currencySymbol">&#36;</span>1,200.00</bdi></span>",') in text
    assert "\\" not in text and '\n    "href": ' not in text and '\n        "href": "https://localhost:10003/' in text
    assert woo.ok("woo_products_list", {"perPage": 1, "search": "nothing-matches"}) == "[]"


def test_a_catalogue_and_orders_flow_through_the_tools(woo, emu):
    outlet = woo.data("woo_products_categories_create", {"categoryData": {"name": "Outlet/Clearance"}})
    assert (outlet["slug"], outlet["count"], outlet["image"]) == ("outlet-clearance", 0, None)
    made = woo.data("woo_products_create", {"productData": {"name": "Old Lamp", "regular_price": "30.00",
                                                            "manage_stock": True, "stock_quantity": 8}})
    updated = woo.data("woo_products_update", {"productId": made["id"],
                                               "productData": {"categories": [{"id": 15}, {"id": outlet["id"]}]}})
    assert [c["name"] for c in updated["categories"]] == ["Outlet/Clearance", "Uncategorized"]
    listed = woo.data("woo_products_list", {"category": str(outlet["id"]), "perPage": 10})
    assert [p["id"] for p in listed] == [made["id"]]
    batch = woo.data("woo_products_batch_update", {"update": [{"id": made["id"], "stock_quantity": 3}]})
    assert batch["update"][0]["stock_quantity"] == 3
    order = woo.data("woo_orders_create", {"orderData": {"status": "processing", "line_items": [
        {"product_id": made["id"], "quantity": 2}]}})
    assert (order["status"], order["total"]) == ("processing", "60.00")
    found = woo.data("woo_orders_list", {"perPage": 100, "status": ["completed", "processing"]})
    assert order["id"] in [o["id"] for o in found]
    assert woo.data("woo_products_get", {"productId": made["id"]})["stock_quantity"] == 1
    note = woo.data("woo_orders_notes_create", {"orderId": order["id"], "note": "Packed", "customerNote": True})
    assert (note["note"], note["customer_note"]) == ("Packed", True)
    assert woo.data("woo_customers_list", {"perPage": 100}) == []  # no order named a customer
    as_string = woo.data("woo_products_update", {"productId": made["id"], "productData": '{"name": "Older Lamp"}'})
    assert as_string["name"] == "Older Lamp"  # a JSON string body is sent as is and still parses
    assert woo.data("woo_coupons_delete", {"couponId": woo.data("woo_coupons_create", {"couponData": {
        "code": "X5", "discount_type": "fixed_cart", "amount": "5"}})["id"]})["code"] == "x5"


def test_error_texts_are_the_references(woo):
    assert woo.error("woo_products_get", {}) == "Error: Product ID is required"
    assert woo.error("woo_products_get", {"productId": 0}) == "Error: Product ID is required"
    assert woo.error("woo_products_update", {"productId": 9}) == "Error: Product data is required"
    assert woo.error("woo_products_get", {"productId": 9999}) == NOT_FOUND.format("/products/9999")
    assert woo.error("woo_products_get", {"productId": 9.5}) == NOT_FOUND.format("/products/9.5")
    assert woo.error("woo_reports_stock", {}) == NOT_FOUND.format("/reports/stock")
    assert woo.error("woo_orders_notes_create", {"note": "x"}) == NOT_FOUND.format("/orders/undefined/notes")
    assert woo.error("woo_products_list", {"perPage": 500}) == \
        "Error: WooCommerce API error: Invalid parameter(s): per_page (Status: 400)"
    assert woo.error("woo_products_create", {"productData": {"name": "x", "regular_price": 5}}) == \
        "Error: WooCommerce API error: Invalid parameter(s): regular_price (Status: 400)"
    assert woo.error("woo_products_categories_create", {}) == \
        "Error: WooCommerce API error: Missing parameter(s): name (Status: 400)"
    assert woo.error("woo_products_update", {"productId": 9, "productData": "not json"}) == \
        "Error: WooCommerce API error: Invalid JSON body passed. (Status: 400)"
    assert woo.error("woo_shipping_zones_get", {"zoneId": 0}) == "Error: Zone ID is required"
    assert woo.error("woo_nope", {}) == "Error: Unknown tool: woo_nope"


def test_auth_unreachable_and_hung_servers_read_as_upstream(emu):
    with stand_in(emu.site, KEY, "cs_wrong") as wrong:
        assert wrong.error("woo_products_list", {}) == \
            "Error: WooCommerce API authentication failed. Please check your consumer key and secret."
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    hung = socket.socket()
    hung.bind(("127.0.0.1", 0))
    hung.listen(1)  # accepts the connection, never answers
    try:
        with stand_in(f"http://127.0.0.1:{port}/store85") as gone, \
                stand_in(f"http://127.0.0.1:{hung.getsockname()[1]}/store85", DECATHLON_WOOCOMMERCE_TIMEOUT="0.5") as slow:
            assert gone.error("woo_products_list", {}) == f"Error: connect ECONNREFUSED 127.0.0.1:{port}"
            assert slow.error("woo_system_status", {}) == "Error: timeout of 500ms exceeded"
    finally:
        hung.close()


def test_missing_environment_stops_before_speaking_mcp():
    proc = subprocess.run([sys.executable, "-m", "decathlon.standins.woocommerce"], cwd=REPO, capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO), "WORDPRESS_SITE_URL": "http://x"}, timeout=20)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == ("Error: Missing required environment variables:\n  - WOOCOMMERCE_CONSUMER_KEY\n"
                           "  - WOOCOMMERCE_CONSUMER_SECRET\n\n"
                           "Please set these environment variables before running the server.\n")
