"""The WooCommerce emulator against WooCommerce's own recorded answers (decathlon.emulators.fidelity.woocommerce):
every recorded run's `woocommerce-*` calls replayed in order through the stand-in's tool functions on a fresh
emulator seeded with what the run showed, each answer compared with the recorded one. The runs are read where they
lie, never copied. The rebuild rules are also checked on runs of our own making, whose answers the emulator itself
gave (so they hold without the recorded runs)."""
from __future__ import annotations

import asyncio
import contextlib
import io
import json
from typing import Any

import pytest

from fidelity_gaps import assert_only_known_gaps, replayed

from decathlon.emulators.fidelity import known_gaps, woocommerce
from decathlon.emulators.fidelity.recorded import Exchange
from decathlon.emulators.fidelity.woocommerce_seed import loads, shown, stored_text


@pytest.fixture(scope="module")
def cases() -> list[woocommerce.Case]:
    return replayed("woocommerce", woocommerce.replay)


def test_listings_and_writes_on_rebuilt_products_orders_and_customers_are_woocommerces(
        cases: list[woocommerce.Case]) -> None:
    """Products (prices, stock, categories, meta ids), orders (their line items' unrounded prices), customers and
    categories the runs showed whole read as WooCommerce's did, and the runs' writes on them answer as it did."""
    content = [c for c in cases if c.how == "content"]
    assert len(content) >= 20, [c.exchange.name for c in content]
    tools = {c.exchange.tool for c in content}
    assert {"woocommerce-woo_products_list", "woocommerce-woo_orders_list", "woocommerce-woo_customers_list",
            "woocommerce-woo_products_update", "woocommerce-woo_products_batch_update",
            "woocommerce-woo_products_categories_create"} <= tools, tools
    wrong = {c.exchange.name: c.diff() for c in content if c.verdict != "agreed"}
    assert not wrong, wrong


def test_no_replayed_call_disagrees_but_the_known_gaps(cases: list[woocommerce.Case]) -> None:
    assert_only_known_gaps(cases, known_gaps.WOOCOMMERCE)


# ---- the rebuild rules, on runs of our own making --------------------------------------------------------------

P = "woocommerce-"
CUT = "\n\n... is too long! Only the first 100 characters are shown here"


def _run(*calls: tuple[str, dict[str, Any], str]) -> list[Exchange]:
    return [Exchange("t", i, P + tool, args, answer) for i, (tool, args, answer) in enumerate(calls)]


def _store_answers(*calls: tuple[str, dict[str, Any]]) -> list[str]:
    """What the emulator itself answers to `calls` on store 81 (the run's `recorded` answers in these tests)."""
    from decathlon.emulators.fidelity.woocommerce_seed import directory, replay_key
    from decathlon.emulators.woocommerce.service import start
    from decathlon.standins.woocommerce.client import WooClient
    from decathlon.standins.woocommerce.server import call

    async def go() -> list[str]:
        service = await start(directory(), "127.0.0.1", {"http": 0})
        try:
            client = WooClient(f"http://127.0.0.1:{service.ports['http']}/store81", *replay_key(81))
            with contextlib.redirect_stderr(io.StringIO()):
                return [(await call(client, tool, args))[0] for tool, args in calls]
        finally:
            await service.close()
    return asyncio.run(go())


@pytest.fixture(scope="module")
def made() -> list[str]:
    """A store with two products (one in a category of its own), then its listing, one product and the category."""
    return _store_answers(
        ("woo_products_categories_create", {"categoryData": {"name": "Lamps"}}),
        ("woo_products_create", {"productData": {"name": "Desk Lamp", "regular_price": "20.00", "sku": "L1",
                                                 "description": "A lamp.\n\nBright.", "categories": [{"id": 16}],
                                                 "manage_stock": True, "stock_quantity": 4,
                                                 "meta_data": [{"key": "origin", "value": "shed \"B\""}]}}),
        ("woo_products_create", {"productData": {"name": "Chair", "regular_price": "35.50"}}),
        ("woo_products_list", {"perPage": 10}),
        ("woo_products_get", {"productId": 9}),
        ("woo_products_categories_list", {}))


def test_an_answer_without_backslashes_is_read_back_and_a_description_recovered(made: list[str]) -> None:
    listing = loads(made[3])
    assert [p["name"] for p in listing] == ["Chair", "Desk Lamp"]
    lamp = listing[1]
    assert lamp["meta_data"][0]["value"] == 'shed "B"'  # the quotes the stand-in printed unescaped
    assert stored_text(lamp["description"]) == "A lamp.\n\nBright."
    assert shown("a\nb") == "anb"


