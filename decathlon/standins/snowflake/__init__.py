"""Offline stand-in for the MCP server `mcp_snowflake_server` as Toolathlon installs it: the fork
lockon-n/mcp-snowflake-server at bca38f3 (0.4.0, itself a fork of isaacwasserman/mcp-snowflake-server).

Run as `python -m decathlon.standins.snowflake <the reference's arguments>` in the virtualenv built from
ci/servers/snowflake.txt. It talks to Snowflake with the real snowflake-connector-python, key-pair
authentication and the account, user, role, warehouse, database and schema of its command line; in an
episode the SaaS front makes `<account>.snowflakecomputing.com` reach the episode's emulator
(decathlon/emulators/snowflake). `DECATHLON_SNOWFLAKE_URL` points it at a local port instead, for tests only.

Taken from recorded real runs (list_databases, list_schemas, list_tables, describe_table, read_query,
write_query): data results are YAML (`type: data`, `data_id: <uuid4>`, the call's own fields, `data:` rows
keyed by column name; dates quoted ISO, timestamps plain, decimals as floats), with `--exclude-json-results`
the only content; an empty result reads `- status: success / message: Query executed successfully`; a
write answers the Python repr of its rows (`[{'number of rows inserted': 15}]`).

Assumed from the reference's source where no recording shows the case: the 14 tools, their descriptions and
schemas (write tools listed only under `--allow_write`); every failure an un-flagged `Error: <text>`, with
the reference's texts (`Access denied: Database 'X' is not in the allowed databases list: [...]`, `Calls to
read_query should not contain write operations`, `Unknown tool: x`, Snowpark's `(1304): <query id>: ...` for
SQL errors); the SDK's schema check (`Input validation error: ...`, flagged); the textual write detector and
database guess (sqlcheck.py), quirks included; append_insight failing on every call with Python's TypeError.

Deliberate differences: the plain connector instead of Snowpark, reproducing what Snowpark showed (row
dicts, error wording); queries run in a worker thread instead of blocking the protocol loop; a `.env` file
beside the installed package is not read; the connector's INFO log lines are kept off stderr.
"""
