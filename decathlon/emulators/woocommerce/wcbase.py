"""What every WooCommerce controller shares: permission errors, collection parameters, batches.

Permission failures read as upstream's (`woocommerce_rest_cannot_view` "Sorry, you cannot list
resources." ...), 401 for an anonymous request and 403 for a logged-in one without the capability.
A batch runs its create, update and delete lists through the single-item handlers and reports each
failure in place (`{"id": .., "error": {code, message, data}}`); more than 100 items in all is 413.
A delete entry is cast with PHP's (int), so `{"id": 5}` deletes product 1, as upstream.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import php
from .auth import can_manage, write_denied
from .errors import RestError
from .params import Params, Schema, with_defaults
from .rest import Reply, Request, auth_status

BATCH_LIMIT = 100
DATE_TYPE = ["null", "string"]
MIXED = ["null", "object", "string", "number", "boolean", "integer", "array"]
META_DATA = {"type": "array", "items": {"type": "object", "properties": {
    "id": {"type": "integer"}, "key": {"type": "string"}, "value": {"type": MIXED}}}}

_MESSAGES = {
    "list": ("woocommerce_rest_cannot_view", "Sorry, you cannot list resources."),
    "read": ("woocommerce_rest_cannot_view", "Sorry, you cannot view this resource."),
    "create": ("woocommerce_rest_cannot_create", "Sorry, you are not allowed to create resources."),
    "edit": ("woocommerce_rest_cannot_edit", "Sorry, you are not allowed to edit this resource."),
    "delete": ("woocommerce_rest_cannot_delete", "Sorry, you are not allowed to delete this resource."),
    "batch": ("woocommerce_rest_cannot_batch", "Sorry, you are not allowed to batch manipulate this resource."),
}


def require(action: str, exists: Callable[[Request], bool] | None = None) -> Callable[[Request], None]:
    """A permission callback: the request's user must manage the shop (checked only if `exists` says so)."""

    def permission(request: Request) -> None:
        denied = write_denied(request.key_permissions, request.method)
        if denied is not None:
            raise denied
        if exists is not None and not exists(request):
            return  # upstream checks the object's permission only when it exists; the handler says 404
        if not can_manage(request.user, request.site):
            code, message = _MESSAGES[action]
            raise RestError(code, message, auth_status(request))

    return permission


def collection_params(orderby: list[str], orderby_default: str = "date", extra: dict[str, Schema] | None = None,
                      per_page_max: int = 100) -> dict[str, Schema]:
    params: dict[str, Schema] = {
        "context": {"type": "string", "enum": ["view", "edit"], "default": "view"},
        "page": {"type": "integer", "default": 1, "minimum": 1, "sanitize": "absint"},
        "per_page": {"type": "integer", "default": 10, "minimum": 1, "maximum": per_page_max, "sanitize": "absint"},
        "search": {"type": "string", "sanitize": "sanitize_text_field"},
        "after": {"type": "string"},
        "before": {"type": "string"},
        "modified_after": {"type": "string"},
        "modified_before": {"type": "string"},
        "dates_are_gmt": {"type": "boolean", "default": False},
        "exclude": {"type": "array", "items": {"type": "integer"}, "default": [], "sanitize": "wp_parse_id_list",
                    "validate": False},
        "include": {"type": "array", "items": {"type": "integer"}, "default": [], "sanitize": "wp_parse_id_list",
                    "validate": False},
        "offset": {"type": "integer", "sanitize": "absint"},
        "order": {"type": "string", "default": "desc", "enum": ["asc", "desc"]},
        "orderby": {"type": "string", "default": orderby_default, "enum": orderby},
    }
    params.update(extra or {})
    return params


def context_param() -> dict[str, Schema]:
    return {"context": {"type": "string", "enum": ["view", "edit"], "default": "view"}}


def item_args(schema: dict[str, Schema], creating: bool) -> dict[str, Schema]:
    """`get_endpoint_args_for_item_schema`: writable properties; defaults only when creating."""
    args = {}
    for name, prop in schema.items():
        if prop.get("readonly"):
            continue
        arg = {key: value for key, value in prop.items() if key != "default" or creating}
        args[name] = arg
    return args


def sub_request(parent: Request, method: str, body: dict[str, Any], args: dict[str, Schema],
                url_params: dict[str, Any] | None = None, defaults: bool = False) -> Request:
    """A single-item request carved out of a batch (its body as JSON params)."""
    layers: dict[str, Any] = {}
    if defaults:
        layers.update(with_defaults(args))
    layers.update(url_params or {})
    layers.update({key: value for key, value in parent.query.items() if key in ("context",)})
    layers.update(body if isinstance(body, dict) else {})
    params = Params(dict(layers), set(body) if isinstance(body, dict) else set())
    return Request(parent.site, method, parent.route, params, parent.query, b"", "application/json", parent.headers,
                   parent.scheme, parent.user, parent.key_permissions)


def error_entry(error: RestError, item_id: Any) -> dict[str, Any]:
    return {"id": item_id, "error": {"code": error.code, "message": error.message, "data": error.data}}


def batch(request: Request, create: Callable[[Request], Reply] | None, update: Callable[[Request], Reply] | None,
          delete: Callable[[Request], Reply] | None, create_args: dict[str, Schema], update_args: dict[str, Schema],
          url_params: dict[str, Any] | None = None) -> Reply:
    """`WC_REST_Controller::batch_items`."""
    items = {key: request.params.values.get(key) for key in ("create", "update", "delete")}
    items = {key: value for key, value in items.items() if not php.php_empty(value)}
    total = sum(len(value) if isinstance(value, (list, dict)) else 1 for value in items.values())
    if total > BATCH_LIMIT:
        raise RestError("woocommerce_rest_request_entity_too_large",
                        f"Unable to accept more than {BATCH_LIMIT} items for this request.", 413)
    out: dict[str, list[Any]] = {}
    for item in _as_list(items.get("create")):
        sub = sub_request(request, "POST", item, create_args, url_params, defaults=True)
        out.setdefault("create", []).append(_run(sub, create, create_args, 0))
    for item in _as_list(items.get("update")):
        sub = sub_request(request, "PUT", item, update_args, url_params)
        item_id = item.get("id") if isinstance(item, dict) else None
        out.setdefault("update", []).append(_run(sub, update, update_args, item_id))
    for entry in _as_list(items.get("delete")):
        item_id = php.php_int(entry)
        if item_id == 0:
            continue
        body = {"id": item_id, "force": True}
        sub = sub_request(request, "DELETE", {}, {}, {**(url_params or {}), **body})
        out.setdefault("delete", []).append(_run(sub, delete, {}, item_id))
    return Reply(out)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return value
    return [value]


def _run(sub: Request, handler: Callable[[Request], Reply] | None, args: dict[str, Schema], item_id: Any) -> Any:
    """One batch entry: upstream calls the item handler directly, so nothing is validated or cast first."""
    if handler is None:
        return error_entry(RestError("rest_no_route", "No route was found matching the URL and request method.", 404), item_id)
    try:
        return handler(sub).data
    except RestError as error:
        return error_entry(error, item_id)
