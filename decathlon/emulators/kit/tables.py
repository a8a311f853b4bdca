"""A DuckDB relation to a Parquet file and back, as the emulators on DuckDB (BigQuery's, Snowflake's) keep tables in
their snapshots: the column types Parquet has no place for travel as text, cast back on the way in."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from decathlon.emulators.kit.state import StateError

AS_TEXT = ("INTERVAL", "UUID", "HUGEINT", "UHUGEINT", "BIT", "TIME WITH TIME ZONE", "VARINT")


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def write_parquet(con: Any, rel: str, columns: list[list[Any]], path: Path) -> None:
    """`rel` (a quoted relation of `con`) into `path`; `columns` are its [name, DuckDB type, not null] rows."""
    import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped,unused-ignore]

    picks = ", ".join(f"CAST({quote(n)} AS VARCHAR) AS {quote(n)}" if any(k in dtype for k in AS_TEXT) else quote(n)
                      for n, dtype, _ in columns) or "*"
    table = con.sql(f"SELECT {picks} FROM {rel}").to_arrow_table()
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd")


def read_parquet(path: Path) -> Any:
    import pyarrow.parquet as pq  # type: ignore[import-not-found,import-untyped,unused-ignore]

    try:
        return pq.read_table(path)
    except (OSError, ValueError) as exc:
        raise StateError(f"{path} is not a Parquet file: {exc}", "bad_file") from None


def load_rows(con: Any, rel: str, rows: Any, create: bool = False) -> None:
    """The Arrow table `rows` into `rel`: a new table made from them (`create`), or appended by column name."""
    name = "_state_" + hashlib.sha256(rel.encode()).hexdigest()[:12]
    con.register(name, rows)
    try:
        if create:
            con.execute(f"CREATE TABLE {rel} AS SELECT * FROM {name}")
        elif rows.num_rows:
            con.execute(f"INSERT INTO {rel} BY NAME SELECT * FROM {name}")
    finally:
        con.unregister(name)

