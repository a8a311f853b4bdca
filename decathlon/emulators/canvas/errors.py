"""Canvas's error bodies, and the exception handlers raise to produce them.

Shapes are the ones the Canvas version upstream deploys returns (and the canvas MCP server parses:
it joins `errors[].message`, or shows the body as JSON): not found, unauthenticated, invalid token,
not authorized (401, as Canvas's API answers it), validation (400 with per-attribute lists), and an
internal error that never carries a traceback.
"""
from __future__ import annotations

from decathlon.emulators.kit.errors import ApiError

NOT_FOUND = {"errors": [{"message": "The specified resource does not exist."}]}
INVALID_TOKEN = {"errors": [{"message": "Invalid access token."}]}
UNAUTHENTICATED = {"status": "unauthenticated", "errors": [{"message": "user authorization required"}]}
UNAUTHORIZED = {"status": "unauthorized", "errors": [{"message": "user not authorized to perform that action"}]}


def not_found() -> ApiError:
    return ApiError(404, NOT_FOUND)


def unauthorized() -> ApiError:
    return ApiError(401, UNAUTHORIZED)


def invalid_token() -> ApiError:
    return ApiError(401, INVALID_TOKEN, {"WWW-Authenticate": 'Bearer realm="canvas-lms"'})


def unauthenticated() -> ApiError:
    return ApiError(401, UNAUTHENTICATED, {"WWW-Authenticate": 'Bearer realm="canvas-lms"'})


def invalid(attribute: str, message: str, kind: str | None = None, status: int = 400) -> ApiError:
    """A model validation failure: `{"errors": {attr: [{"attribute", "type", "message"}]}}`."""
    return ApiError(status, {"errors": {attribute: [{"attribute": attribute, "type": kind or message, "message": message}]}})


def bad_request(message: str, status: int = 400) -> ApiError:
    """A controller-level refusal: `{"errors": [{"message": ...}]}`."""
    return ApiError(status, {"errors": [{"message": message}]})


def message(text: str, status: int = 400) -> ApiError:
    """The bare `{"message": ...}` some endpoints (quiz submissions, files) answer with."""
    return ApiError(status, {"message": text})


def internal(report_id: int) -> dict:
    return {"errors": [{"message": "An error occurred."}], "error_report_id": report_id}
