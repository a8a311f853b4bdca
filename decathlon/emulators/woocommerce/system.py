"""`/wc/v3/system_status`, its tools, `/wc/v3/data` and `/wc/v3/webhooks`.

The system status describes this store as upstream's image would (WooCommerce 10.2.2 on WordPress
6.8.3, multisite, HPOS), in the report's sections but not every one of its hundred-odd fields.
Tools run and report success without doing anything; an unknown tool is 404. The data endpoints
list a handful of countries and currencies, not WooCommerce's full tables.
"""
from __future__ import annotations

from typing import Any

from . import php
from .clock import wp_date
from .errors import RestError
from .model import Order, Product, Webhook
from .params import Schema
from .rest import CREATABLE, DELETABLE, EDITABLE, READABLE, Reply, Request, Router, paginate, self_links
from .site import WC_VERSION, WP_VERSION
from .wcbase import batch, context_param, require

TOOLS = [
    ("clear_transients", "WooCommerce transients", "Clear transients", "This tool will clear the product/shop transients cache."),
    ("clear_expired_transients", "Expired transients", "Clear transients",
     "This tool will clear ALL expired transients from WordPress."),
    ("clear_orphaned_variations", "Orphaned variations", "Delete orphaned variations",
     "This tool will delete all variations which have no parent."),
    ("add_order_indexes", "Order address indexes", "Index orders",
     "This tool will add address indexes to orders that do not have them yet. This improves order search results."),
    ("recount_terms", "Term counts", "Recount terms",
     "This tool will recount product terms - useful when changing your settings in a way which hides products from "
     "the catalog."),
    ("reset_roles", "Capabilities", "Reset capabilities",
     "This tool will reset the admin, customer and shop_manager roles to default. Use this if your users cannot access "
     "all of the WooCommerce admin pages."),
    ("clear_sessions", "Clear customer sessions", "Clear",
     "This tool will delete all customer session data from the database, including current carts and saved carts in "
     "the database."),
    ("clear_template_cache", "Clear template cache", "Clear", "This tool will empty the template cache."),
    ("clear_system_status_theme_info_cache", "Clear system status theme info cache", "Clear",
     "This tool will empty the system status theme info cache."),
    ("delete_taxes", "Delete tax rates", "Delete tax rates",
     "This option will delete ALL of your tax rates, use with caution. This action cannot be reversed."),
    ("regenerate_thumbnails", "Regenerate shop thumbnails", "Regenerate",
     "This will regenerate all shop thumbnails to match your theme and/or image settings."),
    ("db_update_routine", "Update database", "Update database",
     "This tool will update your WooCommerce database to the latest version. Please ensure you make sufficient backups "
     "before proceeding."),
]
TOOL_MESSAGES = {"clear_transients": "Product transients cleared", "clear_expired_transients": "0 transients rows cleared",
                 "clear_orphaned_variations": "0 orphaned variations deleted", "recount_terms": "Terms successfully recounted",
                 "reset_roles": "Roles successfully reset", "clear_sessions": "Deleted all active sessions, and 0 saved carts.",
                 "add_order_indexes": "0 order addresses indexed", "delete_taxes": "Tax rates successfully deleted",
                 "clear_template_cache": "Template cache cleared.",
                 "clear_system_status_theme_info_cache": "System status theme info cache cleared.",
                 "regenerate_thumbnails": "Thumbnail regeneration has been scheduled to run in the background.",
                 "db_update_routine": "Database upgrade routine has been scheduled to run in the background."}


