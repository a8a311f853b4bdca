"""fakesnow's DuckDB, locked down before fakesnow opens it: the agent's SQL reaches it.

- No file system but the episode's own stage folder (ROOT/snowflake-stage, where PUT lands and COPY INTO reads):
  DuckDB's `enable_external_access` off with that one folder allowed, which DuckDB will not widen again while it
  runs. No extension is installed or loaded (httpfs would reach the network).
- A memory limit and no spilling to disk.
- fakesnow's stage folder (by default a `mkdtemp` in the host's /tmp, made on import and never removed) is the
  episode's; temporary files go under ROOT too.
- DuckDB functions Snowflake does not have (its file, system and catalog functions) are named here, for the
  statement check to refuse in Snowflake's words before DuckDB sees them (decathlon.emulators.snowflake.statements).

`install(root)` must run before fakesnow's server module is imported (it opens the shared database on import).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

MEMORY_LIMIT = os.environ.get("DECATHLON_SNOWFLAKE_MEMORY", "512MB")
THREADS = int(os.environ.get("DECATHLON_SNOWFLAKE_THREADS", "2"))
CONFIG: dict[str, Any] = {"autoinstall_known_extensions": False, "autoload_known_extensions": False,
                          "allow_community_extensions": False, "allow_unsigned_extensions": False,
                          "memory_limit": MEMORY_LIMIT, "threads": THREADS, "max_temp_directory_size": "0B"}
# Snowflake's own table functions, which share no name with DuckDB's but are kept out of the refusal regardless.
SNOWFLAKE_TABLE_FUNCTIONS = frozenset({"flatten", "generator", "result_scan", "split_to_table", "table",
                                       "infer_schema", "validate", "external_table_files", "strtok_split_to_table"})
# DuckDB scalars that read the host or the engine: none is Snowflake's.
DUCKDB_SYSTEM_SCALARS = frozenset({"getenv", "current_setting", "version", "read_text", "read_blob", "glob",
                                   "pg_typeof", "txid_current", "enum_range", "current_query"})
# Calls sqlglot reads as a function Snowflake has (STRING_AGG becomes LISTAGG) that Snowflake itself refuses, as the
# recorded runs show ("Unknown function STRING_AGG"): judged by the name the query wrote, not the parse.
RENAMED_BY_THE_PARSER = frozenset({"string_agg"})

_installed: Path | None = None
_duckdb_only_tables: frozenset[str] = frozenset()


class NotLockedDown(RuntimeError):
    pass


class _LockedDuckDB:
    """Stands in for the `duckdb` module inside fakesnow.instance: its connect opens a locked-down database."""

    def __init__(self, duckdb: Any, stage: Path) -> None:
        self._duckdb = duckdb
        self._stage = stage

    def __getattr__(self, name: str) -> Any:
        return getattr(self._duckdb, name)

    def connect(self, database: str = ":memory:", read_only: bool = False, config: dict[str, Any] | None = None) -> Any:
        con = self._duckdb.connect(database=database, read_only=read_only, config={**(config or {}), **CONFIG})
        # The allowed folder is set while access is still on, then access goes off for good.
        con.execute(f"SET allowed_directories = ['{self._stage}/']")
        con.execute("SET enable_external_access = false")
        return con


def install(root: Path) -> Path:
    """Lock fakesnow's DuckDB down, with ROOT/snowflake-stage its stage folder; returns that folder."""
    global _installed, _duckdb_only_tables
    if _installed is not None:
        return _installed
    stage = (root / "snowflake-stage").resolve()
    tmp = (root / "snowflake-tmp").resolve()
    for folder in (stage, tmp):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    tempfile.tempdir = str(tmp)  # fakesnow's stage module makes its folder on import: here, not in /tmp
    import duckdb  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import fakesnow.instance  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import fakesnow.transforms.stage as fs_stage  # type: ignore[import-not-found,import-untyped,unused-ignore]

    made = Path(fs_stage.LOCAL_BUCKET_PATH)
    if made != stage and made.parent == tmp:
        try:
            made.rmdir()
        except OSError:
            pass
    fs_stage.LOCAL_BUCKET_PATH = str(stage)
    fakesnow.instance.duckdb = _LockedDuckDB(duckdb, stage)
    probe = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False,
                                               "autoload_known_extensions": False})
    try:
        rows = probe.execute("SELECT DISTINCT lower(function_name) FROM duckdb_functions() "
                             "WHERE function_type IN ('table', 'table_macro', 'pragma')").fetchall()
    finally:
        probe.close()
    _duckdb_only_tables = frozenset(r[0] for r in rows) - SNOWFLAKE_TABLE_FUNCTIONS
    _installed = stage
    return stage


def require() -> Path:
    if _installed is None:
        raise NotLockedDown("decathlon.emulators.snowflake.lockdown.install(root) must run before fakesnow is imported")
    return _installed


def duckdb_only(name: str, table: bool) -> bool:
    """Whether a function called `name` (in FROM when `table`) is DuckDB's and not Snowflake's."""
    low = name.lower()
    if low.startswith(("duckdb_", "pragma_", "parquet_", "read_")) or low in DUCKDB_SYSTEM_SCALARS \
            or low in RENAMED_BY_THE_PARSER:
        return True
    return table and low in _duckdb_only_tables
