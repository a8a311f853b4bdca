"""Run by the Snowflake stand-in's own virtualenv (.servers/snowflake, which holds snowflake-connector-python): the
stand-in's tool functions (decathlon.standins.snowflake.tools) called in-process against an emulator, so each answer
is the exact text the stand-in gives an agent, with the reference's command line of Toolathlon (`--allow_write
--exclude-json-results --allowed_databases <the run's databases>`).

stdin: one JSON object {"key": PEM path, "runs": [{"emulator": URL, "allowed": [db, …], "seed": [SQL, …], "calls":
[{"tool", "arguments"}]}, …]}: the runs in order, each on an emulator of its own, in one process (the connector's
import and the stand-in's start are most of a run's time). stdout, per run: a line {"seeded": i} once every seed
statement ran, then one JSON line {"run": i, "answer": text} per call, in order ({"answer": null} for a call not
replayed).
"""
from __future__ import annotations

import json
import sys
from typing import Any


async def _run(i: int, run: dict[str, Any], key: str) -> None:
    import anyio

    from decathlon.standins.snowflake.cli import Settings
    from decathlon.standins.snowflake.database import SnowflakeDB
    from decathlon.standins.snowflake.tools import Tools

    host, port = run["emulator"].removeprefix("http://").split(":")
    connection = {"account": "DECATHLON", "user": "DECATHLON_AGENT", "warehouse": "COMPUTE_WH", "role": "ACCOUNTADMIN",
                  "database": "SNOWFLAKE", "schema": "PUBLIC", "private_key_path": key, "host": host,
                  "port": int(port), "protocol": "http"}
    settings = Settings(connection=connection, allow_write=True, exclude_json_results=True,
                        allowed_databases=list(run["allowed"]))
    db = SnowflakeDB(dict(connection))
    async with anyio.create_task_group() as background:
        db.start(background)
        for statement in run.get("seed") or []:
            await db.execute_query(statement)  # a failure here is the driver's: it stops with the traceback
        print(json.dumps({"seeded": i}), flush=True)
        tools = Tools(db, settings)
        for call in run.get("calls") or []:
            answer = None
            if call["tool"] is not None:
                pieces = await tools.call(call["tool"], call["arguments"])
                answer = "".join(getattr(p, "text", "") for p in pieces)
            print(json.dumps({"run": i, "answer": answer}), flush=True)
        background.cancel_scope.cancel()


async def _main(job: dict[str, Any]) -> None:
    for i, run in enumerate(job["runs"]):
        await _run(i, run, job["key"])


def main() -> int:
    import logging
    import os

    # Run as a file, this folder is first on the path, and its snowflake.py would hide the connector's package.
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]

    import anyio

    # INFO as the stand-in runs in an episode: the connector words its errors by its loggers' level (at INFO they carry
    # the query id, as Snowflake's recorded answers do); nothing is printed, the answers say it all
    logging.basicConfig(level=logging.INFO, handlers=[logging.NullHandler()])
    anyio.run(_main, json.loads(sys.stdin.read()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
