"""Secret redaction for recorded HTTP traffic (standard library only).

It runs inside the recording process before anything touches disk, and again on every live request
in replay, so a recording whose token became <REDACTED> still matches the request that carries the
real token. Rules:
- credential headers (SECRET_HEADERS, or a name containing one of SECRET_HEADER_HINTS) keep their
  auth scheme word / cookie names but lose the values;
- URL query parameters named in SECRET_QUERY_PARAMS (or ending in _token/_secret), and the
  password of user:password@host;
- every occurrence of the values of the environment variables named by the caller (redact_env), in
  their raw, percent-encoded and JSON-escaped spellings, in the URL, header values and bodies.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote, quote_plus, unquote_plus, urlsplit, urlunsplit

REDACTED = "<REDACTED>"
SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "apikey",
    "x-auth-token", "x-access-token", "private-token", "x-goog-api-key", "x-csrf-token", "x-xsrf-token",
    "ocp-apim-subscription-key",
})
SECRET_HEADER_HINTS = ("api-key", "apikey", "api_key", "token", "secret", "password", "auth")
# Challenges and metadata, not credentials: redacting them would only break client auth negotiation.
NOT_SECRET_HEADERS = frozenset({"www-authenticate", "proxy-authenticate", "authentication-info"})
SECRET_QUERY_PARAMS = frozenset({
    "token", "key", "api_key", "apikey", "api-key", "access_token", "refresh_token", "id_token", "auth",
    "signature", "sig", "password", "passwd", "secret", "client_secret", "app_key", "access_key",
    "secret_key", "private_key", "subscription_key", "x-api-key",
})
# Not "_key": sort_key, page_key... are ordinary parameters, and over-redaction merges distinct
# requests into one match key (still answered in order, but better avoided).
SECRET_QUERY_SUFFIXES = ("_token", "-token", "_secret", "-secret")
_SCHEME_VALUE = re.compile(r"^([A-Za-z][A-Za-z0-9._~+-]*)\s+\S")


def is_secret_header(name: str) -> bool:
    low = name.lower()
    if low in NOT_SECRET_HEADERS:
        return False
    return low in SECRET_HEADERS or any(hint in low for hint in SECRET_HEADER_HINTS)


def is_secret_param(name: str) -> bool:
    low = unquote_plus(name).lower()
    return low in SECRET_QUERY_PARAMS or low.endswith(SECRET_QUERY_SUFFIXES)


class Redactor:
    """Built once per process from the secret values; callable on URLs, headers and bodies."""

    def __init__(self, secrets: Iterable[str]) -> None:
        spellings: set[str] = set()
        for value in secrets:
            if not value:
                continue
            spellings.update({value, quote(value, safe=""), quote(value), quote_plus(value),
                              json.dumps(value)[1:-1]})
        # Longest first, so a secret that contains another one is replaced whole.
        self.texts = sorted(spellings, key=lambda s: (-len(s), s))
        self.blobs = [s.encode("utf-8") for s in self.texts]

    @classmethod
    def from_env(cls, names: Iterable[str], environ: Mapping[str, str]) -> Redactor:
        return cls(environ.get(name, "") for name in names)

    def text(self, value: str) -> str:
        for secret in self.texts:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value

    def body(self, value: bytes | None) -> bytes | None:
        if not value:
            return value
        for secret in self.blobs:
            if secret in value:
                value = value.replace(secret, REDACTED.encode())
        return value

    def url(self, url: str) -> str:
        url = self.text(url)
        try:
            parts = urlsplit(url)
        except ValueError:
            return url
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hostport = netloc.rpartition("@")
            if ":" in userinfo:
                netloc = f"{userinfo.split(':', 1)[0]}:{REDACTED}@{hostport}"
        query = "&".join(_redact_pair(pair) for pair in parts.query.split("&")) if parts.query else parts.query
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))

    def header(self, name: str, value: str) -> str:
        if is_secret_header(name):
            low = name.lower()
            if low in ("cookie", "set-cookie"):
                return _redact_cookie(value, low == "set-cookie")
            match = _SCHEME_VALUE.match(value)
            return f"{match.group(1)} {REDACTED}" if match else REDACTED
        return self.text(value)


def _redact_pair(pair: str) -> str:
    name, sep, value = pair.partition("=")
    if sep and value and is_secret_param(name):
        return f"{name}={REDACTED}"
    return pair


def _redact_cookie(value: str, is_set_cookie: bool) -> str:
    """Keep cookie names (and Set-Cookie attributes), so clients' cookie handling still works."""
    items = value.split(";")
    keep = items[1:] if is_set_cookie else []
    pairs = items[:1] if is_set_cookie else items
    out = []
    for item in pairs:
        name, sep, _ = item.partition("=")
        out.append(f"{name}={REDACTED}" if sep else REDACTED)
    return ";".join(out + keep)
