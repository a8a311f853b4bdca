"""Entry point: `python -m decathlon.standins.snowflake --account A --warehouse W --user U --private_key_path P
--role R --database D --schema S [--allowed_databases X,Y] [--allow_write] [--exclude-json-results] ...`,
the reference's command line (see cli.py). Runs in its own virtualenv (ci/servers/snowflake.txt), which holds
the Snowflake connector the project's own cannot.

Under `--saas real` the `--private_key_path` value is a token of the episode's key broker, not a path: the key is
fetched before anything else happens and held in memory (decathlon/standins/keyclaim.py)."""
from __future__ import annotations

import importlib
import logging
import os
import sys
import threading

from decathlon.standins.keyclaim import BROKERED_FLAGS, claim_or_exit, without_flag

FORMAT = "%(asctime)s - %(name)s - %(levelname)s - %(message)s"


class _QuietConnector(logging.Filter):
    """The connector's INFO chatter stays off stderr; its loggers keep their INFO level, which its error texts
    depend on (at INFO they carry the query id, as the reference's do)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or not record.name.startswith("snowflake.")


def _setup_logging(level: str, log_dir: str | None) -> None:
    handler = logging.StreamHandler()
    handler.addFilter(_QuietConnector())
    logging.basicConfig(level=logging.INFO, format=FORMAT, handlers=[handler])
    ours = logging.getLogger("mcp_snowflake_server")
    if log_dir:
        os.makedirs(log_dir, exist_ok=True)
        ours.addHandler(logging.FileHandler(os.path.join(log_dir, "mcp_snowflake_server.log")))
    if level:
        ours.setLevel(level)


KEY_FLAG = BROKERED_FLAGS["decathlon.standins.snowflake"]


def main(argv: list[str]) -> int:
    # First of all: non-dumpable before a brokered key is in this process's memory (the agent's processes share
    # its uid), and the key fetched before anything of the agent's can run.
    claimed = claim_or_exit(argv, KEY_FLAG)
    private_key = None
    if claimed is not None:
        index, private_key = claimed
        argv = without_flag(argv, index, KEY_FLAG)
    logging.basicConfig(level=logging.INFO, format=FORMAT, handlers=[logging.StreamHandler()])
    # Imported only now: the connector's import dominates start-up time.
    defaults = importlib.import_module("snowflake.connector.connection").DEFAULT_CONFIGURATION

    from .cli import StartupError, load_settings

    try:
        settings = load_settings(argv, os.environ, os.getcwd(), list(defaults))
    except StartupError as error:
        print(f"Error: {error}", file=sys.stderr)
        return 1
    settings.private_key = private_key
    logging.getLogger().handlers.clear()
    _setup_logging(settings.log_level, settings.log_dir)

    import anyio

    from .server import serve

    anyio.run(serve, settings)
    sys.stdout.flush()
    sys.stderr.flush()
    if threading.active_count() > 1:
        # A connection attempt or query still running in its worker thread (the client has gone): it would hold
        # the interpreter's exit for as long as the connector keeps retrying.
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
