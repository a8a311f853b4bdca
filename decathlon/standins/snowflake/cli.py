"""The command line, the environment and the optional TOML file, read as the reference reads them.

Known options are the reference's own (argparse, so its usage errors and abbreviations too); every other
`--key value` pair becomes a connection parameter (`--account A` → `account="A"`), and `SNOWFLAKE_<KEY>`
variables fill in whatever the command line leaves out, for the keys the connector knows.

`DECATHLON_SNOWFLAKE_URL=http(s)://HOST:PORT` is ours and exists only for tests: it sends the connection to
an emulator on a local port (the connector's `host`/`port`/`protocol`). Episodes never set it: there the
SaaS front makes `<account>.snowflakecomputing.com` itself reach the episode's emulator.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

logger = logging.getLogger("mcp_snowflake_server")

PROG = "mcp_snowflake_server"  # the console script's name, which argparse shows in its messages
RUNTIME_CONFIG = "runtime_config.json"  # read from the working directory, as the reference does
TEST_URL_VARIABLE = "DECATHLON_SNOWFLAKE_URL"


class StartupError(Exception):
    """The reference stops with a traceback before speaking MCP; the message is its exception's text."""


@dataclass
class Settings:
    connection: dict[str, Any]
    allow_write: bool = False
    log_dir: str | None = None
    log_level: str = "INFO"
    prefetch: bool = False
    exclude_tools: list[str] = field(default_factory=list)
    exclude_json_results: bool = False
    allowed_databases: list[str] | None = None
    exclusion: dict[str, list[str]] = field(default_factory=dict)
    # A key the episode's broker handed over (PEM, `--saas real`): kept out of every repr, never written anywhere.
    private_key: bytes | None = field(default=None, repr=False)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG)
    parser.add_argument("--allow_write", required=False, default=False, action="store_true",
                        help="Allow write operations on the database")
    parser.add_argument("--log_dir", required=False, default=None, help="Directory to log to")
    parser.add_argument("--log_level", required=False, default="INFO", help="Logging level")
    parser.add_argument("--prefetch", action="store_true", dest="prefetch", default=False,
                        help="Prefetch table descriptions (when enabled, list_tables and describe_table are disabled)")
    parser.add_argument("--no-prefetch", action="store_false", dest="prefetch", help="Don't prefetch table descriptions")
    parser.add_argument("--exclude_tools", required=False, default=[], nargs="+", help="List of tools to exclude")
    parser.add_argument("--exclude-json-results", action="store_true", dest="exclude_json_results", default=False,
                        help="Exclude JSON output from results")
    parser.add_argument("--allowed_databases", required=False,
                        help="Comma-separated list of databases that operations are restricted to")
    parser.add_argument("--private_key_path", required=False, help="Path to private key file for authentication")
    parser.add_argument("--connection-name", required=False, default=None,
                        help="Name of the connection to use from the TOML file")
    parser.add_argument("--connections-file", required=False, default=None,
                        help="Path to the TOML file containing connection configurations")
    return parser


def _pairs(unknown: Sequence[str]) -> dict[str, Any]:
    """Leftover arguments taken two at a time; a pair whose first half is not `--key` is dropped."""
    pairs: dict[str, Any] = {}
    for i in range(0, len(unknown) - 1, 2):
        key, value = unknown[i], unknown[i + 1]
        if key.startswith("--"):
            pairs[key[2:]] = value
    return pairs


def _from_environment(environ: Mapping[str, str], known_keys: Sequence[str]) -> dict[str, Any]:
    found: dict[str, Any] = {k: environ["SNOWFLAKE_" + k.upper()] for k in known_keys
                             if environ.get("SNOWFLAKE_" + k.upper()) is not None}
    if environ.get("SNOWFLAKE_PRIVATE_KEY_PATH"):
        found["private_key_path"] = environ["SNOWFLAKE_PRIVATE_KEY_PATH"]
    return found


def _from_toml(path: str, name: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise StartupError(f"Failed to load TOML configuration: TOML file not found: {path}") from None
    except Exception as error:  # noqa: BLE001 - any parse failure is the reference's "Invalid TOML file"
        raise StartupError(f"Failed to load TOML configuration: Invalid TOML file: {error}") from None
    if name not in data:
        # str() of a KeyError quotes its message
        raise StartupError(f"Failed to load TOML configuration: \"Connection '{name}' not found in TOML file\"")
    return dict(data[name])


def _exclusion(cwd: str) -> dict[str, list[str]]:
    """`exclude_patterns` of runtime_config.json in the working directory, if there is one there."""
    config: Any = {}
    path = os.path.join(cwd, RUNTIME_CONFIG)
    if os.path.exists(path):
        try:
            with open(path) as f:
                config = json.load(f)
            logger.info(f"Loaded configuration from {RUNTIME_CONFIG}")
        except Exception as error:  # noqa: BLE001 - a bad file is logged and ignored, as upstream
            logger.error(f"Error loading configuration file: {error}")
    patterns = config.get("exclude_patterns", {}) if isinstance(config, dict) else {}
    if not isinstance(patterns, dict):
        patterns = {}
    return {key: [str(p) for p in patterns.get(key) or []] for key in ("databases", "schemas", "tables")}


def _test_endpoint(environ: Mapping[str, str]) -> dict[str, Any]:
    url = environ.get(TEST_URL_VARIABLE)
    if not url:
        return {}
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise StartupError(f"{TEST_URL_VARIABLE}={url!r}: expected http(s)://HOST:PORT")
    return {"host": parts.hostname, "port": parts.port or (443 if parts.scheme == "https" else 80),
            "protocol": parts.scheme}


def load_settings(argv: Sequence[str], environ: Mapping[str, str], cwd: str, known_keys: Sequence[str]) -> Settings:
    """`known_keys`: the connector's DEFAULT_CONFIGURATION keys, the only ones SNOWFLAKE_* variables may set."""
    args, unknown = _parser().parse_known_args(list(argv))
    connection = _pairs(unknown)
    allowed = None
    if args.allowed_databases:
        allowed = [name.strip() for name in args.allowed_databases.split(",")]
        logger.warning(f"Allowed databases: {allowed}")
    if args.private_key_path:
        connection["private_key_path"] = args.private_key_path

    from_env = _from_environment(environ, known_keys)
    if args.connections_file and args.connection_name:
        connection = {**from_env, **connection, **_from_toml(args.connections_file, args.connection_name)}
    elif args.connections_file or args.connection_name:
        raise StartupError("Both --connections-file and --connection-name must be provided together")
    else:
        connection = {**from_env, **connection}

    if "database" not in connection:
        raise StartupError('You must provide the database as "--database" argument, "SNOWFLAKE_DATABASE" environment '
                           'variable, or in the TOML file.')
    if "schema" not in connection:
        raise StartupError('You must provide the schema as "--schema" argument, "SNOWFLAKE_SCHEMA" environment '
                           'variable, or in the TOML file.')
    connection.update(_test_endpoint(environ))
    return Settings(connection=connection, allow_write=args.allow_write, log_dir=args.log_dir, log_level=args.log_level,
                    prefetch=args.prefetch, exclude_tools=list(args.exclude_tools),
                    exclude_json_results=args.exclude_json_results, allowed_databases=allowed,
                    exclusion=_exclusion(cwd))
