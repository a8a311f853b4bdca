"""Who a request is, decided the way upstream's stack decides it.

- `wc/*` routes: WooCommerce's keys. HTTP Basic (key as user, secret as password) or the
  `consumer_key`/`consumer_secret` query parameters; a known key with a wrong secret fails the whole
  request (401 `woocommerce_rest_authentication_error`, "Consumer secret is invalid."); a key this
  site does not have (another store's) just leaves the request anonymous, so it then fails the
  endpoint's permission check (401 `woocommerce_rest_cannot_view` ...). Keys belong to the network
  admin (user 1), with read_write permission, as the deployment inserted them. OAuth 1.0a signatures
  (query or `Authorization: OAuth`) are checked as WooCommerce checks them.
- Every route: WordPress' login cookie (from wp-login.php) counts only with a valid `X-WP-Nonce`
  (or `_wpnonce`), as `rest_cookie_check_errors` requires; a bad nonce is 403 `rest_cookie_invalid_nonce`.
- HTTP Basic on `wp/v2` routes is not a login: upstream has no application passwords in use, so
  WordPress ignores those credentials and the request is anonymous.

Upstream's Apache sets HTTPS=on whenever an Authorization header is present, so such requests get
https:// URLs in responses while anonymous and cookie ones get http://; `scheme_for` reproduces that.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from urllib.parse import quote, unquote

from .errors import RestError
from .model import User
from .site import Site

COOKIE_HASH = hashlib.md5(b"http://localhost:10003").hexdigest()
LOGGED_IN_COOKIE = f"wordpress_logged_in_{COOKIE_HASH}"
OAUTH_PARAMS = ("oauth_consumer_key", "oauth_timestamp", "oauth_nonce", "oauth_signature", "oauth_signature_method")
OAUTH_WINDOW = 15 * 60


@dataclass
class Identity:
    user: User | None = None
    key_permissions: str | None = None
    error: RestError | None = None


def scheme_for(headers: dict[str, str]) -> str:
    return "https" if headers.get("authorization") else "http"


def basic_credentials(headers: dict[str, str]) -> tuple[str, str] | None:
    header = headers.get("authorization", "")
    if not header[:6].lower() == "basic ":
        return None
    try:
        decoded = base64.b64decode(header[6:].strip(), validate=False).decode("utf-8", "replace")
    except (ValueError, TypeError):
        return None
    user, sep, password = decoded.partition(":")
    return (user, password) if sep else None


def login_cookie_value(user: User) -> str:
    token = hashlib.sha256(f"{user.id}:{user.login}:{user.password}".encode()).hexdigest()
    return f"{user.login}|2145916800|{token[:43]}|{token[43:]}"


def user_from_cookie(site: Site, cookies: dict[str, str]) -> User | None:
    value = cookies.get(LOGGED_IN_COOKIE)
    if not value:
        return None
    login = unquote(value).split("|", 1)[0]
    user = site.network.user_by_login(login)
    if user is None or unquote(value) != login_cookie_value(user):
        return None
    return user


def rest_nonce(site: Site, user: User) -> str:
    tick = site.now().timestamp() // 43200
    return hashlib.md5(f"{int(tick)}|wp_rest|{user.id}|{site.blog_id}".encode()).hexdigest()[-12:-2]


def nonce_valid(site: Site, user: User, nonce: str) -> bool:
    tick = int(site.now().timestamp() // 43200)
    for candidate in (tick, tick - 1):
        if hashlib.md5(f"{candidate}|wp_rest|{user.id}|{site.blog_id}".encode()).hexdigest()[-12:-2] == nonce:
            return True
    return False


def authenticate(site: Site, route: str, method: str, headers: dict[str, str], query: dict[str, object],
                 cookies: dict[str, str], full_url_path: str) -> Identity:
    cookie_user = user_from_cookie(site, cookies)
    if cookie_user is not None:
        nonce = headers.get("x-wp-nonce") or query.get("_wpnonce")
        if not nonce:
            return Identity()  # a cookie without a nonce is anonymous for the REST API
        if not isinstance(nonce, str) or not nonce_valid(site, cookie_user, nonce):
            return Identity(error=RestError("rest_cookie_invalid_nonce", "Cookie check failed", 403))
        return Identity(user=cookie_user, key_permissions=None)
    if not route.startswith(("/wc/", "/wc-auth/", "/wc-analytics/")):
        return Identity()
    return _woocommerce_keys(site, method, headers, query, full_url_path)


def _woocommerce_keys(site: Site, method: str, headers: dict[str, str], query: dict[str, object],
                      path: str) -> Identity:
    key = secret = ""
    if isinstance(query.get("consumer_key"), str) and isinstance(query.get("consumer_secret"), str) \
            and query["consumer_key"] and query["consumer_secret"]:
        key, secret = str(query["consumer_key"]), str(query["consumer_secret"])
    else:
        credentials = basic_credentials(headers)
        if credentials and credentials[0] and credentials[1]:
            key, secret = credentials
    if key and secret:
        found = next((k for k in site.api_keys if k.consumer_key == key), None)
        if found is not None:
            if not hmac.compare_digest(found.consumer_secret, secret):
                return Identity(error=RestError("woocommerce_rest_authentication_error", "Consumer secret is invalid.", 401))
            return Identity(user=site.network.users.get(found.user_id), key_permissions=found.permissions)
    return _oauth(site, method, headers, query, path)


def _oauth(site: Site, method: str, headers: dict[str, str], query: dict[str, object], path: str) -> Identity:
    params: dict[str, object] = dict(query)
    header = headers.get("authorization", "")
    if header[:6].lower() == "oauth ":
        for part in header[6:].split(","):
            name, sep, value = part.strip().partition("=")
            if sep and name.startswith("oauth_"):
                params[name] = unquote(value.strip().strip('"'))
    missing = [name for name in OAUTH_PARAMS if not params.get(name)]
    if len(missing) == len(OAUTH_PARAMS):
        return Identity()
    if missing:
        noun = "parameter" if len(missing) == 1 else "parameters"
        return Identity(error=RestError("woocommerce_rest_authentication_missing_parameter",
                                        f"Missing OAuth {noun} {', '.join(missing)}", 401))
    found = next((k for k in site.api_keys if k.consumer_key == params["oauth_consumer_key"]), None)
    if found is None:
        return Identity(error=RestError("woocommerce_rest_authentication_error", "Consumer key is invalid.", 401))
    method_name = str(params["oauth_signature_method"])
    if method_name not in ("HMAC-SHA1", "HMAC-SHA256"):
        return Identity(error=RestError("woocommerce_rest_authentication_error",
                                        "Invalid signature - signature method is invalid.", 401))
    signature = unquote(str(params.pop("oauth_signature")).replace(" ", "+"))
    base_uri = quote(site.home(scheme_for(headers)).split("://", 1)[0] + "://" + site.network.host + path, safe="")
    pairs = []
    for name in sorted(params):
        param = params[name]
        values = param if isinstance(param, list) else [param]
        for item in values:
            pairs.append(quote(f"{_rfc3986(name)}={_rfc3986(str(item))}", safe=""))
    string_to_sign = f"{method}&{base_uri}&{'%26'.join(pairs)}"
    digest = hashlib.sha1 if method_name == "HMAC-SHA1" else hashlib.sha256
    expected = base64.b64encode(hmac.new(f"{found.consumer_secret}&".encode(), string_to_sign.encode(), digest).digest()).decode()
    if not hmac.compare_digest(expected, signature):
        return Identity(error=RestError("woocommerce_rest_authentication_error",
                                        "Invalid signature - provided signature does not match.", 401))
    try:
        timestamp = int(str(params["oauth_timestamp"]))
    except ValueError:
        timestamp = 0
    if timestamp < site.now().timestamp() - OAUTH_WINDOW:
        return Identity(error=RestError("woocommerce_rest_authentication_error", "Invalid timestamp.", 401))
    nonce = str(params["oauth_nonce"])
    if nonce in site.nonces:
        return Identity(error=RestError("woocommerce_rest_authentication_error",
                                        "Invalid nonce - nonce has already been used.", 401))
    site.nonces.add(nonce)
    return Identity(user=site.network.users.get(found.user_id), key_permissions=found.permissions)


def _rfc3986(text: str) -> str:
    return quote(text, safe="~")


def can_manage(user: User | None, site: Site) -> bool:
    """manage_woocommerce and friends: the network admin and the site's administrators/shop managers."""
    if user is None:
        return False
    return user.super_admin or user.roles.get(site.blog_id) in ("administrator", "shop_manager")


def can_edit_posts(user: User | None, site: Site) -> bool:
    if user is None:
        return False
    return user.super_admin or user.roles.get(site.blog_id) in ("administrator", "editor", "author", "shop_manager")


def write_denied(identity_permissions: str | None, method: str) -> RestError | None:
    """A read-only key cannot write, a write-only key cannot read (WooCommerce's check_permissions)."""
    if identity_permissions is None:
        return None
    if method in ("HEAD", "GET") and identity_permissions not in ("read", "read_write"):
        return RestError("woocommerce_rest_authentication_error", "The API key provided does not have read permissions.", 401)
    if method in ("POST", "PUT", "PATCH", "DELETE") and identity_permissions not in ("write", "read_write"):
        return RestError("woocommerce_rest_authentication_error", "The API key provided does not have write permissions.", 401)
    return None