def system_status(request: Request) -> Reply:
    site = request.site
    home = request.home()
    counts: dict[str, int] = {}
    for record in site.posts.values():
        post_type = getattr(record, "post_type", None) or ("shop_order" if isinstance(record, Order) else "")
        if isinstance(record, Order):
            continue
        counts[post_type] = counts.get(post_type, 0) + 1
    return Reply({
        "environment": {"home_url": home, "site_url": home, "store_id": "", "version": WC_VERSION,
                        "log_directory": "/var/www/html/wp-content/uploads/wc-logs/", "log_directory_writable": True,
                        "wp_version": WP_VERSION, "wp_multisite": True, "wp_memory_limit": 268435456, "wp_debug_mode": False,
                        "wp_cron": True, "language": "en_US", "external_object_cache": None,
                        "server_info": "Apache/2.4.62 (Debian)", "php_version": "8.2.29", "php_post_max_size": 8388608,
                        "php_max_execution_time": 30, "php_max_input_vars": 1000, "curl_version": "8.14.1, OpenSSL/3.0.17",
                        "suhosin_installed": False, "max_upload_size": 2097152, "mysql_version": "8.0.43",
                        "mysql_version_string": "8.0.43", "default_timezone": "UTC", "fsockopen_or_curl_enabled": True,
                        "soapclient_enabled": False, "domdocument_enabled": True, "gzip_enabled": True,
                        "mbstring_enabled": True, "remote_post_successful": True, "remote_post_response": 200,
                        "remote_get_successful": True, "remote_get_response": 200},
        "database": {"wc_database_version": WC_VERSION, "database_prefix": f"wp_{site.blog_id}_" if site.blog_id > 1 else "wp_",
                     "maxmind_geoip_database": "", "database_tables": {"woocommerce": {}, "other": {}}, "database_size": {}},
        "active_plugins": [{"plugin": "woocommerce/woocommerce.php", "name": "WooCommerce", "version": WC_VERSION,
                            "version_latest": WC_VERSION, "url": "https://woocommerce.com/", "author_name": "Automattic",
                            "author_url": "https://woocommerce.com", "network_activated": True}],
        "inactive_plugins": [], "dropins_mu_plugins": {"dropins": [], "mu_plugins": []},
        "theme": {"name": "Twenty Twenty-Five", "version": "1.3", "version_latest": "1.3",
                  "author_url": "https://wordpress.org/", "is_child_theme": False, "is_block_theme": True,
                  "has_woocommerce_support": True, "has_woocommerce_file": False, "has_outdated_templates": False,
                  "overrides": [], "parent_name": "", "parent_version": "", "parent_version_latest": "",
                  "parent_author_url": ""},
        "settings": {"api_enabled": True, "force_ssl": False, "currency": "USD", "currency_symbol": "&#36;",
                     "currency_position": "left", "thousand_separator": ",", "decimal_separator": ".",
                     "number_of_decimals": 2, "geolocation_enabled": False,
                     "taxonomies": {"external": "external", "grouped": "grouped", "simple": "simple", "variable": "variable"},
                     "product_visibility_terms": {"exclude-from-catalog": "exclude-from-catalog",
                                                  "exclude-from-search": "exclude-from-search", "featured": "featured",
                                                  "outofstock": "outofstock", "rated-1": "rated-1", "rated-2": "rated-2",
                                                  "rated-3": "rated-3", "rated-4": "rated-4", "rated-5": "rated-5"},
                     "woocommerce_com_connected": "no", "enforce_approved_download_dirs": True,
                     "order_datastore": "Automattic\\WooCommerce\\Internal\\DataStores\\Orders\\OrdersTableDataStore",
                     "HPOS_enabled": True, "HPOS_sync_enabled": False},
        "security": {"secure_connection": request.scheme == "https", "hide_errors": True},
        "pages": [{"page_name": name, "page_id": str(page_id), "page_set": True, "page_exists": True,
                   "page_visible": True, "shortcode": "", "block": "", "shortcode_required": False,
                   "shortcode_present": False, "block_present": False, "block_required": False}
                  for name, page_id in (("Shop base", 4), ("Cart", 5), ("Checkout", 6), ("My account", 7))],
        "post_type_counts": [{"type": post_type, "count": str(count)} for post_type, count in sorted(counts.items())],
    })


def _tool_json(request: Request, tool: tuple[str, str, str, str]) -> dict[str, Any]:
    tool_id, name, action, description = tool
    return {"id": tool_id, "name": name, "action": action, "description": description,
            "_links": {"item": [{"href": request.rest_url(f"/wc/v3/system_status/tools/{tool_id}"),
                                 "embeddable": True}]}}


def _tool(request: Request) -> tuple[str, str, str, str]:
    wanted = php.php_string(request.params.get("id"))
    tool = next((t for t in TOOLS if t[0] == wanted), None)
    if tool is None:
        raise RestError("woocommerce_rest_system_status_tool_invalid_id", "Invalid tool ID.", 404)
    return tool


def list_tools(request: Request) -> Reply:
    return Reply([_tool_json(request, t) for t in TOOLS])


def get_tool(request: Request) -> Reply:
    return Reply(_tool_json(request, _tool(request)))


def run_tool(request: Request) -> Reply:
    tool = _tool(request)
    message = TOOL_MESSAGES.get(tool[0], "Tool ran.")
    if tool[0] == "delete_taxes":
        request.site.tax_rates.clear()
    if tool[0] == "clear_orphaned_variations":
        site = request.site
        orphans = [r.id for r in site.posts.values() if isinstance(r, Product) and r.type == "variation"
                   and site.product(r.parent_id) is None]
        for orphan in orphans:
            site.posts.pop(orphan, None)
        message = f"{len(orphans)} orphaned variations deleted"
    data = _tool_json(request, tool)
    data.pop("_links")
    data.update({"success": True, "message": message})
    data["_links"] = _tool_json(request, tool)["_links"]
    return Reply(data)


