"""Entry point: `WORDPRESS_SITE_URL=... WOOCOMMERCE_CONSUMER_KEY=... WOOCOMMERCE_CONSUMER_SECRET=...
python -m decathlon.standins.woocommerce`."""
from __future__ import annotations

import os
import sys

REQUIRED = ("WORDPRESS_SITE_URL", "WOOCOMMERCE_CONSUMER_KEY", "WOOCOMMERCE_CONSUMER_SECRET")


def main(argv: list[str]) -> int:
    missing = [name for name in REQUIRED if not os.environ.get(name)]
    if missing:
        # The reference's own words, then exit 1 before speaking MCP at all.
        print("Error: Missing required environment variables:", file=sys.stderr)
        for name in missing:
            print(f"  - {name}", file=sys.stderr)
        print("\nPlease set these environment variables before running the server.", file=sys.stderr)
        return 1
    # Imported only now: the SDK import dominates start-up time.
    import anyio

    from .client import WooClient
    from .server import serve

    client = WooClient(os.environ["WORDPRESS_SITE_URL"], os.environ["WOOCOMMERCE_CONSUMER_KEY"],
                       os.environ["WOOCOMMERCE_CONSUMER_SECRET"])
    anyio.run(serve, client)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
