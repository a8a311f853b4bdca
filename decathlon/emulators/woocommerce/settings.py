"""`/wc/v3/settings` and `/wc/v3/payment_gateways`: a fresh store's configuration, editable.

The groups and options are WooCommerce's own ids with their default values (USD, prices without
tax, stock management on, the three offline gateways disabled); only the options a store's REST
clients commonly read are listed, not every one WooCommerce defines.
"""
from __future__ import annotations

import copy
from typing import Any

from . import php
from .errors import RestError
from .rest import EDITABLE, READABLE, Reply, Request, Router
from .site import Site
from .wcbase import context_param, require

GROUPS = [("general", "General", ""), ("products", "Products", ""), ("tax", "Tax", ""), ("shipping", "Shipping", ""),
          ("checkout", "Payments", ""), ("account", "Accounts &amp; Privacy", ""), ("email", "Emails", ""),
          ("integration", "Integration", ""), ("advanced", "Advanced", ""), ("site-visibility", "Site visibility", "")]


def _opt(option_id: str, label: str, kind: str, default: Any, description: str = "",
         options: dict[str, str] | None = None) -> dict[str, Any]:
    out = {"id": option_id, "label": label, "description": description, "type": kind, "default": default, "tip": description,
           "value": default}
    if options is not None:
        out["options"] = options
    return out


_YES_NO = "checkbox"
OPTIONS: dict[str, list[dict[str, Any]]] = {
    "general": [
        _opt("woocommerce_store_address", "Address line 1", "text", "", "The street address for your business location."),
        _opt("woocommerce_store_address_2", "Address line 2", "text", ""),
        _opt("woocommerce_store_city", "City", "text", ""),
        _opt("woocommerce_default_country", "Country / State", "select", "US:CA"),
        _opt("woocommerce_store_postcode", "Postcode / ZIP", "text", ""),
        _opt("woocommerce_allowed_countries", "Selling location(s)", "select", "all", "",
             {"all": "Sell to all countries", "all_except": "Sell to all countries, except for&hellip;",
              "specific": "Sell to specific countries"}),
        _opt("woocommerce_calc_taxes", "Enable taxes", _YES_NO, "no"),
        _opt("woocommerce_enable_coupons", "Enable coupons", _YES_NO, "yes"),
        _opt("woocommerce_calc_discounts_sequentially", "Calculate coupon discounts sequentially", _YES_NO, "no"),
        _opt("woocommerce_currency", "Currency", "select", "USD"),
        _opt("woocommerce_currency_pos", "Currency position", "select", "left", "",
             {"left": "Left", "right": "Right", "left_space": "Left with space", "right_space": "Right with space"}),
        _opt("woocommerce_price_thousand_sep", "Thousand separator", "text", ","),
        _opt("woocommerce_price_decimal_sep", "Decimal separator", "text", "."),
        _opt("woocommerce_price_num_decimals", "Number of decimals", "number", "2"),
    ],
    "products": [
        _opt("woocommerce_weight_unit", "Weight unit", "select", "kg", "",
             {"kg": "kg", "g": "g", "lbs": "lbs", "oz": "oz"}),
        _opt("woocommerce_dimension_unit", "Dimensions unit", "select", "cm", "",
             {"m": "m", "cm": "cm", "mm": "mm", "in": "in", "yd": "yd"}),
        _opt("woocommerce_enable_reviews", "Enable product reviews", _YES_NO, "yes"),
        _opt("woocommerce_manage_stock", "Manage stock", _YES_NO, "yes"),
        _opt("woocommerce_hold_stock_minutes", "Hold stock (minutes)", "number", "60"),
        _opt("woocommerce_notify_low_stock", "Notifications", _YES_NO, "yes"),
        _opt("woocommerce_notify_no_stock", "Out of stock notifications", _YES_NO, "yes"),
        _opt("woocommerce_notify_low_stock_amount", "Low stock threshold", "number", "2"),
        _opt("woocommerce_notify_no_stock_amount", "Out of stock threshold", "number", "0"),
        _opt("woocommerce_hide_out_of_stock_items", "Out of stock visibility", _YES_NO, "no"),
        _opt("woocommerce_stock_format", "Stock display format", "select", ""),
    ],
    "tax": [
        _opt("woocommerce_prices_include_tax", "Prices entered with tax", "radio", "no"),
        _opt("woocommerce_tax_based_on", "Calculate tax based on", "select", "shipping"),
        _opt("woocommerce_tax_round_at_subtotal", "Rounding", _YES_NO, "no"),
        _opt("woocommerce_tax_display_shop", "Display prices in the shop", "select", "excl"),
        _opt("woocommerce_tax_display_cart", "Display prices during cart and checkout", "select", "excl"),
    ],
    "shipping": [
        _opt("woocommerce_enable_shipping_calc", "Calculations", _YES_NO, "yes"),
        _opt("woocommerce_shipping_cost_requires_address", "Hide shipping costs until an address is entered", _YES_NO, "no"),
        _opt("woocommerce_ship_to_destination", "Shipping destination", "radio", "billing"),
    ],
    "checkout": [_opt("woocommerce_cod_settings", "Cash on delivery", "text", "")],
    "account": [
        _opt("woocommerce_enable_guest_checkout", "Guest checkout", _YES_NO, "yes"),
        _opt("woocommerce_registration_generate_username", "Account creation", _YES_NO, "yes"),
        _opt("woocommerce_registration_generate_password", "Send password setup link", _YES_NO, "yes"),
    ],
    "email": [
        _opt("woocommerce_email_from_name", "\"From\" name", "text", "My WooCommerce Store"),
        _opt("woocommerce_email_from_address", "\"From\" address", "email", "woocommerce@mcp.com"),
    ],
    "integration": [],
    "advanced": [
        _opt("woocommerce_cart_page_id", "Cart page", "single_select_page", "5"),
        _opt("woocommerce_checkout_page_id", "Checkout page", "single_select_page", "6"),
        _opt("woocommerce_myaccount_page_id", "My account page", "single_select_page", "7"),
        _opt("woocommerce_terms_page_id", "Terms and conditions", "single_select_page", ""),
    ],
    "site-visibility": [_opt("woocommerce_coming_soon", "Site visibility", "radio", "no")],
}
GATEWAYS = [
    ("bacs", "Direct bank transfer", "Take payments in person via BACS. More commonly known as direct bank/wire transfer.",
     "Make your payment directly into our bank account. Please use your Order ID as the payment reference. "
     "Your order will not be shipped until the funds have cleared in our account."),
    ("cheque", "Check payments", "Take payments in person via checks. This offline gateway can also be useful to test purchases.",
     "Please send a check to Store Name, Store Street, Store Town, Store State / County, Store Postcode."),
    ("cod", "Cash on delivery", "Let your shoppers pay upon delivery — by cash or other methods of payment.",
     "Pay with cash upon delivery."),
]


