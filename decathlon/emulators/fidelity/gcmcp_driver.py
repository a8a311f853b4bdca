"""Run by google-cloud-mcp's own virtualenv (not an import of decathlon's): the real server's BigQuery tools called
in-process against an emulator, so each answer is the exact text the package gives an agent.

stdin: one JSON object {"project": P, "runs": [{"emulator": URL, "seed": {"datasets": [{"id", "description"}],
"tables": [{"dataset", "table", "schema": [[name, type, mode]], "rows": [{…}] | null}]}, "calls": [{"tool",
"arguments"}]}, …]}: the runs in order, each on an emulator of its own, in one process (the package's import is most
of a run's time). stdout, per run: a line {"seeded": i}, then one JSON line per call, {"run": i, "answer": text,
"tables": ["ds.t", …]} (the tables that exist after it). The emulator is reached by BIGQUERY_EMULATOR_HOST with
anonymous credentials: the package's tools only use the client they are given (`server.bigquery_manager.client`).
"""
from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import sys
from typing import Any


def _tables(client: Any) -> list[str]:
    out: list[str] = []
    for ds in client.list_datasets():
        out.extend(f"{ds.dataset_id}.{t.table_id}" for t in client.list_tables(ds.dataset_id))
    return sorted(out)


def _row(row: dict[str, Any]) -> dict[str, Any]:
    def plain(v: Any) -> Any:
        if isinstance(v, (dt.datetime, dt.date, dt.time)):
            return v.isoformat()
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        if isinstance(v, list):
            return [plain(x) for x in v]
        return str(v) if not isinstance(v, (int, float, str, bool, type(None))) else v
    return {k: plain(v) for k, v in row.items()}


def _field(bigquery: Any, spec: list[Any]) -> Any:
    name, typ, mode, fields = spec
    return bigquery.SchemaField(name, typ, mode=mode, fields=[_field(bigquery, f) for f in fields])


def main() -> int:
    job = json.loads(sys.stdin.read())
    from google.auth.credentials import AnonymousCredentials  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from google.cloud import bigquery  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from src import server  # type: ignore[import-not-found]  # google-cloud-mcp 1.0.0's module
    from src.big_query import BigQueryManager  # type: ignore[import-not-found]

    project = job["project"]
    tools = {"google-cloud-bigquery_run_query": server.bigquery_run_query,
             "google-cloud-bigquery_list_datasets": server.bigquery_list_datasets,
             "google-cloud-bigquery_get_dataset_info": server.bigquery_get_dataset_info,
             "google-cloud-bigquery_create_dataset": server.bigquery_create_dataset}
    for i, run in enumerate(job["runs"]):
        os.environ["BIGQUERY_EMULATOR_HOST"] = run["emulator"]  # read by the client as it is made
        client = bigquery.Client(project=project, credentials=AnonymousCredentials())
        manager = BigQueryManager.__new__(BigQueryManager)
        manager.project_id, manager.client = project, client
        server.PROJECT_ID, server.bigquery_manager = project, manager
        _seed(bigquery, client, project, run.get("seed") or {})
        print(json.dumps({"seeded": i}), flush=True)
        for call in run.get("calls") or []:
            tool = tools.get(call["tool"])
            answer = asyncio.run(tool(**call["arguments"])) if tool is not None else None
            print(json.dumps({"run": i, "answer": answer, "tables": _tables(client)}), flush=True)
        client.close()
    return 0


def _seed(bigquery: Any, client: Any, project: str, seed: dict[str, Any]) -> None:
    for ds in seed.get("datasets") or []:
        dataset = bigquery.Dataset(f"{project}.{ds['id']}")
        dataset.location = "US"
        dataset.description = ds.get("description")
        client.create_dataset(dataset)
    for t in seed.get("tables") or []:
        schema = [_field(bigquery, f) for f in t["schema"]]
        ref = f"{project}.{t['dataset']}.{t['table']}"
        client.create_table(bigquery.Table(ref, schema=schema))
        if t.get("rows"):
            client.load_table_from_json([_row(r) for r in t["rows"]], ref,
                                        job_config=bigquery.LoadJobConfig(schema=schema)).result(timeout=60)


if __name__ == "__main__":
    sys.exit(main())