COUNTRIES = {"US": "United States (US)", "CA": "Canada", "GB": "United Kingdom (UK)", "CN": "China", "DE": "Germany",
             "FR": "France", "AU": "Australia", "JP": "Japan", "IN": "India", "BR": "Brazil"}
CURRENCIES = {"USD": ("United States (US) dollar", "&#36;"), "EUR": ("Euro", "&euro;"),
              "GBP": ("Pound sterling", "&pound;"), "CNY": ("Chinese yuan", "&yen;"), "JPY": ("Japanese yen", "&yen;"),
              "CAD": ("Canadian dollar", "&#36;"), "AUD": ("Australian dollar", "&#36;"), "INR": ("Indian rupee", "&#8377;")}


def data_index(request: Request) -> Reply:
    return Reply([{"slug": slug, "description": text,
                   "_links": {"self": [{"href": request.rest_url(f"/wc/v3/data/{slug}")}],
                              "collection": [{"href": request.rest_url("/wc/v3/data")}]}}
                  for slug, text in (("continents", "List of supported continents, countries, and states."),
                                     ("countries", "List of supported states in a given country."),
                                     ("currencies", "List of supported currencies."))])


def countries(request: Request) -> Reply:
    return Reply([{"code": code, "name": name, "states": [],
                   "_links": {"self": [{"href": request.rest_url(f"/wc/v3/data/countries/{code.lower()}")}],
                              "collection": [{"href": request.rest_url("/wc/v3/data/countries")}]}}
                  for code, name in COUNTRIES.items()])


def currencies(request: Request) -> Reply:
    return Reply([_currency(request, code) for code in CURRENCIES])


def _currency(request: Request, code: str) -> dict[str, Any]:
    name, symbol = CURRENCIES[code]
    return {"code": code, "name": name, "symbol": symbol,
            "_links": {"self": [{"href": request.rest_url(f"/wc/v3/data/currencies/{code.lower()}")}],
                       "collection": [{"href": request.rest_url("/wc/v3/data/currencies")}]}}


def current_currency(request: Request) -> Reply:
    return Reply(_currency(request, "USD"))


# --- webhooks --------------------------------------------------------------------------------

TOPICS = ["coupon.created", "coupon.updated", "coupon.deleted", "coupon.restored", "customer.created",
          "customer.updated", "customer.deleted", "order.created", "order.updated", "order.deleted", "order.restored",
          "product.created", "product.updated", "product.deleted", "product.restored", "action.woocommerce_add_to_cart"]
WEBHOOK_ARGS: dict[str, Schema] = {
    "name": {"type": "string"}, "status": {"type": "string", "enum": ["active", "paused", "disabled"]},
    "topic": {"type": "string"}, "secret": {"type": "string"}, "delivery_url": {"type": "string"}}
CREATE_WEBHOOK_ARGS: dict[str, Schema] = {
    **WEBHOOK_ARGS, "topic": {"type": "string", "required": True}, "delivery_url": {"type": "string", "required": True},
    "status": {"type": "string", "enum": ["active", "paused", "disabled"], "default": "active"}}


def webhook_json(request: Request, hook: Webhook) -> dict[str, Any]:
    resource, _, event = hook.topic.partition(".")
    hooks = [f"woocommerce_{'new' if event == 'created' else event}_{resource}"] if resource != "action" else [event]
    return {"id": hook.id, "name": hook.name, "status": hook.status, "topic": hook.topic, "resource": resource,
            "event": event, "hooks": hooks, "delivery_url": hook.delivery_url,
            "date_created": wp_date(hook.date_created), "date_created_gmt": wp_date(hook.date_created),
            "date_modified": wp_date(hook.date_modified), "date_modified_gmt": wp_date(hook.date_modified),
            "_links": self_links(request, f"/wc/v3/webhooks/{hook.id}", "/wc/v3/webhooks")}


def _webhook(request: Request) -> Webhook:
    hook = request.site.webhooks.get(request.id_param())
    if hook is None:
        raise RestError("woocommerce_rest_webhook_invalid_id", "Invalid webhook ID.", 404)
    return hook


def list_webhooks(request: Request) -> Reply:
    p = request.params
    hooks = sorted(request.site.webhooks.values(), key=lambda h: (h.date_created, h.id), reverse=p.get("order") != "asc")
    if p.get("status") and p.get("status") != "all":
        hooks = [h for h in hooks if h.status == p.get("status")]
    chunk, headers = paginate(hooks, request, php.php_int(p.get("page", 1)), php.php_int(p.get("per_page", 10)),
                              "/wc/v3/webhooks")
    return Reply([webhook_json(request, h) for h in chunk], headers=headers)


