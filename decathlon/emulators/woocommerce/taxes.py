"""`/wc/v3/taxes` (tax rates) and `/wc/v3/taxes/classes`.

A fresh store has no rates and the classes Standard, Reduced rate and Zero rate; rates are paged
(default 10), ordered by their `order` then id, and cannot be trashed.
"""
from __future__ import annotations

from typing import Any

from . import php
from .errors import RestError
from .model import TaxRate
from .params import Schema
from .rest import CREATABLE, DELETABLE, EDITABLE, READABLE, Reply, Request, Router, paginate, self_links
from .wcbase import batch, context_param, require

RATE_ARGS: dict[str, Schema] = {
    "country": {"type": "string"}, "state": {"type": "string"}, "postcode": {"type": "string"},
    "city": {"type": "string"}, "postcodes": {"type": "array", "items": {"type": "string"}},
    "cities": {"type": "array", "items": {"type": "string"}}, "rate": {"type": "string"}, "name": {"type": "string"},
    "priority": {"type": "integer"}, "compound": {"type": "boolean"}, "shipping": {"type": "boolean"},
    "order": {"type": "integer"}, "class": {"type": "string"},
}
LIST_ARGS: dict[str, Schema] = {
    "context": {"type": "string", "enum": ["view", "edit"], "default": "view"},
    "page": {"type": "integer", "default": 1, "minimum": 1, "sanitize": "absint"},
    "per_page": {"type": "integer", "default": 10, "minimum": 1, "maximum": 100, "sanitize": "absint"},
    "offset": {"type": "integer", "sanitize": "absint"},
    "order": {"type": "string", "default": "asc", "enum": ["asc", "desc"]},
    "orderby": {"type": "string", "default": "order", "enum": ["id", "order", "priority"]},
    "class": {"type": "string"},
}


def rate_json(request: Request, rate: TaxRate) -> dict[str, Any]:
    return {"id": rate.id, "country": rate.country, "state": rate.state,
            "postcode": rate.postcodes[0] if rate.postcodes else "", "city": rate.cities[0] if rate.cities else "",
            "postcodes": rate.postcodes, "cities": rate.cities, "rate": rate.rate, "name": rate.name,
            "priority": rate.priority, "compound": rate.compound, "shipping": rate.shipping, "order": rate.order,
            "class": rate.tax_class, "_links": self_links(request, f"/wc/v3/taxes/{rate.id}", "/wc/v3/taxes")}


def _apply(rate: TaxRate, p: Any, site: Any) -> None:
    if p.isset("country"):
        rate.country = php.sanitize_text_field(p.get("country")).upper()
    if p.isset("state"):
        rate.state = php.sanitize_text_field(p.get("state")).upper()
    if p.isset("postcodes"):
        rate.postcodes = [php.sanitize_text_field(v).upper() for v in php.wp_parse_list(p.get("postcodes"))]
    elif p.isset("postcode"):
        rate.postcodes = [v.strip().upper() for v in php.php_string(p.get("postcode")).split(";") if v.strip()]
    if p.isset("cities"):
        rate.cities = [php.sanitize_text_field(v).upper() for v in php.wp_parse_list(p.get("cities"))]
    elif p.isset("city"):
        rate.cities = [v.strip().upper() for v in php.php_string(p.get("city")).split(";") if v.strip()]
    if p.isset("rate"):
        rate.rate = php.wc_format_decimal(p.get("rate"), 4)
    if p.isset("name"):
        rate.name = php.sanitize_text_field(p.get("name"))
    if p.isset("priority"):
        rate.priority = php.absint(p.get("priority"))
    if p.isset("compound"):
        rate.compound = php.rest_sanitize_boolean(p.get("compound"))
    if p.isset("shipping"):
        rate.shipping = php.rest_sanitize_boolean(p.get("shipping"))
    if p.isset("order"):
        rate.order = php.absint(p.get("order"))
    if p.isset("class"):
        wanted = php.sanitize_title(p.get("class"))
        rate.tax_class = wanted if wanted in {s for _, s in site.tax_classes} else "standard"


def _rate(request: Request) -> TaxRate:
    rate = request.site.tax_rates.get(request.id_param())
    if rate is None:
        raise RestError("woocommerce_rest_invalid_id", "Invalid resource ID.", 404)
    return rate


