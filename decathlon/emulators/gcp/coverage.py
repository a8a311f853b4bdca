"""What of BigQuery's and Cloud Storage's APIs the gcp emulator answers, against Google's discovery documents.

    python -m decathlon.emulators.gcp.coverage   # a markdown table (docs/services.md holds it, generated)

Runs where google-api-python-client is installed (the saas venv)."""
from __future__ import annotations

import sys

from aiohttp import web

from decathlon.emulators.gcp.apis import APIS
from decathlon.emulators.kit import discovery


def routes(app: web.Application) -> set[tuple[str, str]]:
    out = set()
    for route in app.router.routes():
        info = route.resource.get_info() if route.resource is not None else {}
        template = info.get("formatter") or info.get("path") or ""
        if template:
            out.add((route.method.upper(), discovery.normalize(template)))
    return out


def table() -> str:
    from decathlon.emulators.gcp.app import make_apps
    app, _, _ = make_apps()
    have = routes(app)
    rows = ["| API | methods (discovery) | answered | not answered (501) |", "|---|---|---|---|"]
    for api, version in APIS:
        c = discovery.coverage(api, version, have)
        missing = ", ".join(i.split(".", 1)[1] for i in c.missing)
        rows.append(f"| {api} {version} | {c.total} | {len(c.implemented)} | {missing or '-'} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
    sys.exit(0)