def get_webhook(request: Request) -> Reply:
    return Reply(webhook_json(request, _webhook(request)))


def create_webhook(request: Request) -> Reply:
    site, p = request.site, request.params
    topic = php.php_string(p.get("topic", ""))
    if topic not in TOPICS:
        raise RestError("woocommerce_rest_webhook_invalid_topic", "Webhook topic is required and must be valid.", 400)
    url = php.php_string(p.get("delivery_url", ""))
    if not url.startswith(("http://", "https://")):
        raise RestError("woocommerce_rest_webhook_invalid_delivery_url",
                        "Webhook delivery URL must be a valid URL starting with http:// or https://.", 400)
    now = site.now()
    name = php.php_string(p.get("name")) or f"Webhook created on {now.strftime('%B %d, %Y @ %I:%M %p')}"
    hook = Webhook(site.next_id("webhook"), name, php.php_string(p.get("status", "active")), topic, url,
                   php.php_string(p.get("secret", "")), now, now)
    site.webhooks[hook.id] = hook
    return Reply(webhook_json(request, hook), 201, [("Location", request.rest_url(f"/wc/v3/webhooks/{hook.id}"))])


def update_webhook(request: Request) -> Reply:
    hook, p = _webhook(request), request.params
    for key in ("name", "status", "secret", "delivery_url"):
        if p.isset(key):
            setattr(hook, key, php.php_string(p.get(key)))
    if p.isset("topic"):
        if p.get("topic") not in TOPICS:
            raise RestError("woocommerce_rest_webhook_invalid_topic", "Webhook topic must be valid.", 400)
        hook.topic = p.get("topic")
    hook.date_modified = request.site.now()
    return Reply(webhook_json(request, hook))


def delete_webhook(request: Request) -> Reply:
    hook = _webhook(request)
    if not php.php_bool(request.params.get("force")):
        raise RestError("woocommerce_rest_trash_not_supported", "Webhooks do not support trashing.", 501)
    data = webhook_json(request, hook)
    request.site.webhooks.pop(hook.id, None)
    return Reply(data)


def batch_webhooks(request: Request) -> Reply:
    return batch(request, create_webhook, update_webhook, delete_webhook, CREATE_WEBHOOK_ARGS, WEBHOOK_ARGS)


def register(router: Router) -> None:
    router.add("/wc/v3/system_status", READABLE, system_status, context_param(), require("read"))
    router.add("/wc/v3/system_status/tools", READABLE, list_tools, context_param(), require("list"))
    router.add(r"/wc/v3/system_status/tools/(?P<id>[\w-]+)", READABLE, get_tool, context_param(), require("read"))
    router.add(r"/wc/v3/system_status/tools/(?P<id>[\w-]+)", EDITABLE, run_tool, {}, require("edit"))
    router.add("/wc/v3/data", READABLE, data_index, {}, require("list"))
    router.add("/wc/v3/data/countries", READABLE, countries, {}, require("list"))
    router.add("/wc/v3/data/currencies", READABLE, currencies, {}, require("list"))
    router.add("/wc/v3/data/currencies/current", READABLE, current_currency, {}, require("read"))
    list_args: dict[str, Schema] = {"context": {"type": "string", "enum": ["view", "edit"], "default": "view"},
                 "page": {"type": "integer", "default": 1, "minimum": 1, "sanitize": "absint"},
                 "per_page": {"type": "integer", "default": 10, "minimum": 1, "maximum": 100, "sanitize": "absint"},
                 "order": {"type": "string", "default": "desc", "enum": ["asc", "desc"]},
                 "status": {"type": "string", "default": "all", "enum": ["all", "active", "paused", "disabled"]},
                 "offset": {"type": "integer", "sanitize": "absint"}}
    router.add("/wc/v3/webhooks", READABLE, list_webhooks, list_args, require("list"))
    router.add("/wc/v3/webhooks", CREATABLE, create_webhook, CREATE_WEBHOOK_ARGS, require("create"))
    router.add("/wc/v3/webhooks/batch", EDITABLE, batch_webhooks, {}, require("batch"))
    item = r"/wc/v3/webhooks/(?P<id>[\d]+)"
    router.add(item, READABLE, get_webhook, context_param(), require("read"))
    router.add(item, EDITABLE, update_webhook, WEBHOOK_ARGS, require("edit"))
    router.add(item, DELETABLE, delete_webhook, {"force": {"type": "boolean", "default": False}}, require("delete"))
