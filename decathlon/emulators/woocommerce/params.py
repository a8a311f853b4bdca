"""WP_REST_Request's parameters: precedence, defaults, schema validation and sanitizing.

A route's `args` are JSON-schema fragments as WordPress registers them. Like `has_valid_params`,
missing required args fail first ("Missing parameter(s): x"), then every non-null value is
checked against its schema ("Invalid parameter(s): x", with `params` and `details` naming each
failure), and only then are values sanitized (absint, wp_parse_id_list, type casts). A null value
is neither checked nor sanitized: WordPress skips it, and handlers then treat it as absent.

Precedence follows `get_parameter_order`: JSON body over form body over query over the route's
own captures over defaults, so a JSON `"id"` really does override the id in the URL, as upstream.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import php
from .errors import RestError

Schema = dict[str, Any]
Sanitizer = Callable[[Any], Any]

_SANITIZERS: dict[str, Sanitizer] = {
    "absint": php.absint,
    "wp_parse_id_list": php.wp_parse_id_list,
    "sanitize_text_field": php.sanitize_text_field,
    "sanitize_key": php.sanitize_key,
    "sanitize_title": php.sanitize_title,
    "wc_clean": php.wc_clean,
    "wp_parse_slug_list": lambda value: [php.sanitize_title(item) for item in php.wp_parse_list(value)],
    "rest_sanitize_boolean": php.rest_sanitize_boolean,
    "wp_parse_list": php.wp_parse_list,
}


@dataclass
class Issue:
    code: str
    message: str
    data: dict[str, Any] | None = None


def rest_is_integer(value: Any) -> bool:
    if isinstance(value, bool) or not php.is_numeric(value):
        return False
    number = php.php_float(value)
    return math.isfinite(number) and float(round(number)) == number


def rest_is_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    if isinstance(value, str):
        return value.lower() in ("false", "true", "0", "1")
    if isinstance(value, int):
        return value in (0, 1)
    return False


def rest_is_array(value: Any) -> bool:
    if isinstance(value, (str, int, float, bool)):
        return True  # a scalar is a comma/space separated list (wp_parse_list)
    if isinstance(value, list):
        return True
    if isinstance(value, dict):
        return all(_numeric_key(key) for key in value)
    return False


def _numeric_key(key: Any) -> bool:
    return isinstance(key, int) or (isinstance(key, str) and key.lstrip("-").isdigit())


def rest_is_object(value: Any) -> bool:
    return value == "" or isinstance(value, (dict, list))


def rest_sanitize_array(value: Any) -> list[Any]:
    if isinstance(value, (str, int, float, bool)):
        return php.wp_parse_list(value)
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return value
    return []


def rest_sanitize_object(value: Any) -> dict[str, Any]:
    if value == "" or value is None:
        return {}
    if isinstance(value, list):
        return {str(index): item for index, item in enumerate(value)}
    if isinstance(value, dict):
        return value
    return {}


_CHECKS: dict[str, Callable[[Any], bool]] = {
    "array": rest_is_array,
    "object": rest_is_object,
    "integer": rest_is_integer,
    "number": php.is_numeric,
    "boolean": rest_is_boolean,
    "string": lambda value: isinstance(value, str),
    "null": lambda value: value is None,
}


def best_type(value: Any, types: list[str]) -> str:
    if value == "" and "string" in types:
        return "string"
    for kind in types:
        check = _CHECKS.get(kind)
        if check is not None and check(value):
            return kind
    return ""


def _wp_list(items: list[str]) -> str:
    """wp_sprintf's %l: "a", "a and b", "a, b, and c"."""
    if len(items) == 1:
        return items[0]
    if len(items) == 2:
        return f"{items[0]} and {items[1]}"
    return ", ".join(items[:-1]) + ", and " + items[-1]


def _fmt_bound(number: Any) -> str:
    return str(php.php_int(number))  # printf %d


def validate(value: Any, schema: Schema, param: str) -> Issue | None:
    """`rest_validate_value_from_schema` for the keywords WooCommerce's schemas use."""
    kind = schema.get("type")
    if isinstance(kind, list):
        chosen = best_type(value, kind)
        if not chosen:
            message = f"{param} is not of type {','.join(kind)}."
            return Issue("rest_invalid_type", message, {"param": param})
        kind = chosen
    issue = _validate_type(value, schema, kind, param)
    if issue is not None:
        return issue
    if schema.get("enum"):
        issue = _validate_enum(value, schema, kind, param)
        if issue is not None:
            return issue
    if schema.get("format") == "email" and kind == "string" and value and "@" not in value:
        return Issue("rest_invalid_email", "Invalid email address.")
    return None


def _validate_type(value: Any, schema: Schema, kind: Any, param: str) -> Issue | None:
    def wrong(type_name: str) -> Issue:
        return Issue("rest_invalid_type", f"{param} is not of type {type_name}.", {"param": param})

    if kind == "null":
        return None if value is None else wrong("null")
    if kind == "boolean":
        return None if rest_is_boolean(value) else wrong("boolean")
    if kind == "object":
        if not rest_is_object(value):
            return wrong("object")
        obj = rest_sanitize_object(value)
        required = schema.get("required")
        if isinstance(required, list):
            for name in required:
                if name not in obj:
                    return Issue("rest_property_required", f"{name} is a required property of {param}.")
        for key, item in obj.items():
            sub = (schema.get("properties") or {}).get(key)
            if sub is not None:
                issue = validate(item, sub, f"{param}[{key}]")
                if issue is not None:
                    return issue
            elif schema.get("additionalProperties") is False:
                return Issue("rest_additional_properties_forbidden", f"{key} is not a valid property of Object.")
        return None
    if kind == "array":
        if not rest_is_array(value):
            return wrong("array")
        items = rest_sanitize_array(value)
        if "items" in schema:
            for index, item in enumerate(items):
                issue = validate(item, schema["items"], f"{param}[{index}]")
                if issue is not None:
                    return issue
        return None
    if kind in ("number", "integer"):
        if not php.is_numeric(value):
            return wrong(kind)
        number = php.php_float(value)
        bounds = _validate_bounds(number, schema, param)
        if bounds is not None:
            return bounds
        if kind == "integer" and not rest_is_integer(value):
            return wrong("integer")
        return None
    if kind == "string":
        if not isinstance(value, str):
            return wrong("string")
        min_length = schema.get("minLength")
        if min_length is not None and len(value) < min_length:
            unit = "character" if min_length == 1 else "characters"
            return Issue("rest_too_short", f"{param} must be at least {min_length} {unit} long.")
        return None
    return None


