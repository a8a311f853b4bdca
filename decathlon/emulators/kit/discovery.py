"""A vendor's own machine-readable description of its API, read from the client library that ships it: Google's
discovery documents, as google-api-python-client carries them (googleapiclient/discovery_cache/documents). An
emulator checks its routes against it: a method the vendor has and the emulator lacks is answered 501 in the
vendor's shape (never taken for a path that does not exist), and its coverage is generated into the docs."""
from __future__ import annotations

import functools
import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_PARAM = re.compile(r"\{[^}]*\}")


class DiscoveryMissing(LookupError):
    """The client library carrying the description is not installed in this interpreter."""


@dataclass(frozen=True)
class Method:
    id: str  # "bigquery.tables.list"
    http_method: str
    path: str  # from the host's root, parameters as `{}`: "/bigquery/v2/projects/{}/datasets"

    def matches(self, http_method: str, path: str) -> bool:
        return http_method.upper() == self.http_method and _regex(self.path).fullmatch(path) is not None


@functools.cache
def _regex(template: str) -> re.Pattern[str]:
    return re.compile("/".join(_PARAM.sub("[^/]+", re.escape(part).replace(r"\{\}", "{}"))
                               for part in template.split("/")))


def normalize(template: str) -> str:
    """A route template with every parameter (`{name}`, `{name:regex}`, `{+name}`) as `{}`."""
    return _PARAM.sub("{}", template)


def documents_dir() -> Path:
    spec = importlib.util.find_spec("googleapiclient")
    if spec is None or spec.origin is None:
        raise DiscoveryMissing("google-api-python-client is not installed here (ci/servers/saas.txt pins it)")
    return Path(spec.origin).parent / "discovery_cache" / "documents"


@functools.cache
def methods(api: str, version: str) -> tuple[Method, ...]:
    path = documents_dir() / f"{api}.{version}.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DiscoveryMissing(f"no discovery document {api}.{version} in {path.parent}") from None
    base = "/" + doc.get("servicePath", "")
    found: list[Method] = []

    def walk(node: dict) -> None:
        for m in node.get("methods", {}).values():
            found.append(Method(m["id"], m["httpMethod"], normalize(base + m.get("flatPath", m["path"]))))
            upload = m.get("mediaUpload", {}).get("protocols", {}).get("simple", {}).get("path")
            if upload:
                found.append(Method(m["id"], m["httpMethod"], normalize(upload)))
        for child in node.get("resources", {}).values():
            walk(child)

    walk(doc)
    return tuple(sorted(set(found), key=lambda m: (m.id, m.path)))


def find(api_methods: tuple[Method, ...], http_method: str, path: str) -> Method | None:
    for m in api_methods:
        if m.matches(http_method, path):
            return m
    return None


@dataclass(frozen=True)
class Coverage:
    api: str
    version: str
    implemented: tuple[str, ...]  # method ids
    missing: tuple[str, ...]

    @property
    def total(self) -> int:
        return len(self.implemented) + len(self.missing)


def app_routes(app: Any) -> set[tuple[str, str]]:
    """An aiohttp application's (METHOD, normalized template) pairs, as `coverage` takes them."""
    out = set()
    for route in app.router.routes():
        info = route.resource.get_info() if route.resource is not None else {}
        template = info.get("formatter") or info.get("path") or ""
        if template:
            out.add((route.method.upper(), normalize(template)))
    return out


def table(apis: tuple[tuple[str, str], ...], routes: set[tuple[str, str]]) -> str:
    """The coverage of `apis` by `routes` as a markdown table (the docs' generated blocks)."""
    rows = ["| API | methods (discovery) | answered | not answered (501) |", "|---|---|---|---|"]
    for api, version in apis:
        c = coverage(api, version, routes)
        missing = ", ".join(i.split(".", 1)[1] for i in c.missing)
        rows.append(f"| {api} {version} | {c.total} | {len(c.implemented)} | {missing or '-'} |")
    return "\n".join(rows)


def coverage(api: str, version: str, routes: set[tuple[str, str]]) -> Coverage:
    """`routes`: the emulator's (METHOD, normalized template) pairs. A method counts as implemented when every path
    it has (its upload path too) is routed."""
    by_id: dict[str, list[bool]] = {}
    for m in methods(api, version):
        by_id.setdefault(m.id, []).append((m.http_method, m.path) in routes)
    done = tuple(sorted(i for i, hits in by_id.items() if all(hits)))
    return Coverage(api, version, done, tuple(sorted(i for i in by_id if i not in done)))
