"""The WooCommerce emulator against WooCommerce's own recorded answers: each recorded run's `woocommerce-*` calls
replayed in order through the stand-in's tool functions (decathlon.standins.woocommerce, `server.call`: the text an
agent is shown) on a fresh emulator of its own, seeded with what the run showed of the store it met, and each answer
compared with the one the model was shown. The stand-in and the emulator are both this project's Python and its
virtualenv holds both (aiohttp, httpx), so the emulator runs in the replay's own process, on a free port, reached as
the stand-in reaches it in an episode (`<site>/storeNN/wp-json/wc/v3`, Basic auth, so https links to
localhost:10003 as upstream's site gives them).

What a run shows, and so what is rebuilt (woocommerce_seed.py writes it in the emulator's seed format, ids exact):
- the store: the `/storeNN` its answers' links name (a run whose answers name none met an empty store, and any store
  of the deployment answers as one);
- products, orders, customers, product categories: each as the first answer printing it whole showed it, before the
  run wrote to it (a product's first sight in a write's answer is not the state the run met); a listing the recorder
  cut ("is too long! Only the first … characters") shows nothing whole. A category a product only names gets its
  name and slug; an image a product shows becomes its attachment (file, title, alt, dates; its pixel width from
  `sizes`);
- the next ids: after the largest id the run showed, so the run's own creations get theirs.
What cannot be rebuilt, and so makes every call that prints it "cannot rebuild", with why: a variable product (its
variations are only referenced: their prices make its `price_html`), a product whose shown description is no
`wpautop` of a text we can recover, a product with a global attribute (its terms are never listed), a product the
run wrote to before any answer showed it whole, an order whose line item names a product the run never showed whole
(the item's `sku` and `image` are read from it), and a category the run only saw named (its description, image and
count). An order's line keeps its total unrounded, as WooCommerce does (`price` shows it).

How an answer is judged: an error against an error by its text, exactly; an error against a result disagrees;
results by shape and content: the same JSON (the same keys in the same order, the same value types), the same values,
but for:
- `related_ids`: WooCommerce draws them (`wc_get_related_products` shuffles the candidates);
- times of the replay itself: a timestamp the emulator wrote during the replay (at or after the replay clock's start,
  which is after every time the run showed) stands for WooCommerce's clock at that call and matches any timestamp;
- a category's `count` where the run never showed every product of the store (it counts the unseen ones too);
- in a listing by date, the order among objects of one shown creation second (compared in id order): WordPress orders
  them by post_date, then id, and no answer shows post_date (`date_created` is read from post_date_gmt; one run's
  three products of one second came in ascending id order).
Answers are read back as JSON line by line (see woocommerce_seed.loads: the stand-in, as upstream, removes every
backslash from its JSON, so a quote in a string is bare); a diff is of the texts.
"""
from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import io
import itertools
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from decathlon.emulators.fidelity.recorded import Case as BaseCase, Exchange, exchanges
from decathlon.emulators.fidelity.woocommerce_seed import Seen, build, loads, replay_key, stored_text, write

PREFIX = "woocommerce-"
TRUNCATED = re.compile(r"is too long! Only the first (\d+) characters are shown here")
STORE = re.compile(r"//localhost:10003/store(\d+)/")
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$")
DRAWN = {"related_ids"}
DATED_LISTINGS = {"woo_products_list", "woo_orders_list"}
PRODUCT_WRITES = {"woo_products_update", "woo_products_delete"}
READS = {"woo_products_list", "woo_products_get", "woo_products_categories_list", "woo_orders_list",
         "woo_orders_get", "woo_customers_list", "woo_customers_get"}


class Case(BaseCase):
    def lines(self, text: str) -> list[str]:
        return text.splitlines()


def tool_of(ex: Exchange) -> str:
    return ex.tool.removeprefix(PREFIX)


def cut(ex: Exchange) -> str | None:
    m = TRUNCATED.search(ex.answer)
    return f"the recorder cut the answer at {m.group(1)} characters" if m else None


def _objects(tool: str, doc: Any) -> list[dict[str, Any]]:
    items = doc if isinstance(doc, list) else [doc] if isinstance(doc, dict) else []
    if tool == "woo_products_batch_update" and isinstance(doc, dict):
        items = [x for key in ("create", "update", "delete") for x in doc.get(key) or []]
    return [x for x in items if isinstance(x, dict) and isinstance(x.get("id"), int)]


def _written(ex: Exchange) -> set[int]:
    """The products a call writes to."""
    tool, args = tool_of(ex), ex.arguments
    if tool in PRODUCT_WRITES and isinstance(args.get("productId"), int):
        return {args["productId"]}
    if tool == "woo_products_batch_update":
        return {x["id"] for key in ("update", "delete") for x in args.get(key) or []
                if isinstance(x, dict) and isinstance(x.get("id"), int)}
    return set()