def _validate_bounds(number: float, schema: Schema, param: str) -> Issue | None:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is None and number < low:
        return Issue("rest_out_of_bounds", f"{param} must be greater than or equal to {_fmt_bound(low)}")
    if high is not None and low is None and number > high:
        return Issue("rest_out_of_bounds", f"{param} must be less than or equal to {_fmt_bound(high)}")
    if low is not None and high is not None and (number < low or number > high):
        return Issue("rest_out_of_bounds",
                     f"{param} must be between {_fmt_bound(low)} (inclusive) and {_fmt_bound(high)} (inclusive)")
    return None


def _validate_enum(value: Any, schema: Schema, kind: Any, param: str) -> Issue | None:
    sanitized = sanitize(value, {**schema, "type": kind})
    if any(_values_equal(sanitized, option) for option in schema["enum"]):
        return None
    shown = [php.php_string(option) if not isinstance(option, (list, dict)) else str(option) for option in schema["enum"]]
    if len(shown) == 1:
        return Issue("rest_not_in_enum", f"{param} is not {shown[0]}.")
    return Issue("rest_not_in_enum", f"{param} is not one of {_wp_list(shown)}.")


def _values_equal(left: Any, right: Any) -> bool:
    """`rest_are_values_equal`: strict, except that an int and a float compare as numbers."""
    numbers = (int, float)
    if isinstance(left, numbers) and isinstance(right, numbers) and not isinstance(left, bool) \
            and not isinstance(right, bool):
        return float(left) == float(right)
    return type(left) is type(right) and left == right


def sanitize(value: Any, schema: Schema) -> Any:
    """`rest_sanitize_value_from_schema`."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = best_type(value, kind)
        if not kind:
            return None
    if kind == "array":
        items = rest_sanitize_array(value)
        if "items" in schema:
            return [sanitize(item, schema["items"]) for item in items]
        return items
    if kind == "object":
        obj = rest_sanitize_object(value)
        properties = schema.get("properties") or {}
        out = {}
        for key, item in obj.items():
            if key in properties:
                out[key] = sanitize(item, properties[key])
            elif schema.get("additionalProperties") is False:
                continue
            else:
                out[key] = item
        return out
    if kind == "null":
        return None
    if kind == "integer":
        return php.php_int(value)
    if kind == "number":
        return php.php_float(value)
    if kind == "boolean":
        return php.rest_sanitize_boolean(value)
    if kind == "string":
        return php.php_string(value) if not isinstance(value, (list, dict)) else value
    return value


@dataclass
class Params:
    """The request's parameters after merging: `get` reads like `$request['x']`."""

    values: dict[str, Any] = field(default_factory=dict)
    present: set[str] = field(default_factory=set)  # keys the client actually sent (array_key_exists)

    def get(self, key: str, default: Any = None) -> Any:
        value = self.values.get(key, default)
        return default if value is None else value

    def isset(self, key: str) -> bool:
        """PHP isset(): present and not null."""
        return self.values.get(key) is not None

    def sent(self, key: str) -> bool:
        return key in self.present

    def set(self, key: str, value: Any) -> None:
        self.values[key] = value

    def pop(self, key: str) -> None:
        self.values.pop(key, None)


def merge(layers: list[Mapping[str, Any]]) -> Params:
    """Layers from lowest to highest precedence (defaults, route, query, form body, JSON body)."""
    params = Params()
    for index, layer in enumerate(layers):
        for key, value in layer.items():
            params.values[key] = value
            if index > 0:
                params.present.add(key)
    return params


def check(args: Mapping[str, Schema], params: Params) -> None:
    """Required, then validity, then sanitizing, in place; raises the REST error WordPress sends."""
    missing = [name for name, schema in args.items() if schema.get("required") is True and params.values.get(name) is None]
    if missing:
        raise RestError("rest_missing_callback_param", f"Missing parameter(s): {', '.join(missing)}", 400,
                        params=missing)
    invalid: dict[str, str] = {}
    details: dict[str, Any] = {}
    for name, schema in args.items():
        value = params.values.get(name)
        if value is None or schema.get("validate") is False:
            continue
        if "type" not in schema:
            continue
        issue = validate(value, schema, name)
        if issue is not None:
            invalid[name] = issue.message
            details[name] = {"code": issue.code, "message": issue.message, "data": issue.data}
    if invalid:
        raise RestError("rest_invalid_param", f"Invalid parameter(s): {', '.join(invalid)}", 400,
                        params=invalid, details=details)
    for name, schema in args.items():
        value = params.values.get(name)
        if value is None:
            continue
        callback = schema.get("sanitize")
        if callback is not None:
            params.values[name] = _SANITIZERS[callback](value) if isinstance(callback, str) else callback(value)
        elif "type" in schema:
            params.values[name] = sanitize(value, schema)


def with_defaults(args: Mapping[str, Schema]) -> dict[str, Any]:
    return {name: schema["default"] for name, schema in args.items() if "default" in schema}
