"""`/wc/v3/shipping/zones` (with locations and methods) and `/wc/v3/shipping_methods`.

Zone 0, "Locations not covered by your other zones", always exists and cannot be changed or deleted
(`woocommerce_rest_shipping_zone_invalid_zone` 403), as upstream.
"""
from __future__ import annotations

from typing import Any

from . import php
from .errors import RestError
from .model import ShippingMethod, ShippingZone
from .rest import CREATABLE, DELETABLE, EDITABLE, READABLE, Reply, Request, Router, self_links
from .wcbase import context_param, require

METHODS = {"flat_rate": ("Flat rate", "Lets you charge a fixed rate for shipping."),
           "free_shipping": ("Free shipping", "Free shipping is a special method which can be triggered with coupons and "
                                              "minimum spends."),
           "local_pickup": ("Local pickup", "Allow customers to pick up orders themselves. By default, when using local "
                                            "pickup store base taxes will apply regardless of customer address.")}


def zone_json(request: Request, zone: ShippingZone) -> dict[str, Any]:
    base = "/wc/v3/shipping/zones"
    return {"id": zone.id, "name": zone.name, "order": zone.order,
            "_links": {**self_links(request, f"{base}/{zone.id}", base),
                       "describedby": [{"href": request.rest_url(f"{base}/{zone.id}/locations")}]}}


def method_json(request: Request, zone: ShippingZone, method: ShippingMethod) -> dict[str, Any]:
    title, description = METHODS.get(method.method_id, (method.method_id, ""))
    base = f"/wc/v3/shipping/zones/{zone.id}/methods"
    settings = {"title": {"id": "title", "label": "Name",
                          "description": "Your customers will see the name of this shipping method during checkout.",
                          "type": "text", "value": method.title, "default": title, "tip": "", "placeholder": ""}}
    for key, value in method.settings.items():
        if key != "title":
            settings[key] = {"id": key, "label": key.replace("_", " ").capitalize(), "description": "", "type": "text",
                             "value": value, "default": "", "tip": "", "placeholder": ""}
    return {"id": method.instance_id, "instance_id": method.instance_id, "title": method.title, "order": method.order,
            "enabled": method.enabled, "method_id": method.method_id, "method_title": title,
            "method_description": f"<p>{description}</p>\n", "settings": settings,
            "_links": {**self_links(request, f"{base}/{method.instance_id}", base),
                       "describes": [{"href": request.rest_url(f"/wc/v3/shipping/zones/{zone.id}")}]}}


def _zone(request: Request, key: str = "id") -> ShippingZone:
    zone = request.site.zones.get(php.php_int(request.params.get(key)))
    if zone is None:
        raise RestError("woocommerce_rest_shipping_zone_invalid", "Resource does not exist.", 404)
    return zone


def _not_default(zone: ShippingZone) -> None:
    if zone.id == 0:
        raise RestError("woocommerce_rest_shipping_zone_invalid_zone",
                        "The \"locations not covered by your other zones\" zone cannot be updated.", 403)


def list_zones(request: Request) -> Reply:
    zones = sorted(request.site.zones.values(), key=lambda z: (z.id == 0, z.order, z.id))
    return Reply([zone_json(request, z) for z in zones])


def get_zone(request: Request) -> Reply:
    return Reply(zone_json(request, _zone(request)))


def create_zone(request: Request) -> Reply:
    site, p = request.site, request.params
    name = php.sanitize_text_field(p.get("name", ""))
    if not name:
        raise RestError("woocommerce_rest_shipping_zone_invalid", "Zone name is required.", 400)
    zone = ShippingZone(site.next_id("zone"), name, php.php_int(p.get("order", 0)))
    site.zones[zone.id] = zone
    return Reply(zone_json(request, zone), 201, [("Location", request.rest_url(f"/wc/v3/shipping/zones/{zone.id}"))])


def update_zone(request: Request) -> Reply:
    zone = _zone(request)
    _not_default(zone)
    p = request.params
    if p.isset("name"):
        zone.name = php.sanitize_text_field(p.get("name"))
    if p.isset("order"):
        zone.order = php.php_int(p.get("order"))
    return Reply(zone_json(request, zone))


def delete_zone(request: Request) -> Reply:
    zone = _zone(request)
    _not_default(zone)
    if not php.php_bool(request.params.get("force")):
        raise RestError("rest_trash_not_supported", "Shipping zones do not support trashing.", 501)
    data = zone_json(request, zone)
    request.site.zones.pop(zone.id, None)
    return Reply(data)


def get_locations(request: Request) -> Reply:
    zone = _zone(request)
    return Reply([{"code": loc["code"], "type": loc["type"],
                   "_links": {"collection": [{"href": request.rest_url(f"/wc/v3/shipping/zones/{zone.id}/locations")}],
                              "describes": [{"href": request.rest_url(f"/wc/v3/shipping/zones/{zone.id}")}]}}
                  for loc in zone.locations])


