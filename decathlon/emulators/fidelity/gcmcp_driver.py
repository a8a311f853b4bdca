"""Run by google-cloud-mcp's own virtualenv (not an import of decathlon's): the real server's BigQuery tools called
in-process against an emulator, so each answer is the exact text the package gives an agent.

stdin: one JSON object {"project": P, "runs": [{"emulator": URL, "seed": {"datasets": [{"id", "description"}],
"tables": [{"dataset", "table", "schema": [[name, type, mode]], "rows": [{…}] | null}]}, "calls": [{"tool",
"arguments"}]}, …]}: the runs in order, each on an emulator of its own, in one process (the package's import is most
of a run's time). stdout, per run: a line {"seeded": i}, then one JSON line per call, {"run": i, "answer": text,
"tables": ["ds.t", …]} (the tables that exist after it). The emulator is reached by BIGQUERY_EMULATOR_HOST with
anonymous credentials: the package's tools only use the client they are given (`server.bigquery_manager.client`).

A run may instead (or also) name a Cloud Logging emulator: {"logging": {"emulator": "HOST:PORT", "now": ISO,
"allowed": [log…], "seed": {"buckets": [{"id", "retention_days"}], "sinks": [{"name", "destination", "filter"}],
"entries": [{"log", "timestamp", "severity"}]}}}: the Logging tools then run on clients over an insecure channel to
it, with the server's allowed-log list and its clock (`read_logs` looks back 24 hours from `datetime.utcnow()`) at
the run's time; the seed is written through the API (entries with their own timestamps).
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
    tools.update({f"google-cloud-logging_{name}": getattr(server, f"logging_{name}") for name in LOGGING_TOOLS})
    for i, run in enumerate(job["runs"]):
        client = None
        if run.get("emulator"):
            os.environ["BIGQUERY_EMULATOR_HOST"] = run["emulator"]  # read by the client as it is made
            client = bigquery.Client(project=project, credentials=AnonymousCredentials())
            manager = BigQueryManager.__new__(BigQueryManager)
            manager.project_id, manager.client = project, client
            server.PROJECT_ID, server.bigquery_manager = project, manager
            _seed(bigquery, client, project, run.get("seed") or {})
        if run.get("logging"):
            _logging(server, project, run["logging"])
        print(json.dumps({"seeded": i}), flush=True)
        for call in run.get("calls") or []:
            tool = tools.get(call["tool"])
            answer = asyncio.run(tool(**call["arguments"])) if tool is not None else None
            print(json.dumps({"run": i, "answer": answer, "tables": _tables(client) if client else []}), flush=True)
        if client is not None:
            client.close()
    return 0


LOGGING_TOOLS = ("write_log", "read_logs", "list_logs", "create_log_sink", "list_log_sinks", "delete_log_sink",
                 "delete_log")


def _logging(server: Any, project: str, spec: dict[str, Any]) -> None:
    """The server's Logging manager on clients of the emulator, its allowed logs and clock the run's; the seed in."""
    import grpc  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from google.auth.credentials import AnonymousCredentials  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from google.cloud import logging_v2  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from google.cloud.logging_v2 import _gapic  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from google.cloud.logging_v2.services.config_service_v2 import ConfigServiceV2Client  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from google.cloud.logging_v2.services.config_service_v2.transports import ConfigServiceV2GrpcTransport  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from google.cloud.logging_v2.services.logging_service_v2.transports import LoggingServiceV2GrpcTransport  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from src import cloud_logging  # type: ignore[import-not-found,unused-ignore]

    config = ConfigServiceV2Client(transport=ConfigServiceV2GrpcTransport(channel=grpc.insecure_channel(spec["emulator"])))
    gapic = LoggingServiceV2Client(transport=LoggingServiceV2GrpcTransport(channel=grpc.insecure_channel(spec["emulator"])))
    client = logging_v2.Client(project=project, credentials=AnonymousCredentials(), _use_grpc=True)
    client._logging_api = _gapic._LoggingAPI(gapic, client)  # its own factory would dial logging.googleapis.com
    client._sinks_api = _gapic._SinksAPI(config, client)
    manager = cloud_logging.CloudLoggingManager.__new__(cloud_logging.CloudLoggingManager)
    manager.project_id, manager.client, manager.config_client = project, client, config
    server.PROJECT_ID, server.logging_manager = project, manager
    server.ALLOWED_LOG_BUCKETS = set(spec.get("allowed") or [])
    now = dt.datetime.fromisoformat(spec["now"])

    class RunClock(dt.datetime):
        @classmethod
        def utcnow(cls) -> Any:
            return now
    cloud_logging.datetime = RunClock
    seed = spec.get("seed") or {}
    parent = f"projects/{project}"
    for b in seed.get("buckets") or []:
        config.create_bucket(request={"parent": f"{parent}/locations/global", "bucket_id": b["id"],
                                      "bucket": {"retention_days": b.get("retention_days", 30)}})
    for k in seed.get("sinks") or []:
        config.create_sink(request={"parent": parent, "sink": {"name": k["name"], "destination": k["destination"],
                                                                "filter": k.get("filter") or ""}})
    entries = [{"log_name": f"{parent}/logs/{e['log']}", "severity": e["severity"], "text_payload": "",
                "timestamp": dt.datetime.fromisoformat(e["timestamp"]),
                "resource": {"type": "global", "labels": {"project_id": project}}} for e in seed.get("entries") or []]
    if entries:
        gapic.write_log_entries(request={"entries": entries})


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