def test_products_shown_whole_are_rebuilt_with_their_ids_and_agree(made: list[str]) -> None:
    calls = _run(("woo_products_list", {"perPage": 10}, made[3]),
                 ("woo_products_get", {"productId": 9}, made[4]),
                 ("woo_products_update", {"productId": 10, "productData": {"regular_price": "30.00"}}, "{}"),
                 ("woo_products_categories_create", {"categoryData": {"name": "Desks"}}, "{}"))
    seen = woocommerce.rebuild(calls)
    assert sorted(seen.products) == [9, 10] and seen.store == 81 and seen.store_complete
    assert seen.category_refs[16]["name"] == "Lamps"
    got = woocommerce.replay_calls(calls)
    assert [(c.verdict, c.how) for c in got[:2]] == [("agreed", "content"), ("agreed", "content")], \
        [c.diff() for c in got[:2]]
    update = loads(got[2].emulated)
    assert update["id"] == 10 and update["price"] == "30.00"
    assert loads(got[3].emulated)["id"] == 17  # the first term id after the largest the run showed (16)


def test_an_answer_that_differs_from_the_emulators_disagrees(made: list[str]) -> None:
    wrong_price = made[4].replace('"regular_price": "20.00"', '"regular_price": "21.00"', 1)
    assert wrong_price != made[4]
    got = woocommerce.replay_calls(_run(("woo_products_get", {"productId": 9}, made[4]),
                                        ("woo_products_list", {"perPage": 10}, made[3])))
    assert [c.verdict for c in got] == ["agreed", "agreed"]
    judge = woocommerce.Judge(woocommerce.rebuild(_run(("woo_products_get", {"productId": 9}, wrong_price))),
                              "2999-01-01T00:00:00")
    case = judge(Exchange("t", 0, P + "woo_products_get", {"productId": 9}, wrong_price), made[4])
    assert case.verdict == "disagreed" and "21.00" in case.diff()


def test_drawn_values_and_the_replays_own_times_are_not_compared(made: list[str]) -> None:
    chair = loads(made[3])[0]
    judge = woocommerce.Judge(woocommerce.rebuild(_run(("woo_products_list", {"perPage": 10}, made[3]))),
                              "2030-01-01T00:00:00")
    other = dict(chair, related_ids=[99, 98], date_modified="2030-01-01T00:00:05")
    assert judge.same(chair, other)
    assert not judge.same(chair, dict(chair, date_modified="2029-12-31T23:59:59"))  # a seeded time is compared
    assert not judge.same(chair, dict(chair, related_ids="99"))  # its type still is


def test_what_the_run_did_not_show_whole_cannot_be_rebuilt(made: list[str]) -> None:
    lamp = loads(made[4])
    variable = json.dumps(dict(lamp, id=30, type="variable", variations=[31, 32]), indent=2)
    calls = _run(("woo_products_list", {"perPage": 100}, made[3][:100] + CUT),  # cut by the recorder
                 ("woo_products_update", {"productId": 9, "productData": {"sku": "L2"}}, made[4]),
                 ("woo_products_get", {"productId": 9}, made[4]),  # first shown after the write
                 ("woo_products_get", {"productId": 30}, variable))
    seen = woocommerce.rebuild(calls)
    assert 9 not in seen.products and 30 in seen.unrebuilt and not seen.store_complete
    judge = woocommerce.Judge(seen, "2999-01-01T00:00:00")
    got = [judge(ex, ex.answer) for ex in calls]
    assert [c.verdict for c in got] == ["cannot-rebuild"] * 4
    assert "cut" in got[0].how and "never shown whole" in got[1].how and "variable" in got[3].how


def test_an_order_naming_an_unseen_product_cannot_be_rebuilt() -> None:
    order = json.dumps([{"id": 40, "date_created": "2025-01-02T00:00:00",
                         "line_items": [{"id": 1, "product_id": 12, "variation_id": 0}]}])
    calls = _run(("woo_orders_list", {}, order))
    judge = woocommerce.Judge(woocommerce.rebuild(calls), "2999-01-01T00:00:00")
    case = judge(calls[0], order)
    assert case.verdict == "cannot-rebuild" and "product 12" in case.how


def test_an_error_is_judged_by_its_text() -> None:
    judge = woocommerce.Judge(woocommerce.rebuild([]), "2999-01-01T00:00:00")
    ex = Exchange("t", 0, P + "woo_products_get", {}, "Error: Product ID is required")
    assert judge(ex, "Error: Product ID is required").verdict == "agreed"
    assert judge(ex, "Error: WooCommerce API error: Invalid ID. (Status: 400)").verdict == "disagreed"
    assert judge(ex, "[]").verdict == "disagreed"


def test_products_of_one_creation_second_are_compared_in_id_order() -> None:
    a, b, c = ({"id": i, "date_created": d} for i, d in ((9, "2025-01-02T00:00:00"), (10, "2025-01-02T00:00:00"),
                                                         (8, "2025-01-01T00:00:00")))
    assert woocommerce.ties_by_id([b, a, c]) == woocommerce.ties_by_id([a, b, c]) == [a, b, c]
    assert woocommerce.ties_by_id([c, a, b]) == [c, a, b]  # only ties move: a wrong date order still shows
