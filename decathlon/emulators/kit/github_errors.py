"""GitHub REST's error body, for the GitHub emulator to come: `{"message", "documentation_url", "status"}`, with
`errors: [{"resource", "field", "code"}]` on a 422 (GitHub's REST reference, "Client errors"). PyGithub and Octokit
read `message` and the status. An emulator raises these and hands `SHAPE` to kit.errors.middleware, which answers an
unknown path with GitHub's plain 404 "Not Found", a body over the cap with 413, its own bug with a 500."""
from __future__ import annotations

from typing import Any

from aiohttp import web

from decathlon.emulators.kit.errors import ApiError, Shape

DOCS = "https://docs.github.com/rest"


def github_error(status: int, message: str, documentation_url: str = DOCS, **extra: Any) -> ApiError:
    return ApiError(status, {"message": message, "documentation_url": documentation_url, "status": str(status),
                             **extra})


def not_found() -> ApiError:
    # GitHub answers a private or absent resource alike, so a token cannot probe what it may not see.
    return github_error(404, "Not Found")


def validation_failed(resource: str, field: str, code: str) -> ApiError:
    return github_error(422, "Validation Failed", errors=[{"resource": resource, "field": field, "code": code}])


def _unknown(request: web.Request) -> ApiError:
    return not_found()


def _too_large(request: web.Request) -> ApiError:
    return github_error(413, "Payload Too Large")


def _internal(request: web.Request, detail: str) -> ApiError:
    return github_error(500, "Server Error")


SHAPE = Shape(unknown=_unknown, too_large=_too_large, internal=_internal)
