"""`WP_Error` as the REST server sends it: `{"code", "message", "data": {"status", ...}}` and that status."""
from __future__ import annotations

from typing import Any

from decathlon.emulators.kit.failure import ServiceError


class RestError(ServiceError):
    """A WP_Error a handler returns; `data` carries `status` plus any extra keys WordPress adds."""

    def __init__(self, code: str, message: str, status: int | None = 400, **extra: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.extra = extra

    @property
    def data(self) -> dict[str, Any] | None:
        if self.status is None and not self.extra:
            return None
        data: dict[str, Any] = {}
        if self.status is not None:
            data["status"] = self.status
        data.update(self.extra)
        return data

    def body(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "data": self.data}

    @property
    def http_status(self) -> int:
        return self.status or 500


def no_route() -> RestError:
    return RestError("rest_no_route", "No route was found matching the URL and request method.", 404)


def invalid_id(post_type: str, status: int = 404) -> RestError:
    """The CRUD controllers' unknown-object error, e.g. woocommerce_rest_product_invalid_id."""
    return RestError(f"woocommerce_rest_{post_type}_invalid_id", "Invalid ID.", status)


def term_invalid() -> RestError:
    return RestError("woocommerce_rest_term_invalid", "Resource doesn't exist.", 404)


class WcException(RestError):
    """WC_REST_Exception / WC_Data_Exception thrown mid-save; it reaches the client like any WP_Error."""