def update_locations(request: Request) -> Reply:
    zone = _zone(request)
    _not_default(zone)
    raw = request.params.values.get("locations", request.params.values.get("0"))
    items = raw if isinstance(raw, list) else [v for k, v in request.params.values.items() if k.isdigit()]
    zone.locations = [{"code": php.php_string(i.get("code")), "type": php.php_string(i.get("type", "country"))}
                      for i in items if isinstance(i, dict) and i.get("code")]
    return get_locations(request)


def list_methods(request: Request) -> Reply:
    zone = _zone(request, "zone_id")
    return Reply([method_json(request, zone, m) for m in sorted(zone.methods, key=lambda m: (m.order, m.instance_id))])


def _method(request: Request) -> tuple[ShippingZone, ShippingMethod]:
    zone = _zone(request, "zone_id")
    wanted = request.id_param("instance_id")
    method = next((m for m in zone.methods if m.instance_id == wanted), None)
    if method is None:
        raise RestError("woocommerce_rest_shipping_zone_method_invalid", "Resource does not exist.", 404)
    return zone, method


def get_method(request: Request) -> Reply:
    zone, method = _method(request)
    return Reply(method_json(request, zone, method))


def create_method(request: Request) -> Reply:
    site, p = request.site, request.params
    zone = _zone(request, "zone_id")
    method_id = php.php_string(p.get("method_id", ""))
    if method_id not in METHODS:
        raise RestError("woocommerce_rest_shipping_zone_method_invalid", "Resource cannot be created.", 400)
    method = ShippingMethod(site.next_id("zone_method"), method_id, METHODS[method_id][0], len(zone.methods) + 1)
    _apply_method(method, p)
    zone.methods.append(method)
    return Reply(method_json(request, zone, method))


def _apply_method(method: ShippingMethod, p: Any) -> None:
    if p.isset("enabled"):
        method.enabled = php.rest_sanitize_boolean(p.get("enabled"))
    if p.isset("order"):
        method.order = php.php_int(p.get("order"))
    if isinstance(p.get("settings"), dict):
        for key, value in p.get("settings").items():
            if key == "title":
                method.title = php.php_string(value)
            else:
                method.settings[key] = php.php_string(value)


def update_method(request: Request) -> Reply:
    zone, method = _method(request)
    _apply_method(method, request.params)
    return Reply(method_json(request, zone, method))


def delete_method(request: Request) -> Reply:
    zone, method = _method(request)
    if not php.php_bool(request.params.get("force")):
        raise RestError("rest_trash_not_supported", "Shipping methods do not support trashing.", 501)
    data = method_json(request, zone, method)
    zone.methods.remove(method)
    return Reply(data)


def list_method_types(request: Request) -> Reply:
    return Reply([_method_type(request, method_id) for method_id in METHODS])


def _method_type(request: Request, method_id: str) -> dict[str, Any]:
    title, description = METHODS[method_id]
    return {"id": method_id, "title": title, "description": description,
            "_links": {"self": [{"href": request.rest_url(f"/wc/v3/shipping_methods/{method_id}")}],
                       "collection": [{"href": request.rest_url("/wc/v3/shipping_methods")}]}}


def get_method_type(request: Request) -> Reply:
    method_id = php.php_string(request.params.get("id"))
    if method_id not in METHODS:
        raise RestError("woocommerce_rest_shipping_method_invalid", "Resource does not exist.", 404)
    return Reply(_method_type(request, method_id))


def register(router: Router) -> None:
    base = "/wc/v3/shipping/zones"
    router.add(base, READABLE, list_zones, {}, require("list"))
    router.add(base, CREATABLE, create_zone, {"name": {"type": "string", "required": True}, "order": {"type": "integer"}},
               require("create"))
    item = base + r"/(?P<id>[\d]+)"
    router.add(item, READABLE, get_zone, context_param(), require("read"))
    router.add(item, EDITABLE, update_zone, {"name": {"type": "string"}, "order": {"type": "integer"}}, require("edit"))
    router.add(item, DELETABLE, delete_zone, {"force": {"type": "boolean", "default": False}}, require("delete"))
    router.add(item + "/locations", READABLE, get_locations, {}, require("read"))
    router.add(item + "/locations", EDITABLE, update_locations, {}, require("edit"))
    methods = base + r"/(?P<zone_id>[\d]+)/methods"
    router.add(methods, READABLE, list_methods, {}, require("list"))
    router.add(methods, CREATABLE, create_method, {"method_id": {"type": "string", "required": True},
                                                   "order": {"type": "integer"}, "enabled": {"type": "boolean"},
                                                   "settings": {"type": "object"}}, require("create"))
    method_item = methods + r"/(?P<instance_id>[\d]+)"
    router.add(method_item, READABLE, get_method, {}, require("read"))
    router.add(method_item, EDITABLE, update_method, {"order": {"type": "integer"}, "enabled": {"type": "boolean"},
                                                      "settings": {"type": "object"}}, require("edit"))
    router.add(method_item, DELETABLE, delete_method, {"force": {"type": "boolean", "default": False}}, require("delete"))
    router.add("/wc/v3/shipping_methods", READABLE, list_method_types, {}, require("list"))
    router.add(r"/wc/v3/shipping_methods/(?P<id>[\w-]+)", READABLE, get_method_type, {}, require("read"))