def _site_options(site: Site) -> dict[str, list[dict[str, Any]]]:
    options = site.options.get("wc_settings")
    if options is None:
        options = copy.deepcopy(OPTIONS)
        site.options["wc_settings"] = options
    return options


def _gateways(site: Site) -> list[dict[str, Any]]:
    gateways = site.options.get("wc_gateways")
    if gateways is None:
        gateways = []
        for order, (gateway_id, method_title, method_description, description) in enumerate(GATEWAYS):
            title = {"bacs": "Direct bank transfer", "cheque": "Check payments", "cod": "Cash on delivery"}[gateway_id]
            gateways.append({"id": gateway_id, "title": title, "description": description, "order": order,
                             "enabled": False, "method_title": method_title, "method_description": method_description,
                             "method_supports": ["products"],
                             "settings": {"title": {"id": "title", "label": "Title", "description": "", "type": "safe_text",
                                                    "value": title, "default": title, "tip": "", "placeholder": ""},
                                          "instructions": {"id": "instructions", "label": "Instructions",
                                                           "description": "", "type": "textarea", "value": "",
                                                           "default": "", "tip": "", "placeholder": ""}},
                             "needs_setup": False, "post_install_scripts": [],
                             "settings_url": f"/wp-admin/admin.php?page=wc-settings&tab=checkout&section={gateway_id}",
                             "connection_url": None, "setup_help_text": None, "required_settings_keys": []})
        site.options["wc_gateways"] = gateways
    return gateways


def _group_json(request: Request, group_id: str, label: str, description: str) -> dict[str, Any]:
    return {"id": group_id, "label": label, "description": description, "parent_id": "", "sub_groups": [],
            "_links": {"options": [{"href": request.rest_url(f"/wc/v3/settings/{group_id}")}]}}


def _option_json(request: Request, group_id: str, option: dict[str, Any]) -> dict[str, Any]:
    data = dict(option)
    data["group_id"] = group_id
    data["_links"] = {"self": [{"href": request.rest_url(f"/wc/v3/settings/{group_id}/{option['id']}"),
                                "targetHints": {"allow": ["GET", "POST", "PUT", "PATCH"]}}],
                      "collection": [{"href": request.rest_url(f"/wc/v3/settings/{group_id}")}]}
    return data


