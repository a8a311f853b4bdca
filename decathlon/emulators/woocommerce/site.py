"""The multisite network and its sites, in the state upstream's deployment leaves them.

Upstream runs one WordPress multisite on localhost:10003 with a subfolder site `/storeN` per user
(`wp site create --slug storeN --email <user's email>`, then the user's consumer key inserted for
the network admin, user 1 `mcpwoocommerce`). Blog IDs follow creation order: the deployment created
the stores of users 81-100 first (so store85 is blog 6, as its upload URLs show), and here every
other directory user's store follows in ID order. A new site starts as a fresh WordPress + WooCommerce
install does: posts 1-8 are Hello world, Sample Page, Privacy Policy and WooCommerce's five pages,
terms 1-15 are the default category, WooCommerce's product types and visibility terms and the
"Uncategorized" product category (15), so the first new post is 9 and the first new term 16.

Sites are built on first use: a network of hundreds of stores starts in well under a millisecond.
Users are network-wide, as in WordPress: each store's owner is the user created with it.
"""
from __future__ import annotations

import hashlib
import random
import string
from datetime import datetime
from typing import Any

from ..directory import WC_ADMIN_KEY, WP_ADMIN_PASSWORD, WP_ADMIN_USER, Directory
from .clock import Clock, now_utc
from .model import (ApiKey, AttributeTaxonomy, Comment, Coupon, Meta, Order, Post, Product, ShippingZone, TaxRate,
                    Term, User, Webhook)

WC_VERSION = "10.2.2"
WP_VERSION = "6.8.3"
DEFAULT_HOST = "localhost:10003"
ADMIN_EMAIL = "woocommerce@mcp.com"
FIRST_DEPLOYED_STORE = 81  # upstream ran its store script for users 81..100
DEPLOYED_STORES = 20

Record = Post | Product | Order | Coupon


