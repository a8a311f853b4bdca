"""An RPC's failure as the API reports it: a gRPC status code (by name, so this module needs no grpc) and
Google's message. The server turns it into the call's status; anything else a handler raises is the emulator's
bug, answered INTERNAL."""
from __future__ import annotations

from dataclasses import dataclass

from decathlon.emulators.kit.failure import ServiceError


@dataclass
class ApiError(ServiceError):
    code: str  # a grpc.StatusCode name: "NOT_FOUND", "INVALID_ARGUMENT", ...
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


def invalid(message: str) -> ApiError:
    return ApiError("INVALID_ARGUMENT", message)


def not_found(message: str) -> ApiError:
    return ApiError("NOT_FOUND", message)


def deadline_exceeded() -> ApiError:
    """A call that ran out of time, in gRPC's words (what the API answers a listing that takes too long)."""
    return ApiError("DEADLINE_EXCEEDED", "Deadline Exceeded")