def rebuild(calls: list[Exchange]) -> Seen:
    """What the run's answers printed whole of the store it met (see the module's docstring)."""
    seen = Seen()
    written: set[int] = set()
    created_terms: set[int] = set()
    for ex in calls:
        m = STORE.search(ex.answer)
        if m and seen.store is None:
            seen.store = int(m.group(1))
        tool = tool_of(ex)
        doc = None if cut(ex) or ex.answer.startswith("Error") else loads(ex.answer)
        if tool == "woo_products_categories_create":
            created_terms.update(x["id"] for x in _objects(tool, doc))
        if tool == "woo_products_list" and isinstance(doc, list) and _whole_catalog(ex.arguments, doc):
            seen.store_complete = True
        if tool in READS:
            for obj in _objects(tool, doc):
                _see(seen, tool, obj, written, created_terms)
        written |= _written(ex)
    return seen


def _whole_catalog(args: dict[str, Any], doc: list[Any]) -> bool:
    """An unfiltered listing's first page with room to spare: every product of the store."""
    per_page = args.get("perPage", 10)
    return set(args) <= {"perPage", "page"} and args.get("page", 1) == 1 and isinstance(per_page, int) \
        and len(doc) < per_page


def _see(seen: Seen, tool: str, obj: dict[str, Any], written: set[int], created_terms: set[int]) -> None:
    oid = obj["id"]
    if tool.startswith("woo_products_categories"):
        if oid not in created_terms:
            seen.categories.setdefault(oid, obj)
    elif tool.startswith("woo_products") and oid not in written and oid not in seen.products:
        seen.products[oid] = obj
        for ref in obj.get("categories") or []:
            seen.category_refs.setdefault(ref["id"], ref)
        for image in obj.get("images") or []:
            seen.images.setdefault(image["id"], image)
        why = _unrebuilt_product(obj)
        if why:
            seen.unrebuilt[oid] = why
    elif tool.startswith("woo_orders"):
        seen.orders.setdefault(oid, obj)
    elif tool.startswith("woo_customers"):
        seen.customers.setdefault(oid, obj)


def _unrebuilt_product(obj: dict[str, Any]) -> str | None:
    if obj.get("type") == "variable" or obj.get("variations"):
        return f"product {obj['id']} is variable: its variations (their prices) are only referenced"
    for name in ("description", "short_description", "purchase_note"):
        if stored_text(str(obj.get(name) or "")) is None:
            return f"product {obj['id']}'s {name} is no wpautop of a text the replay can recover"
    if any(a.get("id") for a in obj.get("attributes") or []):
        return f"product {obj['id']} has a global attribute, whose terms the run never listed"
    return None


def ties_by_id(items: Any) -> Any:
    """A listing by date with the objects of one shown creation second in id order, in place: WordPress orders them
    by the stored post_date, then id, and no answer shows post_date (`date_created` is read from post_date_gmt)."""
    if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
        return items
    groups = [list(g) for _, g in itertools.groupby(items, key=lambda x: x.get("date_created"))]
    return [x for g in groups for x in sorted(g, key=lambda x: str(x.get("id")).zfill(20))]


# ---- judging ------------------------------------------------------------------------------------------------

