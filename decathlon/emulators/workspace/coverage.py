"""What of Drive v3, Sheets v4, Forms v1 and Calendar v3 the workspace emulator answers, against Google's discovery
documents.

    python -m decathlon.emulators.workspace.coverage   # a markdown table (docs/services.md holds it, generated)

Runs where google-api-python-client is installed (the saas venv)."""
from __future__ import annotations

import sys

from decathlon.emulators.kit import discovery
from decathlon.emulators.workspace.apis import APIS


def table() -> str:
    from decathlon.emulators.workspace.app import make_parts
    return discovery.table(APIS, discovery.app_routes(make_parts().app))


if __name__ == "__main__":
    print(table())
    sys.exit(0)