def list_rates(request: Request) -> Reply:
    p = request.params
    rates = list(request.site.tax_rates.values())
    if p.get("class"):
        wanted = php.sanitize_title(p.get("class"))
        rates = [r for r in rates if r.tax_class == wanted]
    keys = {"id": lambda r: r.id, "order": lambda r: (r.order, r.id), "priority": lambda r: (r.priority, r.id)}
    rates.sort(key=keys.get(p.get("orderby", "order"), keys["order"]), reverse=p.get("order") == "desc")
    chunk, headers = paginate(rates, request, php.php_int(p.get("page", 1)), php.php_int(p.get("per_page", 10)),
                              "/wc/v3/taxes")
    return Reply([rate_json(request, r) for r in chunk], headers=headers)


def get_rate(request: Request) -> Reply:
    return Reply(rate_json(request, _rate(request)))


def create_rate(request: Request) -> Reply:
    site = request.site
    if not php.php_empty(request.params.get("id")):
        raise RestError("woocommerce_rest_tax_exists", "Cannot create existing resource.", 400)
    rate = TaxRate(site.next_id("tax_rate"))
    _apply(rate, request.params, site)
    site.tax_rates[rate.id] = rate
    return Reply(rate_json(request, rate), 201, [("Location", request.rest_url(f"/wc/v3/taxes/{rate.id}"))])


def update_rate(request: Request) -> Reply:
    rate = _rate(request)
    _apply(rate, request.params, request.site)
    return Reply(rate_json(request, rate))


def delete_rate(request: Request) -> Reply:
    rate = _rate(request)
    if not php.php_bool(request.params.get("force")):
        raise RestError("woocommerce_rest_trash_not_supported", "Taxes do not support trashing.", 501)
    data = rate_json(request, rate)
    request.site.tax_rates.pop(rate.id, None)
    return Reply(data)


def batch_rates(request: Request) -> Reply:
    return batch(request, create_rate, update_rate, delete_rate, RATE_ARGS, RATE_ARGS)


def _class_json(request: Request, name: str, slug: str) -> dict[str, Any]:
    return {"slug": slug, "name": name,
            "_links": {"collection": [{"href": request.rest_url("/wc/v3/taxes/classes")}]}}


def list_classes(request: Request) -> Reply:
    classes = [("Standard", "standard"), *request.site.tax_classes]
    return Reply([_class_json(request, name, slug) for name, slug in classes])


def create_class(request: Request) -> Reply:
    site = request.site
    name = php.sanitize_text_field(request.params.get("name", ""))
    if not name:
        raise RestError("woocommerce_rest_invalid_tax_class", "Tax class requires a valid name", 400)
    slug = php.sanitize_title(name)
    if slug == "standard" or any(s == slug for _, s in site.tax_classes):
        raise RestError("woocommerce_rest_tax_class_exists", "Tax class already exists", 400)
    site.tax_classes.append((name, slug))
    return Reply(_class_json(request, name, slug), 201)


def delete_class(request: Request) -> Reply:
    site = request.site
    slug = php.sanitize_title(request.params.get("slug"))
    if not php.php_bool(request.params.get("force")):
        raise RestError("woocommerce_rest_trash_not_supported", "Taxes do not support trashing.", 501)
    entry = next(((n, s) for n, s in site.tax_classes if s == slug), None)
    if entry is None:
        raise RestError("woocommerce_rest_invalid_id", "Invalid resource id.", 400)
    site.tax_classes.remove(entry)
    return Reply(_class_json(request, *entry))


def register(router: Router) -> None:
    router.add("/wc/v3/taxes", READABLE, list_rates, LIST_ARGS, require("list"))
    router.add("/wc/v3/taxes", CREATABLE, create_rate, RATE_ARGS, require("create"))
    router.add("/wc/v3/taxes/batch", EDITABLE, batch_rates, {}, require("batch"))
    router.add("/wc/v3/taxes/classes", READABLE, list_classes, context_param(), require("list"))
    router.add("/wc/v3/taxes/classes", CREATABLE, create_class, {"name": {"type": "string", "required": True}},
               require("create"))
    router.add(r"/wc/v3/taxes/classes/(?P<slug>[\w-]+)", DELETABLE, delete_class,
               {"force": {"type": "boolean", "default": False}}, require("delete"))
    item = r"/wc/v3/taxes/(?P<id>[\d]+)"
    router.add(item, READABLE, get_rate, context_param(), require("read"))
    router.add(item, EDITABLE, update_rate, RATE_ARGS, require("edit"))
    router.add(item, DELETABLE, delete_rate, {"force": {"type": "boolean", "default": False}}, require("delete"))
