"""Contract tests of the WordPress multisite + WooCommerce emulator (decathlon/emulators/woocommerce) over HTTP.

Each test starts its own emulator in-process (a background event loop, an ephemeral port, a pinned
clock), seeded from a users_data.json of made-up people written to a temporary task root, and talks
to it with httpx as the checkout's scripts and the woocommerce MCP server do: Basic auth with a
store's consumer key, JSON bodies, query filters, pagination headers, the login cookie and nonce
for media uploads. Expected bodies and statuses are WooCommerce 10.2's and WordPress 6.8's.
"""
from __future__ import annotations

import asyncio
import json
import signal
import struct
import subprocess
import sys
import threading
import zlib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

from lines import readline
from decathlon.emulators.directory import load_directory
from decathlon.emulators.woocommerce import RunningService, start
from decathlon.emulators.woocommerce.clock import ManualClock

REPO = Path(__file__).resolve().parents[1]
PEOPLE = [  # id, first, last, key suffix
    (81, "Tove", "Lindqvist", "tl81"), (85, "Ravi", "Okafor", "ro85"), (12, "Mina", "Serrano", "ms12"),
]
NO_ROUTE = {"code": "rest_no_route", "message": "No route was found matching the URL and request method.",
            "data": {"status": 404}}
PRODUCT_KEYS = [
    "id", "name", "slug", "permalink", "date_created", "date_created_gmt", "date_modified", "date_modified_gmt", "type",
    "status", "featured", "catalog_visibility", "description", "short_description", "sku", "price", "regular_price",
    "sale_price", "date_on_sale_from", "date_on_sale_from_gmt", "date_on_sale_to", "date_on_sale_to_gmt", "on_sale",
    "purchasable", "total_sales", "virtual", "downloadable", "downloads", "download_limit", "download_expiry",
    "external_url", "button_text", "tax_status", "tax_class", "manage_stock", "stock_quantity", "backorders",
    "backorders_allowed", "backordered", "low_stock_amount", "sold_individually", "weight", "dimensions",
    "shipping_required", "shipping_taxable", "shipping_class", "shipping_class_id", "reviews_allowed",
    "average_rating", "rating_count", "upsell_ids", "cross_sell_ids", "parent_id", "purchase_note", "categories",
    "brands", "tags", "images", "attributes", "default_attributes", "variations", "grouped_products", "menu_order",
    "price_html", "related_ids", "meta_data", "stock_status", "has_options", "post_password", "global_unique_id"]


def write_root(root: Path) -> Path:
    users = [{"id": i, "first_name": f, "last_name": last, "full_name": f"{f} {last}",
              "email": f"{f.lower()}.{last.lower()}@mcp.com",
              "password": f"pw{i}", "canvas_token": f"canvas_{k}", "woocommerce_consumer_key": f"ck_test_{k}",
              "woocommerce_consumer_secret": f"cs_test_{k}"} for i, f, last, k in PEOPLE]
    (root / "configs").mkdir(parents=True, exist_ok=True)
    (root / "configs" / "users_data.json").write_text(json.dumps({"domain": "mcp.com", "users": users}))
    return root


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


