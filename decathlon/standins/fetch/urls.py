"""URLs as the reference sees them: zod's ``.url()`` (WHATWG ``new URL``) and what fetch then does.

zod accepts anything ``new URL(s)`` parses, so ``file:///x``, ``mailto:a`` or ``http:example.com``
pass validation and only fail (or not) when fetched. This is a WHATWG URL parser reduced to
the decisions that matter here: is it a URL at all, which scheme, are there credentials, and
the address to request for http(s) (backslashes as slashes, missing ``//`` supplied, the
fragment dropped: fetch never sends it).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import unquote

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_SPECIAL = frozenset({"http", "https", "ws", "wss", "ftp", "file"})
# Forbidden domain code points (forbidden host code points, C0 controls, '%' and DEL).
_FORBIDDEN_DOMAIN = re.compile(r"[\x00-\x20#/:<>?@\[\\\]^|%\x7f]")
_FORBIDDEN_HOST = re.compile(r"[\x00\t\n\r #/:<>?@\[\\\]^|]")


@dataclass(frozen=True)
class ParsedUrl:
    scheme: str
    has_credentials: bool
    request_url: str  # for http(s): what to hand to the HTTP client


def _ipv4_number(part: str) -> int | None:
    """WHATWG's IPv4 number parser: 0x-hex, 0-led octal, else decimal; None on failure."""
    if part[:2].lower() == "0x":
        digits, base = part[2:], 16
    elif len(part) > 1 and part.startswith("0"):
        digits, base = part[1:], 8
    else:
        digits, base = part, 10
    if digits == "":
        return 0
    try:
        return int(digits, base) if digits.isascii() and digits.isalnum() else None
    except ValueError:
        return None


def _ipv4_parts(host: str) -> list[str]:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    return parts


def _ends_in_number(host: str) -> bool:
    last = _ipv4_parts(host)[-1]
    if last == "":
        return False
    return (last.isascii() and last.isdigit()) or _ipv4_number(last) is not None


def _ipv4_address(host: str) -> str | None:
    """The dotted-quad form of a host that ends in a number, or None if it is not a valid IPv4 address."""
    parts = _ipv4_parts(host)
    numbers = [_ipv4_number(part) if part else None for part in parts]
    if len(parts) > 4 or any(number is None for number in numbers):
        return None
    values: list[int] = [number for number in numbers if number is not None]
    if any(value > 255 for value in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    address = values[-1]
    for index, value in enumerate(values[:-1]):
        address += value * 256 ** (3 - index)
    return str(ipaddress.IPv4Address(address))


def _domain(raw_host: str) -> str | None:
    """The host as the URL serializes it (lower case, IDNA, dotted IPv4), or None if it is invalid."""
    if raw_host.startswith("["):
        if not raw_host.endswith("]"):
            return None
        try:
            return "[" + ipaddress.IPv6Address(raw_host[1:-1]).compressed + "]"
        except ValueError:
            return None
    host = unquote(raw_host)
    if not host:
        return None
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    host = host.lower()
    if _FORBIDDEN_DOMAIN.search(host):
        return None
    if _ends_in_number(host):
        return _ipv4_address(host)
    return host


def _split_authority(rest: str) -> tuple[str, str]:
    end = len(rest)
    for stop in "/\\?#":
        index = rest.find(stop)
        if index != -1:
            end = min(end, index)
    return rest[:end], rest[end:]


def _host_and_port(authority: str) -> tuple[str, str] | None:
    if authority.startswith("["):
        close = authority.find("]")
        if close == -1:
            return None
        host, after = authority[: close + 1], authority[close + 1:]
        if after and not after.startswith(":"):
            return None
        return host, after[1:]
    host, _, port = authority.partition(":")
    return host, port


def _has_credentials(userinfo: str) -> bool:
    username, _, password = userinfo.partition(":")
    return bool(username or password)


def parse(url: str) -> ParsedUrl | None:
    """The URL as ``new URL(url)`` reads it, or None where it throws ``TypeError: Invalid URL``."""
    # Leading/trailing C0 controls and spaces are stripped; tabs and newlines anywhere are dropped.
    text = re.sub(r"[\t\n\r]", "", url.strip("".join(map(chr, range(0x21)))))
    match = _SCHEME.match(text)
    if match is None:
        return None
    scheme = match.group()[:-1].lower()
    rest = text[match.end():]
    if scheme == "file":
        return ParsedUrl(scheme, False, text)
    if scheme in _SPECIAL:
        stripped = rest.lstrip("/\\")
        authority, tail = _split_authority(stripped)
        userinfo, _, hostport = authority.rpartition("@")
        split = _host_and_port(hostport)
        if split is None:
            return None
        host, port = split
        if port and (not port.isdigit() or int(port) > 65535):
            return None
        domain = _domain(host) if host else None
        if domain is None:
            return None
        path, _, _fragment = tail.partition("#")
        path = path.replace("\\", "/") if "?" not in path else (
            path.split("?", 1)[0].replace("\\", "/") + "?" + path.split("?", 1)[1])
        if not path.startswith("/"):
            path = "/" + path
        netloc = domain + (":" + port if port else "")
        return ParsedUrl(scheme, _has_credentials(userinfo), f"{scheme}://{netloc}{path}")
    # Non-special schemes: an opaque path, or an authority with an opaque host.
    if rest.startswith("//"):
        authority, _tail = _split_authority(rest[2:])
        userinfo, _, hostport = authority.rpartition("@")
        split = _host_and_port(hostport)
        if split is None:
            return None
        host, port = split
        if port and (not port.isdigit() or int(port) > 65535):
            return None
        if host.startswith("["):
            if _domain(host) is None:
                return None
        elif _FORBIDDEN_HOST.search(host):
            return None
        return ParsedUrl(scheme, _has_credentials(userinfo), text)
    return ParsedUrl(scheme, False, text)
