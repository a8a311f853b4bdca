"""What of BigQuery's and Cloud Storage's APIs the gcp emulator answers, against Google's discovery documents.

    python -m decathlon.emulators.gcp.coverage   # a markdown table (docs/services.md holds it, generated)

Runs where google-api-python-client is installed (the saas venv)."""
from __future__ import annotations

import sys

from aiohttp import web

from decathlon.emulators.gcp.apis import APIS
from decathlon.emulators.kit import discovery


def routes(app: web.Application) -> set[tuple[str, str]]:
    return discovery.app_routes(app)


def table() -> str:
    from decathlon.emulators.gcp.app import make_apps
    app, _, _ = make_apps()
    return discovery.table(APIS, routes(app))


if __name__ == "__main__":
    print(table())
    sys.exit(0)