@dataclass
class Judge:
    seen: Seen
    replay_start: str  # the replay clock's first time (wp_date format): later ones are the replay's own
    created: set[int] = field(default_factory=set)  # ids the replay made (their state is the replay's)

    def why_not(self, ex: Exchange, recorded: Any) -> str | None:
        """Why the call's answer hangs on what the run does not show, or None."""
        why = cut(ex)
        if why:
            return why
        tool = tool_of(ex)
        for obj in _objects(tool, recorded):
            oid = obj["id"]
            if tool.startswith("woo_products_categories"):
                if oid not in self.seen.categories and oid not in self.created:
                    return f"category {oid} was only seen named by a product"
            elif tool.startswith("woo_products"):
                if oid in self.seen.unrebuilt:
                    return self.seen.unrebuilt[oid]
                if oid not in self.seen.products and oid not in self.created:
                    return f"product {oid} was never shown whole before the run wrote to it"
                for ref in obj.get("categories") or []:
                    if ref["id"] not in self.seen.categories and ref["id"] not in self.seen.category_refs:
                        return f"category {ref['id']} was never shown"
            elif tool.startswith("woo_orders"):
                for item in obj.get("line_items") or []:
                    pid = item.get("variation_id") or item.get("product_id")
                    if pid and (pid not in self.seen.products or pid in self.seen.unrebuilt):
                        return f"order {oid}'s line item names product {pid}, which the run never showed whole"
        return None

    def same(self, recorded: Any, emulated: Any, key: str = "") -> bool:
        if key in DRAWN:
            return type(recorded) is type(emulated)
        if isinstance(emulated, str) and ISO.match(emulated) and emulated >= self.replay_start:
            return isinstance(recorded, str) and bool(ISO.match(recorded))
        if isinstance(recorded, dict) and isinstance(emulated, dict):
            return list(recorded) == list(emulated) and all(self.same(recorded[k], emulated[k], k) for k in recorded)
        if isinstance(recorded, list) and isinstance(emulated, list):
            return len(recorded) == len(emulated) and all(self.same(a, b, key) for a, b in zip(recorded, emulated))
        if key == "count" and not self.seen.store_complete:
            return type(recorded) is type(emulated)
        return type(recorded) is type(emulated) and recorded == emulated

    def __call__(self, ex: Exchange, answer: str) -> Case:
        recorded_error, emulated_error = ex.answer.startswith("Error"), answer.startswith("Error")
        recorded = None if recorded_error else loads(ex.answer)
        emulated = None if emulated_error else loads(answer)
        if tool_of(ex).endswith("_create"):
            self.created.update(x["id"] for x in _objects(tool_of(ex), emulated))
        why = self.why_not(ex, recorded)
        if why:
            return Case(ex, "cannot-rebuild", why, ex.answer, answer)
        if recorded_error or emulated_error:
            ok = recorded_error and emulated_error and ex.answer == answer
            return Case(ex, "agreed" if ok else "disagreed", "error text", ex.answer, answer)
        if recorded is None:
            return Case(ex, "agreed" if ex.answer == answer else "disagreed", "text", ex.answer, answer)
        if tool_of(ex) in DATED_LISTINGS and ex.arguments.get("orderby", "date") == "date":
            recorded, emulated = ties_by_id(recorded), ties_by_id(emulated)
        ok = self.same(recorded, emulated)
        return Case(ex, "agreed" if ok else "disagreed", "content", ex.answer, answer)


def _latest(calls: list[Exchange]) -> dt.datetime:
    times = [t for ex in calls for t in re.findall(r'"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)"', ex.answer)]
    latest = max(times, default="2025-01-01T00:00:00")
    return dt.datetime.fromisoformat(latest).replace(tzinfo=dt.timezone.utc)


async def _replay_run(calls: list[Exchange], seen: Seen, root: Path) -> tuple[list[str], str]:
    from decathlon.emulators.woocommerce.clock import ManualClock, system_clock, wp_date
    from decathlon.emulators.woocommerce.service import start
    from decathlon.emulators.woocommerce.site import FIRST_DEPLOYED_STORE, Network
    from decathlon.emulators.woocommerce.state import WooCommerceState
    from decathlon.emulators.fidelity.woocommerce_seed import directory
    from decathlon.standins.woocommerce.client import WooClient
    from decathlon.standins.woocommerce.server import call

    clock = ManualClock(_latest(calls) + dt.timedelta(minutes=1))
    start_time = wp_date(clock().replace(tzinfo=None)) or ""
    network, _ = build(seen, clock)
    await write(network, root / "seed")
    service = await start(directory(), "127.0.0.1", {"http": 0}, clock=clock)
    try:
        state = WooCommerceState(service.network, lambda: Network(directory(), system_clock))
        await state.load_seed(root / "seed")
        service.network.clock = clock
        store = seen.store or FIRST_DEPLOYED_STORE
        client = WooClient(f"http://127.0.0.1:{service.ports['http']}/store{store}", *replay_key(store))
        answers = []
        with contextlib.redirect_stderr(io.StringIO()):  # the stand-in logs each request there, as upstream's does
            for ex in calls:
                clock.advance(1)
                text, _ = await asyncio.wait_for(call(client, tool_of(ex), ex.arguments), 120)
                answers.append(text)
        return answers, start_time
    finally:
        await service.close()


def replay_calls(calls: list[Exchange]) -> list[Case]:
    """One run's WooCommerce calls replayed on a fresh emulator of their own, each judged against its answer."""
    seen = rebuild(calls)
    with tempfile.TemporaryDirectory(prefix="fidelity-woocommerce-") as root:
        answers, start_time = asyncio.run(_replay_run(calls, seen, Path(root)))
    judge = Judge(seen, start_time)
    return [judge(ex, answer) for ex, answer in zip(calls, answers)]


def replay_runs(paths: list[Path], *, servers: Path | None = None) -> list[Case]:
    """The runs' WooCommerce calls, each run on a fresh emulator of its own (`servers` is taken for the other tiers'
    signature: the replay needs no server virtualenv)."""
    cases: list[Case] = []
    for path in paths:
        calls = exchanges(path, PREFIX)
        if calls:
            cases.extend(replay_calls(calls))
    return cases


def replay(runs: Path, **kwargs: Any) -> list[Case]:
    return replay_runs(sorted(runs.glob("*.json")), **kwargs)
