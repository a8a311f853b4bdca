"""Snowflake, emulated per episode: fakesnow 0.12.1's server (Snowflake's REST protocol over DuckDB) wrapped to
close its gaps with the real service as the Toolathlon tasks and the snowflake-connector-python 3.16 meet them.

`python -m decathlon.emulators.snowflake --root ROOT [--host H] [--port N]` listens on plain HTTP (the SaaS front
terminates TLS for `<account>.snowflakecomputing.com`), prints `ready snowflake {"http": PORT}` and serves until
SIGTERM. State is in memory, one process per episode, shared by every connection (as on Snowflake); it starts
empty, since the tasks create all their data. Logins are not checked (the key-pair JWT is accepted as is). Every
statement is bounded in time; stage uploads need the signed URL the emulator hands out.

- `serve`: listening, the ready line, signals; fakesnow loads on a thread so the ready line is fast.
- `app`: the ASGI app, fakesnow's routes with the query request wrapped; the request log.
- `statements`: what a statement needs before fakesnow runs it (`naming`: Snowflake's result column names).
- `databases`: CREATE/USE/DROP DATABASE as Snowflake does them.
- `errors`, `wire`: Snowflake's error numbers and JSON answers.
- `patches`: the few changes inside fakesnow, checked against its pinned version.
- `lockdown`: fakesnow's DuckDB without file system (but the episode's stage folder), extensions or spilling, and
  the DuckDB functions Snowflake lacks, refused in its words.

Runs under the saas server venv (ci/servers/saas.txt), not the project's.
"""