class Site:
    """One blog: its posts table, terms, WooCommerce tables and options."""

    def __init__(self, network: Network, blog_id: int, slug: str, title: str, owner_id: int, keys: list[ApiKey]) -> None:
        self.network = network
        self.blog_id = blog_id
        self.slug = slug  # "store85", "" for the main site
        self.title = title
        self.owner_id = owner_id
        self.api_keys = keys
        self.created = network.created
        self.posts: dict[int, Record] = {}
        self.terms: dict[int, Term] = {}
        self.attributes: dict[int, AttributeTaxonomy] = {}
        self.comments: dict[int, Comment] = {}
        self.tax_rates: dict[int, TaxRate] = {}
        self.tax_classes: list[tuple[str, str]] = [("Reduced rate", "reduced-rate"), ("Zero rate", "zero-rate")]
        self.zones: dict[int, ShippingZone] = {0: ShippingZone(0, "Locations not covered by your other zones")}
        self.webhooks: dict[int, Webhook] = {}
        self.options: dict[str, Any] = {}
        self.uploads: dict[str, bytes] = {}  # path under wp-content/uploads -> bytes
        self.nonces: set[str] = set()
        # Bumped on every product or term change; derived indexes (see catalog.index) are rebuilt lazily.
        self.catalog_version = 0
        self.derived: dict[str, tuple[int, Any]] = {}
        self._next = {"post": 1, "term": 1, "comment": 1, "postmeta": 1, "termmeta": 1, "order_item": 1,
                      "order_itemmeta": 1, "ordermeta": 1, "attribute": 1, "tax_rate": 1, "zone": 1,
                      "zone_method": 1, "webhook": 1}
        self.rng = random.Random(f"{network.seed}:{blog_id}")
        self._install()

    # --- ids -------------------------------------------------------------------------------

    def next_id(self, table: str) -> int:
        value = self._next[table]
        self._next[table] = value + 1
        return value

    def add_meta(self, entries: list[Meta], key: str, value: Any, table: str = "postmeta") -> Meta:
        entry = Meta(self.next_id(table), key, value)
        entries.append(entry)
        return entry

    def now(self) -> datetime:
        return now_utc(self.network.clock)

    # --- urls ------------------------------------------------------------------------------

    def home(self, scheme: str) -> str:
        """The site's home URL without a trailing slash (scheme chosen per request, see http.py)."""
        return f"{scheme}://{self.network.host}" + (f"/{self.slug}" if self.slug else "")

    def upload_dir(self) -> str:
        return "" if self.blog_id == 1 else f"sites/{self.blog_id}/"

    # --- lookups ---------------------------------------------------------------------------

    def product(self, product_id: int) -> Product | None:
        record = self.posts.get(product_id)
        return record if isinstance(record, Product) else None

    def order(self, order_id: int, kind: str = "shop_order") -> Order | None:
        record = self.posts.get(order_id)
        return record if isinstance(record, Order) and record.type == kind else None

    def post(self, post_id: int, post_type: str | None = None) -> Post | None:
        record = self.posts.get(post_id)
        if isinstance(record, Post) and (post_type is None or record.post_type == post_type):
            return record
        return None

    def terms_of(self, taxonomy: str) -> list[Term]:
        return [term for term in self.terms.values() if term.taxonomy == taxonomy]

    def term(self, term_id: int, taxonomy: str | None = None) -> Term | None:
        term = self.terms.get(term_id)
        if term is not None and (taxonomy is None or term.taxonomy == taxonomy):
            return term
        return None

    def attribute_by_taxonomy(self, taxonomy: str) -> AttributeTaxonomy | None:
        for attribute in self.attributes.values():
            if attribute.taxonomy == taxonomy:
                return attribute
        return None

    def user(self, user_id: int) -> User | None:
        return self.network.users.get(user_id)

    def members(self) -> list[User]:
        return [user for user in self.network.users.values() if self.blog_id in user.roles]

    def option(self, name: str, default: Any = None) -> Any:
        return self.options.get(name, default)

    # --- fresh install ---------------------------------------------------------------------

    def _install(self) -> None:
        at = self.created
        hello = Post(self.next_id("post"), "post", at, at, title="Hello world!", slug="hello-world",
                     content="<!-- wp:paragraph -->\n<p>Welcome to WordPress. This is your first post. Edit or delete "
                             "it, then start writing!</p>\n<!-- /wp:paragraph -->", categories=[1])
        pages = [("Sample Page", "sample-page", "publish"), ("Privacy Policy", "privacy-policy", "draft"),
                 ("Shop", "shop", "publish"), ("Cart", "cart", "publish"), ("Checkout", "checkout", "publish"),
                 ("My account", "my-account", "publish"), ("Refund and Returns Policy", "refund_returns", "draft")]
        for record in [hello] + [Post(self.next_id("post"), "page", at, at, title=title, slug=slug, status=status,
                                      comment_status="closed", ping_status="closed")
                                 for title, slug, status in pages]:
            self.posts[record.id] = record
        self.comments[self.next_id("comment")] = Comment(
            1, 1, "comment", "Hi, this is a comment.\nTo get started with moderating, editing, and deleting comments, "
            "please visit the Comments screen in the dashboard.\nCommenter avatars come from "
            "<a href=\"https://gravatar.com/\">Gravatar</a>.", at, author="A WordPress Commenter",
            author_email="wapuu@wordpress.example")
        default_terms = [("category", "Uncategorized", "uncategorized")]
        default_terms += [("product_type", slug, slug) for slug in ("simple", "grouped", "variable", "external")]
        default_terms += [("product_visibility", slug, slug) for slug in
                          ("exclude-from-search", "exclude-from-catalog", "featured", "outofstock")]
        default_terms += [("product_visibility", f"rated-{n}", f"rated-{n}") for n in range(1, 6)]
        default_terms += [("product_cat", "Uncategorized", "uncategorized")]
        for taxonomy, name, slug in default_terms:
            term_id = self.next_id("term")
            self.terms[term_id] = Term(term_id, taxonomy, name, slug)
        self._next["postmeta"] = 10  # the install's own page metadata came first
        self.options["default_product_cat"] = 15
        self.options["blogname"] = self.title


