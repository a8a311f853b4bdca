"""One Snowflake session for the process, through the real connector, behaving as the reference's Snowpark
session does towards its tool handlers.

- The connection starts opening at start-up, in the background; the first query waits for it. A failed
  opening surfaces once, to whoever waits for it, as `Failed to connect to Snowflake database: <why>`;
  the next query tries again. After 30 minutes the next query opens a fresh session (the reference's
  re-authentication), which starts again in the configured database and schema.
- `--private_key_path` is read (unencrypted PEM) when the connection opens, and sent as PKCS#8 DER. A key the
  episode's broker handed over (`--saas real`: decathlon/standins/keyclaim.py) is the same PEM, held in memory only.
- Each query runs as one statement on that session, and the rows come back as dicts keyed by the column
  names (Snowpark's `Row.asDict()`): no rows reads `[{status: success, message: Query executed
  successfully}]`, and duplicate column names fail the call as Snowpark fails it.
- A SQL error reads as Snowpark words it: `(1304): <query id>: <connector message>`, where the connector
  message itself is `<errno> (<sqlstate>): <query id>: <text>` because the reference logs at INFO.
- Queries run one at a time, in arrival order, in a worker thread.
"""
from __future__ import annotations

import importlib
import logging
import time
import uuid
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread

logger = logging.getLogger("mcp_snowflake_server")

EMPTY_RESULT = {"status": "success", "message": "Query executed successfully"}
DUPLICATE_COLUMNS = "Cannot convert a Row without key values or duplicated keys to a dict."
UNEXPECTED_ALIAS = ("You can only define aliases for the root Columns in a DataFrame returned by select() and agg(). "
                    "You cannot use aliases for Columns in expressions.")
SESSION_EXPIRED = "Your Snowpark session has expired. You must recreate your session.\n{}"


def connector() -> Any:
    return importlib.import_module("snowflake.connector")


class SnowparkError(Exception):
    """Snowpark's client exception text: `(<code>): [<query id>: ]<message>`."""

    def __init__(self, message: str, code: str, query_id: str | None = None) -> None:
        super().__init__(message)
        self.text = f"({code}): " + (f"{query_id}: " if query_id else "") + message

    def __str__(self) -> str:
        return self.text


def _load_private_key(path: str) -> bytes:
    with open(path, "rb") as f:
        return private_key_der(f.read())


def private_key_der(pem: bytes) -> bytes:
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(pem, password=None)
    return key.private_bytes(encoding=serialization.Encoding.DER, format=serialization.PrivateFormat.PKCS8,
                             encryption_algorithm=serialization.NoEncryption())


class _Opening:
    def __init__(self) -> None:
        self.done = anyio.Event()
        self.error: BaseException | None = None


class SnowflakeDB:
    AUTH_EXPIRATION_TIME = 1800.0

    def __init__(self, config: dict[str, Any], private_key: bytes | None = None) -> None:
        self.config = config  # the connection parameters; the key file's path gives way to the key once read
        self._pem = private_key  # a brokered key (PEM): in this process's memory, never in a file
        self._connection: Any = None
        self._auth_time = 0.0
        self._opening: _Opening | None = None
        self._lock = anyio.Lock()

    def start(self, tasks: anyio.abc.TaskGroup) -> None:
        opening = self._opening = _Opening()

        async def open_in_background() -> None:
            try:
                await self._open()
            except Exception as error:  # noqa: BLE001 - kept for the first query, which reports it
                opening.error = error
            finally:
                opening.done.set()

        tasks.start_soon(open_in_background)

    async def _open(self) -> None:
        try:
            connection = await anyio.to_thread.run_sync(self._connect, abandon_on_cancel=True)
        except Exception as error:
            raise ValueError(f"Failed to connect to Snowflake database: {error}") from error
        self._connection = connection
        self._auth_time = time.time()

    def _connect(self) -> Any:
        if self._pem is not None:
            self.config.pop("private_key_path", None)
            self.config["private_key"] = private_key_der(self._pem)
            self._pem = None
        elif "private_key_path" in self.config:
            self.config["private_key"] = _load_private_key(self.config["private_key_path"])
            del self.config["private_key_path"]
        return connector().connect(**{key.lower(): value for key, value in self.config.items()})

    async def _ready(self) -> None:
        opening = self._opening
        if opening is not None and not opening.done.is_set():
            await opening.done.wait()
            if opening.error is not None:
                raise opening.error
        elif self._connection is None or time.time() - self._auth_time > self.AUTH_EXPIRATION_TIME:
            await self._open()

    def _run(self, query: str) -> tuple[list[str], list[Any]]:
        sf = connector()
        network = importlib.import_module("snowflake.connector.network")
        cursor = self._connection.cursor()
        try:
            cursor.execute(query)
            names = [column.name for column in cursor.description or ()]
            return names, list(cursor.fetchall())
        except sf.errors.ProgrammingError as error:
            message = error.msg or ""
            if "unexpected 'as'" in message.lower():
                raise SnowparkError(UNEXPECTED_ALIAS, "1301") from None
            raise SnowparkError(message, "1304", error.sfqid) from None
        except network.ReauthenticationRequest as error:
            raise SnowparkError(SESSION_EXPIRED.format(error.cause), "1402") from None
        finally:
            cursor.close()

    async def execute_query(self, query: str) -> tuple[list[dict[str, Any]], str]:
        async with self._lock:
            await self._ready()
            logger.debug(f"Executing query: {query}")
            try:
                names, rows = await anyio.to_thread.run_sync(self._run, query, abandon_on_cancel=True)
                if not rows:
                    return [dict(EMPTY_RESULT)], str(uuid.uuid4())
                if not names or len(set(names)) != len(names):
                    raise TypeError(DUPLICATE_COLUMNS)
                return [dict(zip(names, row)) for row in rows], str(uuid.uuid4())
            except Exception as error:
                logger.error(f'Database error executing "{query}": {error}')
                raise