class Emulator:
    """One emulator on its own loop thread; `store(n)` gives an httpx client for /storeN with that store's key."""

    def __init__(self, root: Path) -> None:
        self.clock = ManualClock(datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc))
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        directory = load_directory(root)
        self.service: RunningService = asyncio.run_coroutine_threadsafe(
            start(directory, "127.0.0.1", {"http": 0}, clock=self.clock), self.loop).result(20)
        self.base = f"http://127.0.0.1:{self.service.ports['http']}"
        self.clients: list[httpx.Client] = []

    def client(self, **kw: Any) -> httpx.Client:
        client = httpx.Client(base_url=self.base, timeout=10, **kw)
        self.clients.append(client)
        return client

    def store(self, number: int, auth: tuple[str, str] | None = None) -> httpx.Client:
        suffix = next(k for i, _, _, k in PEOPLE if i == number)
        return self.client(auth=auth or (f"ck_test_{suffix}", f"cs_test_{suffix}"))

    def close(self) -> None:
        for client in self.clients:
            client.close()
        asyncio.run_coroutine_threadsafe(self.service.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture
def emu(tmp_path: Path):
    e = Emulator(write_root(tmp_path / "task"))
    yield e
    e.close()


def wc(n: int) -> str:
    return f"/store{n}/wp-json/wc/v3"


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, (response.status_code, response.text)
    return response.json()


def error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert body["code"] == code, body
    assert body["data"]["status"] == status
    return body


# --- routing, auth, isolation ----------------------------------------------------------------


def test_unknown_routes_and_methods_are_rest_no_route(emu):
    s = emu.store(85)
    assert ok(s.get(f"{wc(85)}/nothing"), 404) == NO_ROUTE
    assert ok(s.patch(f"{wc(85)}/products/categories/batch/x"), 404) == NO_ROUTE
    assert ok(s.put(f"{wc(85)}/products"), 404) == NO_ROUTE  # the collection has GET and POST only
    assert ok(emu.client().get("/store85/wp-json/wc/v3/nothing"), 404) == NO_ROUTE  # checked before any login


def test_an_oversized_body_and_our_own_bug_answer_as_wordpress_does(tmp_path, monkeypatch, capfd):
    from decathlon.emulators.woocommerce import service, web

    monkeypatch.setattr(service, "MAX_BODY", 1024)
    emu = Emulator(write_root(tmp_path / "task"))
    try:
        s = emu.store(85)
        big = s.post(f"{wc(85)}/products", content=b"x" * 4096, headers={"Content-Type": "application/json"})
        assert error(big, 413, "rest_upload_file_too_big")["message"] == "The uploaded file is too large."

        async def boom(*args: Any, **kwargs: Any) -> None:
            raise RuntimeError("secret-internal-detail")

        monkeypatch.setattr(web.Front, "_rest", boom)
        bug = s.get(f"{wc(85)}/products")
        body = error(bug, 500, "internal_server_error")
        assert "critical error" in body["message"] and "secret-internal-detail" not in bug.text
        assert "secret-internal-detail" in capfd.readouterr().err  # the traceback to the service's log only
        for response in (big, bug, s.get(f"{wc(85)}/nothing")):  # Apache and PHP name themselves on every answer
            assert (response.headers["Server"], response.headers["X-Powered-By"]) == \
                ("Apache/2.4.62 (Debian)", "PHP/8.2.29")
    finally:
        emu.close()


def test_wc_auth_basic_and_query_keys_and_failures(emu):
    anon = emu.client()
    assert error(anon.get(f"{wc(85)}/products"), 401, "woocommerce_rest_cannot_view")["message"] == \
        "Sorry, you cannot list resources."
    wrong_secret = emu.store(85, ("ck_test_ro85", "cs_nope"))
    assert error(wrong_secret.get(f"{wc(85)}/products"), 401, "woocommerce_rest_authentication_error")["message"] == \
        "Consumer secret is invalid."
    other_store = emu.store(81)  # a key that belongs to another store is unknown here
    error(other_store.get(f"{wc(85)}/products"), 401, "woocommerce_rest_cannot_view")
    error(other_store.post(f"{wc(85)}/products", json={"name": "x"}), 401, "woocommerce_rest_cannot_create")
    query = anon.get(f"{wc(85)}/products", params={"consumer_key": "ck_test_ro85", "consumer_secret": "cs_test_ro85"})
    assert ok(query) == []
    root = emu.client(auth=("ck_woocommerce_token_admin", "cs_woocommerce_token_admin"))
    assert ok(root.get("/wp-json/wc/v3/products")) == []
    error(root.get(f"{wc(85)}/products"), 401, "woocommerce_rest_cannot_view")


def test_a_fresh_store_numbers_like_a_fresh_wordpress(emu):
    s = emu.store(85)
    cats = ok(s.get(f"{wc(85)}/products/categories"))
    assert [(c["id"], c["name"], c["slug"], c["count"]) for c in cats] == [(15, "Uncategorized", "uncategorized", 0)]
    product = ok(s.post(f"{wc(85)}/products", json={"name": "Lamp", "regular_price": "12.50"}), 201)
    assert product["id"] == 9  # posts 1-8 are WordPress' and WooCommerce's own pages
    category = ok(s.post(f"{wc(85)}/products/categories", json={"name": "Lights"}), 201)
    assert category["id"] == 16
    order = ok(s.post(f"{wc(85)}/orders", json={"line_items": [{"product_id": 9, "quantity": 1}]}), 201)
    assert order["id"] == 10  # orders reserve their id in the same post sequence


def test_stores_are_isolated_and_two_instances_are_separate(emu, tmp_path):
    a, b = emu.store(85), emu.store(81)
    ok(a.post(f"{wc(85)}/products", json={"name": "Only in 85"}), 201)
    assert [p["name"] for p in ok(a.get(f"{wc(85)}/products"))] == ["Only in 85"]
    assert ok(b.get(f"{wc(81)}/products")) == []
    assert ok(b.post(f"{wc(81)}/products", json={"name": "Mine"}), 201)["id"] == 9
    other = Emulator(write_root(tmp_path / "other"))
    try:
        assert ok(other.store(85).get(f"{wc(85)}/products")) == []
    finally:
        other.close()


# --- products --------------------------------------------------------------------------------


def test_product_create_answers_in_edit_context_and_reads_in_view_context(emu):
    s = emu.store(85)
    created = s.post(f"{wc(85)}/products", json={
        "name": "Trail Shoe", "regular_price": "89.90", "description": "Light.\nFast.", "sku": "TS-1",
        "manage_stock": True, "stock_quantity": 4, "meta_data": [{"key": "origin", "value": 7}]})
    product = ok(created, 201)
    assert created.headers["Location"].endswith("/store85/wp-json/wc/v3/products/9")
    assert list(product)[:len(PRODUCT_KEYS)] == PRODUCT_KEYS
    assert list(product)[len(PRODUCT_KEYS):] == ["permalink_template", "generated_slug", "_links"]
    assert product["description"] == "Light.\nFast."
    assert product["average_rating"] == "0"
    assert product["permalink"] == "https://localhost:10003/store85/product/trail-shoe/"
    assert product["meta_data"] == [{"id": product["meta_data"][0]["id"], "key": "origin", "value": "7"}]
    assert (product["price"], product["stock_status"], product["categories"]) == \
        ("89.90", "instock", [{"id": 15, "name": "Uncategorized", "slug": "uncategorized"}])
    assert product["date_created"] == "2026-03-02T09:00:00"
    read = ok(s.get(f"{wc(85)}/products/9"))
    assert list(read) == PRODUCT_KEYS + ["_links"]
    assert read["description"] == "<p>Light.<br />\nFast.</p>\n"
    assert read["average_rating"] == "0.00"
    assert read["price_html"] == ('<span class="woocommerce-Price-amount amount"><bdi><span class='
                                  '"woocommerce-Price-currencySymbol">&#36;</span>89.90</bdi></span>')
    assert read["_links"]["self"][0]["targetHints"]["allow"] == ["GET", "POST", "PUT", "PATCH", "DELETE"]


def test_product_argument_validation_is_wordpress_shaped(emu):
    s = emu.store(85)
    body = error(s.post(f"{wc(85)}/products", json={"name": "x", "regular_price": 9.5}), 400, "rest_invalid_param")
    assert body["message"] == "Invalid parameter(s): regular_price"
    assert body["data"]["params"] == {"regular_price": "regular_price is not of type string."}
    assert body["data"]["details"]["regular_price"]["code"] == "rest_invalid_type"
    body = error(s.get(f"{wc(85)}/products", params={"per_page": 101}), 400, "rest_invalid_param")
    assert body["data"]["params"]["per_page"] == "per_page must be between 1 (inclusive) and 100 (inclusive)"
    body = error(s.get(f"{wc(85)}/products", params={"status": "gone"}), 400, "rest_invalid_param")
    assert body["data"]["params"]["status"] == \
        "status is not one of any, future, trash, draft, pending, private, and publish."
    raw = s.post(f"{wc(85)}/products", content=b'{"name": ', headers={"Content-Type": "application/json"})
    assert error(raw, 400, "rest_invalid_json")["message"] == "Invalid JSON body passed."
    assert ok(s.post(f"{wc(85)}/products", json={"name": "n", "stock_quantity": "3", "manage_stock": "true"}),
              201)["stock_quantity"] == 3  # numeric strings are integers to WordPress


def test_product_errors_trash_and_force(emu):
    s = emu.store(85)
    error(s.get(f"{wc(85)}/products/999"), 404, "woocommerce_rest_product_invalid_id")
    error(s.put(f"{wc(85)}/products/999", json={"name": "x"}), 400, "woocommerce_rest_product_invalid_id")
    error(s.get(f"{wc(85)}/products/1"), 404, "woocommerce_rest_product_invalid_id")  # post 1 is Hello world
    pid = ok(s.post(f"{wc(85)}/products", json={"name": "Mug", "sku": "MUG"}), 201)["id"]
    dup = error(s.post(f"{wc(85)}/products", json={"name": "Mug 2", "sku": "MUG"}), 400, "product_invalid_sku")
    assert dup["message"] == "Invalid or duplicated SKU." and dup["data"]["resource_id"] == pid
    bad_image = error(s.put(f"{wc(85)}/products/{pid}", json={"images": [{"id": 424242}]}), 400,
                      "woocommerce_product_invalid_image_id")
    assert bad_image["message"] == "#424242 is an invalid image ID."
    assert ok(s.delete(f"{wc(85)}/products/{pid}"))["status"] == "publish"  # the reply shows the product before
    assert [p["status"] for p in ok(s.get(f"{wc(85)}/products", params={"status": "trash"}))] == ["trash"]
    assert ok(s.get(f"{wc(85)}/products")) == []
    error(s.delete(f"{wc(85)}/products/{pid}"), 410, "woocommerce_rest_already_trashed")
    ok(s.delete(f"{wc(85)}/products/{pid}", params={"force": "true"}))
    error(s.get(f"{wc(85)}/products/{pid}"), 404, "woocommerce_rest_product_invalid_id")


def test_product_list_filters_order_and_pagination_headers(emu):
    s = emu.store(85)
    cat = ok(s.post(f"{wc(85)}/products/categories", json={"name": "Outdoor"}), 201)["id"]
    for n, (name, price, days) in enumerate([("Tent", "200", 3), ("Stove", "45", 1), ("Lantern", "30", 2)]):
        ok(s.post(f"{wc(85)}/products", json={
            "name": name, "regular_price": price, "sku": f"S{n}", "categories": [{"id": cat}] if n else [],
            "date_created": f"2026-02-2{days}T10:00:00", "status": "draft" if name == "Lantern" else "publish"}), 201)
    listed = s.get(f"{wc(85)}/products", params={"per_page": 2})
    assert [p["name"] for p in ok(listed)] == ["Tent", "Lantern"]  # newest date first
    assert (listed.headers["X-WP-Total"], listed.headers["X-WP-TotalPages"]) == ("3", "2")
    assert listed.headers["Link"] == ('<https://localhost:10003/store85/wp-json/wc/v3/products?per_page=2&page=2>; '
                                      'rel="next"')
    page2 = s.get(f"{wc(85)}/products", params={"per_page": 2, "page": 2})
    assert [p["name"] for p in ok(page2)] == ["Stove"] and 'rel="prev"' in page2.headers["Link"]
    assert ok(s.get(f"{wc(85)}/products", params={"per_page": 2, "page": 9})) == []
    assert [p["name"] for p in ok(s.get(f"{wc(85)}/products", params={"orderby": "title", "order": "asc"}))] == \
        ["Lantern", "Stove", "Tent"]
    assert [p["name"] for p in ok(s.get(f"{wc(85)}/products", params={"status": "publish"}))] == ["Tent", "Stove"]
    assert [p["name"] for p in ok(s.get(f"{wc(85)}/products", params={"category": str(cat)}))] == ["Lantern", "Stove"]
    assert [p["name"] for p in ok(s.get(f"{wc(85)}/products", params={"sku": "S1"}))] == ["Stove"]
    assert [p["name"] for p in ok(s.get(f"{wc(85)}/products", params={"search": "ove"}))] == ["Stove"]
    assert [p["name"] for p in ok(s.get(f"{wc(85)}/products", params={"search": "S1"}))] == []  # not a SKU search
    assert [p["name"] for p in ok(s.get(f"{wc(85)}/products", params={"min_price": "40", "max_price": "100"}))] == \
        ["Stove"]
    assert ok(s.get(f"{wc(85)}/products", params={"_fields": "id,name", "include": "9"})) == [{"id": 9, "name": "Tent"}]


def test_sales_and_meta_keys_woocommerce_owns(emu):
    s = emu.store(85)
    emu.clock.moment = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
    product = ok(s.post(f"{wc(85)}/products", json={
        "name": "Cap", "regular_price": "20.00", "sale_price": "15.00", "date_on_sale_to": "2026-03-10T00:00:00",
        "meta_data": [{"key": "total_sales", "value": "12"}, {"key": "_total_sales", "value": "12"},
                      {"key": "_sales_last_30_days", "value": "3"}]}), 201)
    assert (product["price"], product["on_sale"], product["total_sales"]) == ("15.00", True, 12)
    assert [m["key"] for m in product["meta_data"]] == ["_sales_last_30_days"]
    assert product["price_html"].startswith('<del aria-hidden="true">')
    assert "Current price is: &#036;15.00." in product["price_html"]
    emu.clock.advance(30 * 86400)
    assert ok(s.get(f"{wc(85)}/products/{product['id']}"))["on_sale"] is False


def test_batch_runs_each_item_and_casts_delete_entries_like_php(emu):
    s = emu.store(85)
    result = ok(s.post(f"{wc(85)}/products/batch", json={
        "create": [{"name": "A", "regular_price": 5}, {"name": "B"}],  # batch items skip validation, as upstream
        "update": [{"id": 404, "name": "ghost"}]}))
    assert [p["name"] for p in result["create"]] == ["A", "B"] and result["create"][0]["price"] == "5"
    assert result["update"] == [{"id": 404, "error": {"code": "woocommerce_rest_product_invalid_id",
                                                      "message": "Invalid ID.", "data": {"status": 400}}}]
    a, b = result["create"][0]["id"], result["create"][1]["id"]
    deleted = ok(s.post(f"{wc(85)}/products/batch", json={"delete": [{"id": a}, b]}))
    # (int) of {"id": a} is 1, and post 1 is no product: only b is deleted.
    assert deleted["delete"][0]["id"] == 1 and deleted["delete"][0]["error"]["code"] == "woocommerce_rest_product_invalid_id"
    assert deleted["delete"][1]["id"] == b
    assert [p["id"] for p in ok(s.get(f"{wc(85)}/products"))] == [a]
    too_many = {"update": [{"id": a}] * 101}
    error(s.post(f"{wc(85)}/products/batch", json=too_many), 413, "woocommerce_rest_request_entity_too_large")


def test_variable_product_variations_and_parent_sync(emu):
    s = emu.store(85)
    attr = ok(s.post(f"{wc(85)}/products/attributes", json={"name": "Color"}), 201)
    assert attr["slug"] == "pa_color"
    for name in ("Red", "Blue"):
        ok(s.post(f"{wc(85)}/products/attributes/{attr['id']}/terms", json={"name": name}), 201)
    parent = ok(s.post(f"{wc(85)}/products", json={
        "name": "Sneaker", "type": "variable", "attributes": [{"id": attr["id"], "variation": True, "visible": True,
                                                               "options": ["Red", "Blue"]}]}), 201)
    assert parent["attributes"][0]["options"] == ["Blue", "Red"] and parent["stock_status"] == "outofstock"
    base = f"{wc(85)}/products/{parent['id']}/variations"
    red = ok(s.post(base, json={"regular_price": "30.00", "attributes": [{"id": attr["id"], "option": "Red"}],
                                "manage_stock": True, "stock_quantity": 3}), 201)
    ok(s.post(base, json={"regular_price": "25.00", "attributes": [{"id": attr["id"], "option": "Blue"}]}), 201)
    assert red["attributes"] == [{"id": attr["id"], "name": "Color", "option": "Red"}]
    assert red["permalink"].endswith("/product/sneaker/?attribute_pa_color=red")
    again = ok(s.get(f"{wc(85)}/products/{parent['id']}"))
    assert (again["price"], again["stock_status"], len(again["variations"]), again["has_options"]) == \
        ("25.00", "instock", 2, True)
    assert "Price range: &#36;25.00 through &#36;30.00" in again["price_html"]
    listed = s.get(base)
    assert listed.headers["X-WP-Total"] == "2"
    error(s.get(f"{base}/{parent['id']}"), 404, "woocommerce_rest_product_variation_invalid_id")


def test_categories_tags_and_terms(emu):
    s = emu.store(85)
    for name in ("Zebra", "Apple"):
        ok(s.post(f"{wc(85)}/products/categories", json={"name": name}), 201)
    assert [c["name"] for c in ok(s.get(f"{wc(85)}/products/categories"))] == ["Apple", "Uncategorized", "Zebra"]
    dup = error(s.post(f"{wc(85)}/products/categories", json={"name": "apple"}), 400, "term_exists")
    assert dup["data"]["resource_id"] == 17
    error(s.post(f"{wc(85)}/products/categories", json={}), 400, "rest_missing_callback_param")
    assert ok(s.post(f"{wc(85)}/products/categories", json={"name": "Outlet/Clearance"}), 201)["slug"] == "outlet-clearance"
    error(s.delete(f"{wc(85)}/products/categories/16"), 501, "woocommerce_rest_trash_not_supported")
    error(s.delete(f"{wc(85)}/products/categories/15", params={"force": "true"}), 500, "woocommerce_rest_cannot_delete")
    assert ok(s.delete(f"{wc(85)}/products/categories/16", params={"force": "true"}))["name"] == "Zebra"
    error(s.get(f"{wc(85)}/products/categories/16"), 404, "woocommerce_rest_term_invalid")
    tagged = ok(s.post(f"{wc(85)}/products", json={"name": "T", "tags": [{"name": "summer"}]}), 201)
    assert [t["name"] for t in tagged["tags"]] == ["summer"]
    assert [(t["name"], t["count"]) for t in ok(s.get(f"{wc(85)}/products/tags"))] == [("summer", 1)]
    error(s.get(f"{wc(85)}/products/attributes/5/terms"), 404, "woocommerce_rest_taxonomy_invalid")


# --- orders, customers, coupons --------------------------------------------------------------


def test_orders_reduce_stock_count_sales_and_note_it(emu):
    s = emu.store(85)
    pid = ok(s.post(f"{wc(85)}/products", json={"name": "Desk", "regular_price": "100.00", "sku": "DESK",
                                                 "manage_stock": True, "stock_quantity": 5}), 201)["id"]
    order = ok(s.post(f"{wc(85)}/orders", json={
        "status": "completed", "customer_id": 1, "payment_method": "bacs",
        "line_items": [{"product_id": pid, "quantity": 2}, {"product_id": 999, "name": "Gone", "quantity": 1, "total": "9.50"}],
        "shipping_lines": [{"method_id": "flat_rate", "method_title": "Flat", "total": "10.00"}],
        "meta_data": [{"key": "test_order", "value": "true"}]}), 201)
    assert (order["total"], order["shipping_total"], order["billing"]["email"]) == ("219.50", "10.00", "woocommerce@mcp.com")
    assert order["date_paid"] == order["date_completed"] == "2026-03-02T09:00:00"
    assert order["line_items"][0]["meta_data"][0]["key"] == "_reduced_stock"
    assert (order["line_items"][0]["price"], order["line_items"][1]["product_id"]) == (100.0, 0)
    assert order["line_items"][1]["image"] == {"id": 0, "src": ""}
    assert order["order_key"].startswith("wc_order_") and len(order["order_key"]) == 22
    product = ok(s.get(f"{wc(85)}/products/{pid}"))
    assert (product["stock_quantity"], product["total_sales"]) == (3, 2)
    notes = [n["note"] for n in ok(s.get(f"{wc(85)}/orders/{order['id']}/notes"))]
    assert notes == ["Order status changed from Pending payment to Completed.", "Stock levels reduced: Desk (DESK) 5&rarr;3"]
    customers = ok(s.get(f"{wc(85)}/customers"))  # the admin became this store's customer through the order
    assert [(c["id"], c["username"], c["role"], c["is_paying_customer"]) for c in customers] == \
        [(1, "mcpwoocommerce", "customer", True)]
    ok(s.put(f"{wc(85)}/orders/{order['id']}", json={"status": "cancelled"}))
    assert ok(s.get(f"{wc(85)}/products/{pid}"))["stock_quantity"] == 5


def test_order_list_filters_and_errors(emu):
    s = emu.store(85)
    for status in ("processing", "on-hold", "completed"):
        ok(s.post(f"{wc(85)}/orders", json={"status": status}), 201)
        emu.clock.advance(60)
    by_status = s.get(f"{wc(85)}/orders?status[]=completed&status[]=processing")
    assert [o["status"] for o in ok(by_status)] == ["completed", "processing"]
    assert [o["status"] for o in ok(s.get(f"{wc(85)}/orders", params={"status": "on-hold"}))] == ["on-hold"]
    assert [o["status"] for o in ok(s.get(f"{wc(85)}/orders", params={"order": "asc", "per_page": 1}))] == ["processing"]
    error(s.get(f"{wc(85)}/orders", params={"status": "shipped"}), 400, "rest_invalid_param")
    error(s.get(f"{wc(85)}/orders/3"), 404, "woocommerce_rest_shop_order_invalid_id")
    error(s.post(f"{wc(85)}/orders", json={"customer_id": 4242}), 400, "woocommerce_rest_invalid_customer_id")
    error(s.post(f"{wc(85)}/orders", json={"line_items": [{"quantity": 1}]}), 400,
          "woocommerce_rest_required_product_reference")


def test_refunds_and_customer_rules(emu):
    s = emu.store(85)
    pid = ok(s.post(f"{wc(85)}/products", json={"name": "Book", "regular_price": "40.00"}), 201)["id"]
    oid = ok(s.post(f"{wc(85)}/orders", json={"status": "processing", "line_items": [{"product_id": pid}]}), 201)["id"]
    error(s.post(f"{wc(85)}/orders/{oid}/refunds", json={"amount": "50.00", "api_refund": False}), 500,
          "woocommerce_rest_cannot_create_order_refund")
    refund = ok(s.post(f"{wc(85)}/orders/{oid}/refunds", json={"amount": "40.00", "reason": "torn", "api_refund": False}), 201)
    order = ok(s.get(f"{wc(85)}/orders/{oid}"))
    assert order["status"] == "refunded" and order["refunds"] == [{"id": refund["id"], "reason": "torn", "total": "-40.00"}]
    created = ok(s.post(f"{wc(85)}/customers", json={"email": "lea.moss@example.com", "first_name": "Lea",
                                                      "billing": {"city": "Oslo"}}), 201)
    assert (created["username"], created["role"], created["billing"]["city"]) == ("lea.moss", "customer", "Oslo")
    error(s.post(f"{wc(85)}/customers", json={"email": "lea.moss@example.com"}), 400, "registration-error-email-exists")
    error(emu.store(81).post(f"{wc(81)}/customers", json={"email": "lea.moss@example.com"}), 400,
          "registration-error-email-exists")  # users are network-wide
    listed = ok(s.get(f"{wc(85)}/customers", params={"email": "lea.moss@example.com"}))
    assert [c["id"] for c in listed] == [created["id"]] and "meta_data" not in listed[0]
    assert ok(emu.store(81).get(f"{wc(81)}/customers")) == []
    error(s.delete(f"{wc(85)}/customers/{created['id']}"), 501, "woocommerce_rest_trash_not_supported")
    ok(s.delete(f"{wc(85)}/customers/{created['id']}", params={"force": "true"}))
    coupon = ok(s.post(f"{wc(85)}/coupons", json={"code": "SPRING10", "discount_type": "percent", "amount": "10"}), 201)
    assert (coupon["code"], coupon["amount"]) == ("spring10", "10.00")
    error(s.post(f"{wc(85)}/coupons", json={"code": "spring10"}), 400, "woocommerce_rest_coupon_code_already_exists")


def test_reports_settings_and_system_endpoints_answer(emu):
    s = emu.store(85)
    pid = ok(s.post(f"{wc(85)}/products", json={"name": "Pen", "regular_price": "2.00"}), 201)["id"]
    ok(s.post(f"{wc(85)}/orders", json={"status": "completed", "line_items": [{"product_id": pid, "quantity": 3}]}), 201)
    sales = ok(s.get(f"{wc(85)}/reports/sales", params={"period": "week"}))[0]
    assert (sales["total_sales"], sales["total_orders"], sales["total_items"]) == ("6.00", 1, 3)
    assert ok(s.get(f"{wc(85)}/reports/top_sellers"))[0]["quantity"] == 3
    assert ok(s.get(f"{wc(85)}/reports/stock"), 404) == NO_ROUTE  # upstream has no stock report either
    assert any(o["id"] == "woocommerce_currency" and o["value"] == "USD" for o in ok(s.get(f"{wc(85)}/settings/general")))
    assert [g["id"] for g in ok(s.get(f"{wc(85)}/payment_gateways"))] == ["bacs", "cheque", "cod"]
    assert ok(s.get(f"{wc(85)}/system_status"))["environment"]["version"] == "10.2.2"
    assert ok(s.put(f"{wc(85)}/system_status/tools/clear_transients"))["success"] is True
    error(s.put(f"{wc(85)}/system_status/tools/nope"), 404, "woocommerce_rest_system_status_tool_invalid_id")
    assert ok(s.get(f"{wc(85)}/shipping/zones"))[0]["id"] == 0
    assert [c["slug"] for c in ok(s.get(f"{wc(85)}/taxes/classes"))] == ["standard", "reduced-rate", "zero-rate"]
    ok(s.post(f"{wc(85)}/webhooks", json={"topic": "order.created", "delivery_url": "https://example.com/h"}), 201)


# --- WordPress: login, nonce, media, posts ---------------------------------------------------


def login(emu: Emulator, store: int) -> httpx.Client:
    browser = emu.client(follow_redirects=True)
    assert browser.get(f"/store{store}/wp-login.php").status_code == 200
    page = browser.post(f"/store{store}/wp-login.php", data={"log": "mcpwoocommerce", "pwd": "mcpwoocommerce",
                                                             "redirect_to": f"/store{store}/wp-admin/", "testcookie": "1"})
    assert page.status_code == 200 and "Dashboard" in page.text
    nonce = browser.get(f"/store{store}/wp-admin/admin-ajax.php", params={"action": "rest-nonce"}).text
    browser.headers["X-WP-Nonce"] = nonce
    return browser


def test_cookie_login_then_raw_media_upload_as_the_update_cover_preprocess_does(emu):
    anon = emu.client()
    assert anon.get("/store85/wp-admin/").status_code == 302
    assert anon.get("/store85/wp-admin/admin-ajax.php", params={"action": "rest-nonce"}).text == "0"
    wrong = anon.post("/store85/wp-login.php", data={"log": "mcpwoocommerce", "pwd": "nope"})
    assert wrong.status_code == 200 and "is incorrect" in wrong.text
    browser = login(emu, 85)
    upload = browser.post("/store85/wp-json/wp/v2/media", content=png(400, 400),
                          headers={"Content-Disposition": 'attachment; filename="test_image_red.png"',
                                   "Content-Type": "image/png"})
    media = ok(upload, 201)
    assert (media["id"], media["title"]["raw"], media["mime_type"], media["media_details"]["width"]) == \
        (9, "test_image_red", "image/png", 400)
    assert media["source_url"] == "http://localhost:10003/store85/wp-content/uploads/sites/3/2026/03/test_image_red.png"
    assert sorted(media["media_details"]["sizes"]) == ["full", "medium", "thumbnail", "woocommerce_gallery_thumbnail",
                                                       "woocommerce_thumbnail"]
    assert emu.client().get("/store85/wp-content/uploads/sites/3/2026/03/test_image_red.png").content == png(400, 400)
    s = emu.store(85)
    product = ok(s.post(f"{wc(85)}/products", json={"name": "Pic", "images": [{"id": media["id"]}]}), 201)
    image = product["images"][0]
    assert image["srcset"].endswith("test_image_red-100x100.png 100w") and image["sizes"] == "(max-width: 400px) 100vw, 400px"
    assert image["thumbnail"].endswith("test_image_red-300x300.png") and image["src"].startswith("https://")
    listed = browser.get("/store85/wp-json/wp/v2/media", params={"media_type": "image", "per_page": 100})
    assert [m["id"] for m in ok(listed)] == [9]
    error(browser.delete("/store85/wp-json/wp/v2/media/9"), 501, "rest_trash_not_supported")
    assert ok(browser.delete("/store85/wp-json/wp/v2/media/9", params={"force": "true"}))["deleted"] is True
    error(browser.post("/store85/wp-json/wp/v2/media", content=b"abc"), 400, "rest_upload_no_content_disposition")
    bad_nonce = emu.client(cookies=browser.cookies, headers={"X-WP-Nonce": "0000000000"})
    error(bad_nonce.get("/store85/wp-json/wp/v2/users/me"), 403, "rest_cookie_invalid_nonce")


def test_wp_posts_anonymous_reads_and_authorized_writes(emu):
    anon = emu.client()
    posts = ok(anon.get("/store85/wp-json/wp/v2/posts"))
    assert [(p["id"], p["title"]["rendered"], p["categories"]) for p in posts] == [(1, "Hello world!", [1])]
    error(anon.get("/store85/wp-json/wp/v2/posts", params={"status": "any"}), 401, "rest_forbidden_status")
    error(anon.delete("/store85/wp-json/wp/v2/posts/1", params={"force": "true"}), 401, "rest_cannot_delete")
    keyed = emu.store(85)  # WooCommerce keys are no login for WordPress' own routes
    error(keyed.post("/store85/wp-json/wp/v2/posts", json={"title": "x"}), 401, "rest_cannot_create")
    browser = login(emu, 85)
    post = ok(browser.post("/store85/wp-json/wp/v2/posts",
                           json={"title": "Promotion", "content": "Deals", "status": "publish"}), 201)
    assert (post["id"], post["content"]["rendered"], post["slug"]) == (9, "<p>Deals</p>\n", "promotion")
    assert ok(browser.delete(f"/store85/wp-json/wp/v2/posts/{post['id']}"))["status"] == "trash"
    assert ok(browser.delete(f"/store85/wp-json/wp/v2/posts/{post['id']}", params={"force": "true"}))["deleted"] is True
    via_query = anon.get("/store85/", params={"rest_route": "/wp/v2/posts/1"})
    assert ok(via_query)["slug"] == "hello-world"


def test_json_is_written_like_php_and_odd_input_never_gives_a_traceback(emu):
    s = emu.store(85)
    raw = s.post(f"{wc(85)}/products", json={"name": "Café/Bar"}).content
    assert b'"name":"Caf\\u00e9\\/Bar"' in raw and b"https:\\/\\/localhost:10003" in raw
    odd_bodies = [{"categories": "x"}, {"images": [None, 5, "a"]}, {"meta_data": [1, {"value": 2}]},
                  {"attributes": [{"id": "abc", "options": "a|b"}]}, {"type": "variable", "default_attributes": [1]},
                  {"dimensions": {"length": 3}}, {"date_created": "yesterday"}, {"tags": [{"name": ""}, 3]}]
    for body in odd_bodies:
        for response in (s.post(f"{wc(85)}/products", json=body), s.post(f"{wc(85)}/products/batch", json={"create": [body]})):
            assert response.status_code < 500, (body, response.text)
            assert "Traceback" not in response.text
    for body in ({"line_items": [{"product_id": "x"}]}, {"line_items": "nope"}, {"billing": [1, 2]},
                 {"coupon_lines": [{"code": "missing"}]}, {"status": "wc-completed"}):
        assert s.post(f"{wc(85)}/orders", json=body).status_code < 500
        assert s.post(f"{wc(85)}/orders/batch", json={"create": [body]}).status_code < 500


def test_main_prints_ready_and_stops_cleanly_on_sigterm(tmp_path):
    root = write_root(tmp_path / "task")
    proc = subprocess.Popen([sys.executable, "-m", "decathlon.emulators.woocommerce", "--root", str(root), "--port", "http=0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
                            env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    try:
        line = readline(proc).decode()
        name, ports = line.split(" ", 2)[1:]
        assert line.startswith("ready woocommerce ") and name == "woocommerce"
        port = json.loads(ports)["http"]
        assert httpx.get(f"http://127.0.0.1:{port}/store85/wp-json/wc/v3/products",
                         auth=("ck_test_ro85", "cs_test_ro85")).json() == []
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    missing = subprocess.run([sys.executable, "-m", "decathlon.emulators.woocommerce", "--root", str(tmp_path / "none")],
                             capture_output=True, text=True, cwd=REPO, env={"PYTHONPATH": str(REPO)}, timeout=20)
    assert missing.returncode == 2 and "users_data.json is missing" in missing.stderr and missing.stdout == ""
