"""`/wc/v3/customers`: the site's users with a role, WooCommerce's view of them.

Users are network-wide, so an email already registered on any store is refused
(`registration-error-email-exists`), as upstream; the list shows only members of this site with the
role asked for (customers by default), so the network admin appears once an order was placed for him
(WooCommerce adds him to the site as a customer then), as recorded runs show. A new customer's login
is the email's local part, made unique with -2, -3 ... Customers cannot be trashed (501); deleting
one removes them from this site only. `meta_data` is shown in edit context (create/update replies)
only: recorded list replies of WooCommerce 10.2 carry none.
"""
from __future__ import annotations

import hashlib
import re
from typing import Any

from . import catalog, php
from .clock import wp_date
from .errors import RestError
from .model import User
from .orders import BILLING_KEYS, SHIPPING_KEYS
from .params import Schema
from .rest import CREATABLE, DELETABLE, EDITABLE, READABLE, Reply, Request, Router, paginate, self_links
from .site import Site
from .wcbase import META_DATA, batch, context_param, require

ROLES = ["all", "administrator", "editor", "author", "contributor", "subscriber", "customer", "shop_manager"]
_ADDRESS_PROPS = {key: {"type": "string"} for key in BILLING_KEYS}
_ADDRESS_PROPS["email"] = {"type": "string", "format": "email"}
CUSTOMER_ARGS: dict[str, Schema] = {
    "email": {"type": "string", "format": "email"},
    "first_name": {"type": "string", "sanitize": "sanitize_text_field"},
    "last_name": {"type": "string", "sanitize": "sanitize_text_field"},
    "username": {"type": "string"},
    "password": {"type": "string"},
    "billing": {"type": "object", "properties": _ADDRESS_PROPS},
    "shipping": {"type": "object", "properties": {key: {"type": "string"} for key in SHIPPING_KEYS}},
    "meta_data": META_DATA,
}
CREATE_ARGS = {**CUSTOMER_ARGS, "email": {"type": "string", "format": "email", "required": True}}
LIST_ARGS: dict[str, Schema] = {
    "context": {"type": "string", "enum": ["view", "edit"], "default": "view"},
    "page": {"type": "integer", "default": 1, "minimum": 1, "sanitize": "absint"},
    "per_page": {"type": "integer", "default": 10, "minimum": 1, "maximum": 100, "sanitize": "absint"},
    "search": {"type": "string", "sanitize": "sanitize_text_field"},
    "exclude": {"type": "array", "items": {"type": "integer"}, "default": [], "sanitize": "wp_parse_id_list", "validate": False},
    "include": {"type": "array", "items": {"type": "integer"}, "default": [], "sanitize": "wp_parse_id_list", "validate": False},
    "offset": {"type": "integer", "sanitize": "absint"},
    "order": {"type": "string", "default": "asc", "enum": ["asc", "desc"]},
    "orderby": {"type": "string", "default": "name", "enum": ["id", "include", "name", "registered_date"]},
    "email": {"type": "string", "format": "email"},
    "role": {"type": "string", "default": "customer", "enum": ROLES},
}
_EMAIL = re.compile(r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")


def avatar_url(email: str) -> str:
    digest = hashlib.sha256(email.strip().lower().encode()).hexdigest()
    return f"https://secure.gravatar.com/avatar/{digest}?s=96&d=mm&r=g"


def customer_json(request: Request, user: User, edit: bool = False) -> dict[str, Any]:
    site = request.site
    data: dict[str, Any] = {
        "id": user.id, "date_created": wp_date(user.registered), "date_created_gmt": wp_date(user.registered),
        "date_modified": wp_date(user.modified), "date_modified_gmt": wp_date(user.modified),
        "email": user.email, "first_name": user.first_name, "last_name": user.last_name,
        "role": user.roles.get(site.blog_id, ""), "username": user.login,
        "billing": {key: user.billing.get(key, "") for key in ("first_name", "last_name", "company", "address_1",
                                                                "address_2", "city", "postcode", "country", "state",
                                                                "email", "phone")},
        "shipping": {key: user.shipping.get(key, "") for key in ("first_name", "last_name", "company", "address_1",
                                                                  "address_2", "city", "postcode", "country", "state",
                                                                  "phone")},
        "is_paying_customer": user.paying_customer,
        "avatar_url": avatar_url(user.email),
    }
    if edit or request.context == "edit":
        data["meta_data"] = catalog.visible_meta(user.meta, frozenset())
    data["_links"] = self_links(request, f"/wc/v3/customers/{user.id}", "/wc/v3/customers")
    return data


def valid_email(value: str) -> bool:
    return bool(_EMAIL.match(value))


def _find(request: Request) -> User:
    user_id = request.id_param()
    user = request.site.user(user_id) if user_id else None
    if user is None:
        raise RestError("woocommerce_rest_invalid_id", "Invalid resource ID.", 404)
    return user


def _apply_fields(site: Site, user: User, p: Any) -> None:
    if p.isset("first_name"):
        user.first_name = php.sanitize_text_field(p.get("first_name"))
    if p.isset("last_name"):
        user.last_name = php.sanitize_text_field(p.get("last_name"))
    for key, target, allowed in (("billing", user.billing, BILLING_KEYS), ("shipping", user.shipping, SHIPPING_KEYS)):
        value = p.get(key)
        if isinstance(value, dict):
            for field_name, field_value in value.items():
                if field_name in allowed:
                    target[field_name] = php.sanitize_text_field(field_value)
    if isinstance(p.get("meta_data"), list):
        for meta in p.get("meta_data"):
            if isinstance(meta, dict):
                entries = user.meta
                key = php.php_string(meta.get("key"))
                value = catalog.stored_meta_value(meta.get("value"))
                wanted = php.absint(meta.get("id")) if meta.get("id") not in (None, "") else 0
                target_entry = next((e for e in entries if (wanted and e.id == wanted) or (not wanted and e.key == key)), None)
                if target_entry is not None:
                    if value is None:
                        entries.remove(target_entry)
                    else:
                        target_entry.key, target_entry.value = key, value
                elif value is not None:
                    from .model import Meta
                    entries.append(Meta(site.network.next_usermeta_id(), key, value))
    user.modified = site.now()


def _username_from_email(site: Site, email: str) -> str:
    local, _, domain = email.partition("@")
    if local in ("sales", "hello", "mail", "contact", "info"):
        local = domain
    base = re.sub(r"[^a-z0-9 _.\-@]", "", local.lower()) or "customer"
    name, suffix = base, 2
    while site.network.user_by_login(name) is not None:
        name = f"{base}-{suffix}"
        suffix += 1
    return name


def create_customer(request: Request) -> Reply:
    site, p = request.site, request.params
    if not php.php_empty(p.get("id")):
        raise RestError("woocommerce_rest_customer_exists", "Cannot create existing resource.", 400)
    email = php.sanitize_text_field(p.get("email", ""))
    if not email or not valid_email(email):
        raise RestError("registration-error-invalid-email", "Please provide a valid email address.", 400)
    if site.network.user_by_email(email) is not None:
        raise RestError("registration-error-email-exists",
                        'An account is already registered with your email address. '
                        '<a href="#" class="showlogin">Please log in.</a>',
                        400)
    username = php.sanitize_text_field(p.get("username", ""))
    if username:
        if not re.match(r"^[A-Za-z0-9 _.\-@]+$", username):
            raise RestError("registration-error-invalid-username", "Please enter a valid account username.", 400)
        if site.network.user_by_login(username) is not None:
            raise RestError("registration-error-username-exists",
                            "An account is already registered with that username. Please choose another.", 400)
    else:
        username = _username_from_email(site, email)
    password = php.php_string(p.get("password", "")) or hashlib.sha256(f"{username}:{email}".encode()).hexdigest()[:24]
    user = site.network.add_user(username, email, password)
    user.registered = user.modified = site.now()
    user.roles[site.blog_id] = "customer"
    _apply_fields(site, user, p)
    return Reply(customer_json(request, user, edit=True), 201,
                 [("Location", request.rest_url(f"/wc/v3/customers/{user.id}"))])


def update_customer(request: Request) -> Reply:
    site, p = request.site, request.params
    user = _find(request)
    if p.isset("email"):
        email = php.sanitize_text_field(p.get("email"))
        if not valid_email(email):
            raise RestError("woocommerce_rest_invalid_email", "Invalid email address.", 400)
        other = site.network.user_by_email(email)
        if other is not None and other.id != user.id:
            raise RestError("registration-error-email-exists",
                            'An account is already registered with your email address. '
                            '<a href="#" class="showlogin">Please log in.</a>',
                            400)
        user.email = email
    if p.isset("username") and php.php_string(p.get("username")) != user.login:
        raise RestError("woocommerce_rest_customer_invalid_argument", "Username isn't editable.", 400)
    if p.isset("password") and p.get("password") != "":
        user.password = php.php_string(p.get("password"))
    _apply_fields(site, user, p)
    return Reply(customer_json(request, user, edit=True))


def delete_customer(request: Request) -> Reply:
    site, p = request.site, request.params
    user = _find(request)
    if not php.php_bool(p.get("force")):
        raise RestError("woocommerce_rest_trash_not_supported", "Customers do not support trashing.", 501)
    data = customer_json(request, user, edit=True)
    if user.super_admin:
        raise RestError("woocommerce_rest_cannot_delete", "The resource cannot be deleted.", 500)
    user.roles.pop(site.blog_id, None)
    if not user.roles:
        site.network.users.pop(user.id, None)
    return Reply(data)


def get_customer(request: Request) -> Reply:
    return Reply(customer_json(request, _find(request)))


def list_customers(request: Request) -> Reply:
    site, p = request.site, request.params
    role = p.get("role", "customer")
    users = [u for u in site.members() if role == "all" or u.roles.get(site.blog_id) == role]
    if p.get("include"):
        users = [u for u in users if u.id in p.get("include")]
    if p.get("exclude"):
        users = [u for u in users if u.id not in p.get("exclude")]
    if p.get("email"):
        wanted = php.php_string(p.get("email")).lower()
        users = [u for u in users if u.email.lower() == wanted]
    elif p.get("search"):
        needle = php.php_string(p.get("search")).lower().strip("*")
        users = [u for u in users if any(needle in field.lower() for field in
                                         (u.login, u.url, u.email, u.nicename, u.display_name))]
    orderby = p.get("orderby", "name")
    if orderby == "include" and p.get("include"):
        position = {uid: i for i, uid in enumerate(p.get("include"))}
        users.sort(key=lambda u: position.get(u.id, 0))
    else:
        keys = {"id": lambda u: u.id, "name": lambda u: (u.display_name.lower(), u.id),
                "registered_date": lambda u: (u.registered, u.id)}
        users.sort(key=keys.get(orderby, keys["name"]), reverse=p.get("order") == "desc")
    page, per_page = php.php_int(p.get("page", 1)), php.php_int(p.get("per_page", 10))
    chunk, headers = paginate(users, request, page, per_page, "/wc/v3/customers")
    return Reply([customer_json(request, u) for u in chunk], headers=headers)


def list_downloads(request: Request) -> Reply:
    _find(request)
    return Reply([])


def batch_customers(request: Request) -> Reply:
    return batch(request, create_customer, update_customer, delete_customer, CREATE_ARGS, CUSTOMER_ARGS)


def register(router: Router) -> None:
    base = "/wc/v3/customers"
    router.add(base, READABLE, list_customers, LIST_ARGS, require("list"))
    router.add(base, CREATABLE, create_customer, CREATE_ARGS, require("create"))
    router.add(base + "/batch", EDITABLE, batch_customers, CUSTOMER_ARGS, require("batch"))
    item = base + r"/(?P<id>[\d]+)"
    router.add(item, READABLE, get_customer, context_param(), require("read"))
    router.add(item, EDITABLE, update_customer, CUSTOMER_ARGS, require("edit"))
    router.add(item, DELETABLE, delete_customer, {"force": {"type": "boolean", "default": False},
                                                  "reassign": {"type": "integer"}}, require("delete"))
    router.add(base + r"/(?P<id>[\d]+)/downloads", READABLE, list_downloads, context_param(), require("read"))