class Network:
    """The multisite: its users and its sites, built from the task root's directory."""

    def __init__(self, directory: Directory, clock: Clock, host: str = DEFAULT_HOST, seed: str = "decathlon") -> None:
        self.directory = directory
        self.clock = clock
        self.host = host
        self.seed = seed
        self.created = now_utc(clock)
        self.users: dict[int, User] = {}
        self._sites: dict[int, Site] = {}
        self._next_user = 1
        self._next_usermeta = 1
        admin = self._new_user(WP_ADMIN_USER, ADMIN_EMAIL, WP_ADMIN_PASSWORD, super_admin=True)
        admin.roles[1] = "administrator"
        # Blog ids in upstream's creation order; owners are created with their sites, so user id == blog id.
        deployed = [a for a in directory.users if FIRST_DEPLOYED_STORE <= a.id < FIRST_DEPLOYED_STORE + DEPLOYED_STORES]
        rest = [a for a in directory.users if a not in deployed]
        self.stores: dict[str, tuple[int, Any]] = {}
        for blog_id, account in enumerate(deployed + rest, start=2):
            self.stores[f"store{account.id}"] = (blog_id, account)
        self._owners_made = False

    def _new_user(self, login: str, email: str, password: str, super_admin: bool = False) -> User:
        user = User(self._next_user, login, email, password, self.created, self.created, display_name=login,
                    nicename=login.lower(), super_admin=super_admin)
        self.users[user.id] = user
        self._next_user += 1
        return user

    def _make_owners(self) -> None:
        # Owners exist from the start (their ids precede every customer's); made on first use to keep start-up cheap.
        if self._owners_made:
            return
        self._owners_made = True
        for slug, (blog_id, account) in sorted(self.stores.items(), key=lambda item: item[1][0]):
            owner = self._new_user(slug, account.email, _random_password(slug))
            owner.roles[blog_id] = "administrator"

    def add_user(self, login: str, email: str, password: str) -> User:
        self._make_owners()
        return self._new_user(login, email, password)

    def next_usermeta_id(self) -> int:
        value = self._next_usermeta
        self._next_usermeta += 1
        return value

    def site_by_slug(self, slug: str) -> Site | None:
        entry = self.stores.get(slug)
        if entry is None:
            return None
        blog_id, account = entry
        return self._site(blog_id, slug, f"{account.first_name} {account.last_name}'s Store",
                          [ApiKey(account.wc_consumer_key, account.wc_consumer_secret)] if account.wc_consumer_key else [])

    def root(self) -> Site:
        return self._site(1, "", "My Multisite Network", [ApiKey(*WC_ADMIN_KEY)])

    def _site(self, blog_id: int, slug: str, title: str, keys: list[ApiKey]) -> Site:
        site = self._sites.get(blog_id)
        if site is None:
            self._make_owners()
            site = Site(self, blog_id, slug, title, blog_id, keys)
            self._sites[blog_id] = site
        return site

    def user_by_login(self, login: str) -> User | None:
        for user in self.users.values():
            if user.login == login:
                return user
        self._make_owners()
        for user in self.users.values():
            if user.login == login:
                return user
        return None

    def user_by_email(self, email: str) -> User | None:
        self._make_owners()
        wanted = email.strip().lower()
        for user in self.users.values():
            if user.email.lower() == wanted:
                return user
        return None


def _random_password(seed: str) -> str:
    # wp-cli gives owners a random 24-character password nobody knows; ours is derived, equally unknown.
    return hashlib.sha256(f"owner:{seed}".encode()).hexdigest()[:24]


def random_token(rng: random.Random, length: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))
