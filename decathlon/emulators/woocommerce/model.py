"""The stored records of one WordPress site: rows of wp_posts (posts, pages, attachments, products,
variations, coupons, order placeholders), terms, WooCommerce's own tables, and their metadata.

Every record that WordPress keeps in wp_posts takes its ID from the site's one post sequence, so a
product created after three uploads and an order is number 13, as on a real site; orders (HPOS)
still reserve their ID there. Metadata keeps WordPress' meta IDs; hidden (internal) keys are stored
like any other and filtered out where WooCommerce filters them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass
class Meta:
    id: int
    key: str
    value: Any


@dataclass
class Post:
    """A plain wp_posts row: post, page, attachment."""

    id: int
    post_type: str
    date: datetime
    modified: datetime
    title: str = ""
    content: str = ""
    excerpt: str = ""
    status: str = "publish"
    slug: str = ""
    author: int = 1
    parent: int = 0
    menu_order: int = 0
    comment_status: str = "open"
    ping_status: str = "open"
    password: str = ""
    mime_type: str = ""
    sticky: bool = False
    format: str = "standard"
    template: str = ""
    categories: list[int] = field(default_factory=list)
    tags: list[int] = field(default_factory=list)
    meta: list[Meta] = field(default_factory=list)
    # Attachments only: where the file lives under wp-content/uploads, its size and pixel size.
    file: str = ""
    filesize: int = 0
    width: int = 0
    height: int = 0
    date_gmt_set: bool = True  # drafts keep a zero GMT date in WordPress until published


@dataclass
class ProductAttribute:
    """WC_Product_Attribute: a global (pa_*) attribute has an id; a custom one only a name."""

    id: int
    name: str
    options: list[Any]
    position: int = 0
    visible: bool = False
    variation: bool = False


@dataclass
class Product:
    """A WC product or variation (type "variation")."""

    id: int
    type: str
    date_created: datetime
    date_modified: datetime
    name: str = ""
    slug: str = ""
    status: str = "publish"
    featured: bool = False
    catalog_visibility: str = "visible"
    description: str = ""
    short_description: str = ""
    sku: str = ""
    global_unique_id: str = ""
    price: str = ""
    regular_price: str = ""
    sale_price: str = ""
    date_on_sale_from: datetime | None = None
    date_on_sale_to: datetime | None = None
    total_sales: int = 0
    tax_status: str = "taxable"
    tax_class: str = ""
    manage_stock: bool = False
    stock_quantity: int | float | None = None
    stock_status: str = "instock"
    backorders: str = "no"
    low_stock_amount: int | str = ""
    sold_individually: bool = False
    weight: str = ""
    length: str = ""
    width: str = ""
    height: str = ""
    upsell_ids: list[int] = field(default_factory=list)
    cross_sell_ids: list[int] = field(default_factory=list)
    parent_id: int = 0
    reviews_allowed: bool = True
    purchase_note: str = ""
    attributes: list[ProductAttribute] = field(default_factory=list)
    variation_attributes: dict[str, str] = field(default_factory=dict)  # variations: attribute slug -> value
    default_attributes: list[dict[str, Any]] = field(default_factory=list)
    menu_order: int = 0
    post_password: str = ""
    virtual: bool = False
    downloadable: bool = False
    downloads: list[dict[str, Any]] = field(default_factory=list)
    download_limit: int = -1
    download_expiry: int = -1
    category_ids: list[int] = field(default_factory=list)
    tag_ids: list[int] = field(default_factory=list)
    brand_ids: list[int] = field(default_factory=list)
    shipping_class_id: int = 0
    image_id: int = 0
    gallery_image_ids: list[int] = field(default_factory=list)
    external_url: str = ""
    button_text: str = ""
    children: list[int] = field(default_factory=list)  # grouped products
    average_rating: str = "0"
    rating_count: int = 0
    review_count: int = 0
    meta: list[Meta] = field(default_factory=list)
    author: int = 1
    slug_given: bool = False

    @property
    def post_type(self) -> str:
        return "product_variation" if self.type == "variation" else "product"


@dataclass
class Term:
    id: int
    taxonomy: str
    name: str
    slug: str
    description: str = ""
    parent: int = 0
    display: str = "default"  # product_cat only
    image_id: int = 0  # product_cat only
    menu_order: int = 0
    meta: list[Meta] = field(default_factory=list)


@dataclass
class AttributeTaxonomy:
    """A row of woocommerce_attribute_taxonomies; its terms live in taxonomy pa_<slug>."""

    id: int
    name: str
    slug: str
    type: str = "select"
    order_by: str = "menu_order"
    has_archives: bool = False

    @property
    def taxonomy(self) -> str:
        return "pa_" + self.slug


@dataclass
class OrderItem:
    id: int
    type: str  # line_item, shipping, fee, coupon, tax
    name: str = ""
    product_id: int = 0
    variation_id: int = 0
    quantity: int | float = 1
    tax_class: str = ""
    subtotal: float = 0.0
    subtotal_tax: float = 0.0
    total: float = 0.0
    total_tax: float = 0.0
    method_id: str = ""  # shipping
    instance_id: str = ""  # shipping
    tax_status: str = "taxable"  # shipping, fee
    code: str = ""  # coupon
    discount: float = 0.0  # coupon
    discount_tax: float = 0.0  # coupon
    rate_code: str = ""  # tax
    rate_id: int = 0  # tax
    label: str = ""  # tax
    compound: bool = False  # tax
    rate_percent: float = 0.0  # tax
    refunded: float = 0.0  # refunds: amount refunded against this line (negative on the refund's own lines)
    meta: list[Meta] = field(default_factory=list)


@dataclass
class Order:
    """A shop_order (or a shop_order_refund, which has `parent_id` and `amount`)."""

    id: int
    date_created: datetime
    date_modified: datetime
    type: str = "shop_order"
    status: str = "pending"
    parent_id: int = 0
    currency: str = "USD"
    version: str = ""
    prices_include_tax: bool = False
    discount_total: float = 0.0
    discount_tax: float = 0.0
    shipping_total: float = 0.0
    shipping_tax: float = 0.0
    cart_tax: float = 0.0
    total: float = 0.0
    total_tax: float = 0.0
    customer_id: int = 0
    order_key: str = ""
    billing: dict[str, str] = field(default_factory=dict)
    shipping: dict[str, str] = field(default_factory=dict)
    payment_method: str = ""
    payment_method_title: str = ""
    transaction_id: str = ""
    customer_ip_address: str = ""
    customer_user_agent: str = ""
    created_via: str = ""
    customer_note: str = ""
    date_completed: datetime | None = None
    date_paid: datetime | None = None
    cart_hash: str = ""
    items: list[OrderItem] = field(default_factory=list)
    meta: list[Meta] = field(default_factory=list)
    stock_reduced: bool = False
    sales_recorded: bool = False
    # Refunds only.
    amount: float = 0.0
    reason: str = ""
    refunded_by: int = 0
    refunded_payment: bool = False


@dataclass
class Coupon:
    id: int
    code: str
    date_created: datetime
    date_modified: datetime
    amount: str = "0"
    status: str = "publish"
    discount_type: str = "fixed_cart"
    description: str = ""
    date_expires: datetime | None = None
    usage_count: int = 0
    individual_use: bool = False
    product_ids: list[int] = field(default_factory=list)
    excluded_product_ids: list[int] = field(default_factory=list)
    usage_limit: int | None = None
    usage_limit_per_user: int | None = None
    limit_usage_to_x_items: int | None = None
    free_shipping: bool = False
    product_categories: list[int] = field(default_factory=list)
    excluded_product_categories: list[int] = field(default_factory=list)
    exclude_sale_items: bool = False
    minimum_amount: str = ""
    maximum_amount: str = ""
    email_restrictions: list[str] = field(default_factory=list)
    used_by: list[str] = field(default_factory=list)
    meta: list[Meta] = field(default_factory=list)


@dataclass
class Comment:
    """wp_comments: order notes (type order_note) and product reviews (type review)."""

    id: int
    post_id: int
    type: str
    content: str
    date: datetime
    author: str = ""
    author_email: str = ""
    approved: str = "1"
    user_id: int = 0
    rating: int = 0
    verified: bool = False
    customer_note: bool = False
    added_by_user: bool = False


@dataclass
class User:
    """A network user (multisite users are shared); roles are per site."""

    id: int
    login: str
    email: str
    password: str
    registered: datetime
    modified: datetime
    display_name: str = ""
    nicename: str = ""
    url: str = ""
    first_name: str = ""
    last_name: str = ""
    description: str = ""
    roles: dict[int, str] = field(default_factory=dict)  # blog id -> role
    billing: dict[str, str] = field(default_factory=dict)
    shipping: dict[str, str] = field(default_factory=dict)
    paying_customer: bool = False
    meta: list[Meta] = field(default_factory=list)
    super_admin: bool = False


@dataclass
class TaxRate:
    id: int
    country: str = ""
    state: str = ""
    postcodes: list[str] = field(default_factory=list)
    cities: list[str] = field(default_factory=list)
    rate: str = ""
    name: str = ""
    priority: int = 1
    compound: bool = False
    shipping: bool = True
    order: int = 0
    tax_class: str = "standard"


@dataclass
class ShippingMethod:
    instance_id: int
    method_id: str
    title: str
    order: int = 0
    enabled: bool = True
    settings: dict[str, str] = field(default_factory=dict)


@dataclass
class ShippingZone:
    id: int
    name: str
    order: int = 0
    locations: list[dict[str, str]] = field(default_factory=list)
    methods: list[ShippingMethod] = field(default_factory=list)


@dataclass
class Webhook:
    id: int
    name: str
    status: str
    topic: str
    delivery_url: str
    secret: str
    date_created: datetime
    date_modified: datetime
    api_version: str = "wp_api_v3"
    user_id: int = 1


@dataclass
class ApiKey:
    consumer_key: str
    consumer_secret: str
    user_id: int = 1
    permissions: str = "read_write"
