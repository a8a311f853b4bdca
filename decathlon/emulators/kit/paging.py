"""Page tokens as the vendors hand them out: opaque to the client, here an offset the emulator can check."""
from __future__ import annotations

import base64
from typing import Sequence, TypeVar

T = TypeVar("T")


class BadPageToken(ValueError):
    pass


def page(items: Sequence[T], token: str | None, size: int | None, default: int, cap: int) -> tuple[list[T], str | None]:
    """One page of `items` and the token of the next (None at the end). A token this emulator did not give out
    raises BadPageToken, which each vendor reports in its own shape."""
    start = 0
    if token:
        try:
            start = int(base64.urlsafe_b64decode(token.encode() + b"==").decode().removeprefix("o:"))
        except (ValueError, UnicodeDecodeError):
            raise BadPageToken(token) from None
        if start < 0 or start > len(items):
            raise BadPageToken(token)
    n = min(max(int(size or default), 1), cap)
    chunk = list(items[start:start + n])
    end = start + n
    nxt = base64.urlsafe_b64encode(f"o:{end}".encode()).decode().rstrip("=") if end < len(items) else None
    return chunk, nxt