def list_groups(request: Request) -> Reply:
    return Reply([_group_json(request, *group) for group in GROUPS])


def _group(request: Request) -> str:
    group_id = php.php_string(request.params.get("group_id"))
    if group_id not in OPTIONS:
        raise RestError("rest_setting_setting_group_invalid", "Invalid setting group.", 404)
    return group_id


def list_options(request: Request) -> Reply:
    group_id = _group(request)
    return Reply([_option_json(request, group_id, option) for option in _site_options(request.site)[group_id]])


def _option(request: Request) -> tuple[str, dict[str, Any]]:
    group_id = _group(request)
    wanted = php.php_string(request.params.get("id"))
    for option in _site_options(request.site)[group_id]:
        if option["id"] == wanted:
            return group_id, option
    raise RestError("rest_setting_setting_invalid", "Invalid setting.", 404)


def get_option(request: Request) -> Reply:
    group_id, option = _option(request)
    return Reply(_option_json(request, group_id, option))


def update_option(request: Request) -> Reply:
    group_id, option = _option(request)
    value = request.params.values.get("value")
    if option["type"] == "checkbox":
        if value in ("yes", "no"):
            pass
        elif php.php_empty(value):
            value = option.get("default", "no")
        else:
            raise RestError("rest_setting_value_invalid", "An invalid setting value was passed.", 400)
    elif option.get("options") and value not in option["options"]:
        raise RestError("rest_setting_value_invalid", "An invalid setting value was passed.", 400)
    option["value"] = php.php_string(value) if not isinstance(value, (list, dict)) else value
    return Reply(_option_json(request, group_id, option))


def _gateway_json(request: Request, gateway: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(gateway)
    data["_links"] = {"self": [{"href": request.rest_url(f"/wc/v3/payment_gateways/{gateway['id']}"),
                                "targetHints": {"allow": ["GET", "POST", "PUT", "PATCH"]}}],
                      "collection": [{"href": request.rest_url("/wc/v3/payment_gateways")}]}
    return data


def list_gateways(request: Request) -> Reply:
    return Reply([_gateway_json(request, g) for g in _gateways(request.site)])


def _gateway(request: Request) -> dict[str, Any]:
    wanted = php.php_string(request.params.get("id"))
    for gateway in _gateways(request.site):
        if gateway["id"] == wanted:
            return gateway
    raise RestError("woocommerce_rest_payment_gateway_invalid", "Resource does not exist.", 404)


def get_gateway(request: Request) -> Reply:
    return Reply(_gateway_json(request, _gateway(request)))


def update_gateway(request: Request) -> Reply:
    gateway, p = _gateway(request), request.params
    if isinstance(p.get("settings"), dict):
        for key, value in p.get("settings").items():
            if key in gateway["settings"]:
                gateway["settings"][key]["value"] = php.php_string(value)
                if key == "title":
                    gateway["title"] = php.php_string(value)
    if p.isset("enabled"):
        gateway["enabled"] = php.rest_sanitize_boolean(p.get("enabled"))
    if p.isset("title"):
        gateway["title"] = gateway["settings"]["title"]["value"] = php.php_string(p.get("title"))
    if p.isset("description"):
        gateway["description"] = php.php_string(p.get("description"))
    if p.isset("order"):
        gateway["order"] = php.absint(p.get("order"))
    return Reply(_gateway_json(request, gateway))


def register(router: Router) -> None:
    router.add("/wc/v3/settings", READABLE, list_groups, {}, require("list"))
    router.add(r"/wc/v3/settings/(?P<group_id>[\w-]+)", READABLE, list_options, {}, require("list"))
    item = r"/wc/v3/settings/(?P<group_id>[\w-]+)/(?P<id>[\w-]+)"
    router.add(item, READABLE, get_option, {}, require("read"))
    router.add(item, EDITABLE, update_option, {}, require("edit"))
    router.add("/wc/v3/payment_gateways", READABLE, list_gateways, context_param(), require("list"))
    router.add(r"/wc/v3/payment_gateways/(?P<id>[\w-]+)", READABLE, get_gateway, context_param(), require("read"))
    router.add(r"/wc/v3/payment_gateways/(?P<id>[\w-]+)", EDITABLE, update_gateway,
               {"enabled": {"type": "boolean"}, "title": {"type": "string"}, "description": {"type": "string"},
                "order": {"type": "integer"}, "settings": {"type": "object"}}, require("edit"))
