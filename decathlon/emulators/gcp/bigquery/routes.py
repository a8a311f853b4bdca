"""BigQuery v2 REST routes (`/bigquery/v2/projects/{project}/...`, uploads under `/upload/bigquery/v2`).

Metadata work (datasets, tables, rows) runs on one worker thread, in order, under the warehouse's lock; jobs run
beside it, each on a thread of its own and within its time bound (decathlon.emulators.gcp.bigquery.runner): a long
query stalls neither the event loop (Storage and OAuth keep answering) nor the next client's job."""
from __future__ import annotations

import asyncio
import json
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, TypeVar

from aiohttp import web

from decathlon.emulators.gcp.bigquery import jobs as jobs_mod
from decathlon.emulators.gcp.bigquery.errors import QueryError
from decathlon.emulators.gcp.bigquery.jobs import Job
from decathlon.emulators.gcp.bigquery.resources import dataset_json, page_offset, page_token, rows_page, table_json
from decathlon.emulators.gcp.bigquery.runner import INSERT_WAIT, JobRunner, wait_seconds
from decathlon.emulators.gcp.bigquery.store import Dataset, Table, Warehouse, relation
from decathlon.emulators.gcp.bigquery.types import duck_type, quote_ident
from decathlon.emulators.gcp.bigquery.values import LoadError, json_rows
from decathlon.emulators.gcp.errors import google_error, invalid, json_object, not_found
from decathlon.emulators.gcp.media import ResumableSession, apply_chunk, multipart_related
from decathlon.emulators.gcp.storage.resources import base_url
from decathlon.emulators.gcp.storage.store import StorageStore
from decathlon.emulators.kit.errors import ApiError, json_response

T = TypeVar("T")
_DATASET_ID = re.compile(r"^[A-Za-z0-9_]{1,1024}$")
_TABLE_ID = re.compile(r"^[\w\- $]{1,1024}$", re.UNICODE)
P = "/bigquery/v2/projects/{project}"


async def _body(request: web.Request) -> dict[str, Any]:
    return await json_object(request, "Parse error: invalid JSON payload.")


def _int(value: Any) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise invalid(f"Invalid value: {value}") from None


def _truthy(value: Any) -> bool:
    return str(value).lower() in ("1", "true", "yes")


class BigQueryRoutes:
    def __init__(self, wh: Warehouse, storage: StorageStore) -> None:
        self.wh = wh
        self.storage = storage
        self.jobs: dict[tuple[str, str], Job] = {}
        self.anon: dict[tuple[str, str, str], Job] = {}
        self.sessions: dict[str, ResumableSession] = {}
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bigquery")
        self.runner = JobRunner(self._execute)

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        def locked() -> T:
            with self.wh.lock:
                return fn(*args)

        return await asyncio.get_running_loop().run_in_executor(self._worker, locked)

    # lookups (worker thread)
    def dataset(self, project: str, dataset: str) -> Dataset:
        d = self.wh.datasets.get((project, dataset))
        if d is None:
            raise not_found(f"Not found: Dataset {project}:{dataset}")
        return d

    def table(self, project: str, dataset: str, table: str) -> Table:
        self.dataset(project, dataset)
        t = self.wh.tables.get((project, dataset, table.split("$", 1)[0]))
        if t is None:
            raise not_found(f"Not found: Table {project}:{dataset}.{table}")
        return t

    # datasets
    async def list_datasets(self, request: web.Request) -> web.Response:
        project = request.match_info["project"]
        show_all = _truthy(request.query.get("all", ""))
        label_filter = request.query.get("filter", "")

        def work() -> dict[str, Any]:
            items = [d for d in sorted(self.wh.datasets.values(), key=lambda d: d.dataset_id)
                     if d.project == project and (show_all or not d.hidden) and _labels_match(d.labels, label_filter)]
            start = page_offset(request.query.get("pageToken"), None)
            size = _int(request.query.get("maxResults")) or 1000
            chunk = items[start:start + size]
            out: dict[str, Any] = {"kind": "bigquery#datasetList", "etag": f'"{len(items)}"'}
            if chunk:
                out["datasets"] = [dataset_json(d, brief=True) for d in chunk]
            if start + size < len(items):
                out["nextPageToken"] = page_token(start + size)
            return out

        return json_response(await self.call(work))

    async def insert_dataset(self, request: web.Request) -> web.Response:
        project = request.match_info["project"]
        body = await _body(request)

        def work() -> dict[str, Any]:
            ref = body.get("datasetReference") or {}
            ds_id = ref.get("datasetId") or ""
            proj = ref.get("projectId") or project
            if not _DATASET_ID.match(ds_id):
                raise invalid(f'Invalid dataset ID "{ds_id}". Dataset IDs must be alphanumeric (plus underscores) and '
                              "must be at most 1024 characters long.")
            if (proj, ds_id) in self.wh.datasets:
                raise google_error(409, "duplicate", f"Already Exists: Dataset {proj}:{ds_id}")
            now = self.wh.clock()
            d = Dataset(proj, ds_id, str(body.get("location") or "US"), now, now, body.get("description"),
                        body.get("friendlyName"), dict(body.get("labels") or {}), body.get("defaultTableExpirationMs"))
            self.wh.create_dataset(d)
            return dataset_json(d)

        return json_response(await self.call(work))

    async def get_dataset(self, request: web.Request) -> web.Response:
        m = request.match_info
        return json_response(await self.call(lambda: dataset_json(self.dataset(m["project"], m["dataset"]))))

    async def patch_dataset(self, request: web.Request) -> web.Response:
        m = request.match_info
        body = await _body(request)

        def work() -> dict[str, Any]:
            d = self.dataset(m["project"], m["dataset"])
            if "description" in body:
                d.description = body["description"]
            if "friendlyName" in body:
                d.friendly_name = body["friendlyName"]
            if "labels" in body:
                labels = body.get("labels") or {}
                d.labels = {k: v for k, v in {**(d.labels if request.method == "PATCH" else {}), **labels}.items()
                            if v is not None}
            if "defaultTableExpirationMs" in body:
                d.default_table_expiration_ms = body["defaultTableExpirationMs"]
            d.modified = self.wh.clock()
            return dataset_json(d)

        return json_response(await self.call(work))

    async def delete_dataset(self, request: web.Request) -> web.Response:
        m = request.match_info
        contents = _truthy(request.query.get("deleteContents", ""))

        def work() -> None:
            d = self.dataset(m["project"], m["dataset"])
            if self.wh.tables_of(d.project, d.dataset_id) and not contents:
                raise google_error(400, "resourceInUse", f"Dataset {d.project}:{d.dataset_id} is still in use")
            self.wh.drop_dataset(d)

        await self.call(work)
        return web.Response(status=204)

    # tables
    async def list_tables(self, request: web.Request) -> web.Response:
        m = request.match_info

        def work() -> dict[str, Any]:
            self.dataset(m["project"], m["dataset"])
            items = self.wh.tables_of(m["project"], m["dataset"])
            start = page_offset(request.query.get("pageToken"), None)
            size = _int(request.query.get("maxResults")) or 1000
            out: dict[str, Any] = {"kind": "bigquery#tableList", "etag": f'"{len(items)}"', "totalItems": len(items)}
            chunk = items[start:start + size]
            if chunk:
                out["tables"] = [table_json(t, self.wh, brief=True) for t in chunk]
            if start + size < len(items):
                out["nextPageToken"] = page_token(start + size)
            return out

        return json_response(await self.call(work))

    async def insert_table(self, request: web.Request) -> web.Response:
        m = request.match_info
        body = await _body(request)

        def work() -> dict[str, Any]:
            ref = body.get("tableReference") or {}
            proj, ds_id = ref.get("projectId") or m["project"], ref.get("datasetId") or m["dataset"]
            t_id = ref.get("tableId") or ""
            self.dataset(proj, ds_id)
            if not _TABLE_ID.match(t_id):
                raise invalid(f"Invalid table ID \"{t_id}\".")
            if (proj, ds_id, t_id) in self.wh.tables:
                raise google_error(409, "duplicate", f"Already Exists: Table {proj}:{ds_id}.{t_id}")
            now = self.wh.clock()
            t = Table(proj, ds_id, t_id, now, now, description=body.get("description"),
                      friendly_name=body.get("friendlyName"), labels=dict(body.get("labels") or {}),
                      time_partitioning=body.get("timePartitioning"), range_partitioning=body.get("rangePartitioning"),
                      clustering=body.get("clustering"), expiration_time=body.get("expirationTime"))
            view = body.get("view")
            if view and view.get("query"):
                from decathlon.emulators.gcp.bigquery.sql import translate
                try:
                    st = translate(view["query"], proj, None, self.wh)[0]
                    self.wh.con.execute(f"CREATE VIEW {relation(proj, ds_id, t_id)} AS {st.sql}")
                except QueryError as exc:
                    raise exc.api_error() from None
                except Exception as exc:  # noqa: BLE001 - DuckDB's refusal, reported as BigQuery's
                    from decathlon.emulators.gcp.bigquery.errors import from_duckdb
                    raise from_duckdb(exc, view["query"]).api_error() from None
                t.kind, t.view_query = "VIEW", view["query"]
                self.wh.tables[t.key] = t
                return table_json(t, self.wh)
            fields = (body.get("schema") or {}).get("fields") or []
            try:
                for f in fields:
                    duck_type(f)
            except (ValueError, KeyError) as exc:
                raise invalid(str(exc)) from None
            self.wh.create_table(t, fields)
            return table_json(t, self.wh)

        return json_response(await self.call(work))

    async def get_table(self, request: web.Request) -> web.Response:
        m = request.match_info
        return json_response(await self.call(lambda: table_json(self.table(m["project"], m["dataset"], m["table"]), self.wh)))

    async def patch_table(self, request: web.Request) -> web.Response:
        m = request.match_info
        body = await _body(request)

        def work() -> dict[str, Any]:
            t = self.table(m["project"], m["dataset"], m["table"])
            for key, attr in (("description", "description"), ("friendlyName", "friendly_name"),
                              ("expirationTime", "expiration_time"), ("timePartitioning", "time_partitioning"),
                              ("clustering", "clustering")):
                if key in body:
                    setattr(t, attr, body[key])
            if "labels" in body:
                t.labels = {k: v for k, v in {**t.labels, **(body.get("labels") or {})}.items() if v is not None}
            new_fields = (body.get("schema") or {}).get("fields")
            if new_fields is not None and t.kind == "TABLE":
                current = {f["name"].lower() for f in self.wh.schema(t)}
                if not t.materialized:
                    self.wh.create_table(t, new_fields)
                else:
                    for f in new_fields:
                        if f["name"].lower() not in current:
                            self.wh.con.execute(f"ALTER TABLE {relation(t.project, t.dataset_id, t.table_id)} "
                                                f"ADD COLUMN {quote_ident(f['name'])} {duck_type(f)}")
                    t.declared = [dict(f) for f in new_fields]
            t.modified = self.wh.clock()
            return table_json(t, self.wh)

        return json_response(await self.call(work))

    async def delete_table(self, request: web.Request) -> web.Response:
        m = request.match_info
        await self.call(lambda: self.wh.drop_table(self.table(m["project"], m["dataset"], m["table"])))
        return web.Response(status=204)

    async def list_rows(self, request: web.Request) -> web.Response:
        m = request.match_info
        q = request.query
        int64_ts = _truthy(q.get("formatOptions.useInt64Timestamp", ""))

        def work() -> dict[str, Any]:
            key = (m["project"], m["dataset"], m["table"])
            if key in self.anon and self.anon[key].result is not None:
                result = self.anon[key].result
                assert result is not None
                fields, rows = result.fields, result.rows
            else:
                t = self.table(*key)
                fields = self.wh.schema(t)
                rows = self.wh.con.execute(f"SELECT * FROM {relation(*t.key)}").fetchall() if t.materialized else []
            selected = [s.strip().lower() for s in q.get("selectedFields", "").split(",") if s.strip()]
            if selected:
                idx = [i for i, f in enumerate(fields) if f["name"].lower() in selected]
                fields = [fields[i] for i in idx]
                rows = [tuple(r[i] for i in idx) for r in rows]
            offset = page_offset(q.get("pageToken"), q.get("startIndex"))
            page, nxt = rows_page(rows, fields, offset, _int(q.get("maxResults")), int64_ts)
            out: dict[str, Any] = {"kind": "bigquery#tableDataList", "etag": f'"{len(rows)}"', "totalRows": str(len(rows))}
            if page:
                out["rows"] = page
            if nxt:
                out["pageToken"] = nxt
            return out

        return json_response(await self.call(work))

    async def insert_all(self, request: web.Request) -> web.Response:
        m = request.match_info
        body = await _body(request)

        def work() -> dict[str, Any]:
            t = self.table(m["project"], m["dataset"], m["table"])
            fields = self.wh.schema(t)
            if not fields:
                raise invalid(f"Table {t.project}:{t.dataset_id}.{t.table_id} has no schema.")
            good, errors = [], []
            for i, item in enumerate(body.get("rows") or []):
                try:
                    good.append(json_rows([item.get("json") or {}], fields, bool(body.get("ignoreUnknownValues")))[0])
                except LoadError as exc:
                    errors.append({"index": i, "errors": [{"reason": "invalid", "location": "", "debugInfo": "",
                                                           "message": str(exc).split(": ", 2)[-1]}]})
            if errors and not body.get("skipInvalidRows"):
                bad = {e["index"] for e in errors}
                errors += [{"index": i, "errors": [{"reason": "stopped", "location": "", "debugInfo": "", "message": ""}]}
                           for i in range(len(body.get("rows") or [])) if i not in bad]
                return {"kind": "bigquery#tableDataInsertAllResponse", "insertErrors": sorted(errors, key=lambda e: e["index"])}
            jobs_mod._insert(self.wh, t, fields, good)
            t.modified = self.wh.clock()
            out: dict[str, Any] = {"kind": "bigquery#tableDataInsertAllResponse"}
            if errors:
                out["insertErrors"] = errors
            return out

        return json_response(await self.call(work))

    # jobs
    def _new_job(self, project: str, body: dict[str, Any]) -> Job:
        ref = body.get("jobReference") or {}
        config = body.get("configuration") or {}
        kinds = [k for k in ("query", "load", "extract", "copy") if k in config]
        if not kinds:
            raise invalid("Required parameter is missing: configuration")
        job_id = ref.get("jobId") or self.wh.ids.uuid()
        proj = ref.get("projectId") or project
        if (proj, job_id) in self.jobs:
            raise google_error(409, "duplicate", f"Already Exists: Job {proj}:{ref.get('location') or 'US'}.{job_id}")
        if "query" in config:
            config["query"].setdefault("useLegacySql", False)
            if config["query"].get("useLegacySql"):
                config["query"]["useLegacySql"] = False  # legacy SQL is not emulated: GoogleSQL answers
        return Job(proj, job_id, ref.get("location") or "US", kinds[0].upper(), config, self.wh.clock())

    def _execute(self, job: Job, data: bytes | None) -> None:
        """One job, on its own thread (decathlon.emulators.gcp.bigquery.runner): a query's DuckDB work outside the
        warehouse lock, the rest under it."""
        job.connection = self.wh.con
        job.started = self.wh.clock()
        try:
            if job.job_type == "QUERY":
                if job.configuration["query"].get("dryRun") or job.configuration.get("dryRun"):
                    from decathlon.emulators.gcp.bigquery.sql import translate
                    with self.wh.lock:
                        translate(job.configuration["query"].get("query") or "", job.project, None, self.wh)
                else:
                    jobs_mod.run_query_job(self.wh, job)
            else:
                with self.wh.lock:
                    if job.job_type == "LOAD":
                        jobs_mod.run_load_job(self.wh, self.storage, job, data)
                    elif job.job_type == "EXTRACT":
                        jobs_mod.run_extract_job(self.wh, self.storage, job)
                    else:
                        jobs_mod.run_copy_job(self.wh, job)
        except ApiError as exc:
            err = (exc.body.get("error") or {}) if isinstance(exc.body, dict) else {}
            reason = ((err.get("errors") or [{}])[0]).get("reason", "invalid")
            job.error = QueryError(exc.status, reason, err.get("message", str(exc)))
        finally:
            job.ended = self.wh.clock()
            if job.anon_table:  # where tabledata.list finds its rows
                self.anon[job.anon_table] = job

    async def _start(self, project: str, body: dict[str, Any], data: bytes | None = None) -> Job:
        job = self._new_job(project, body)
        refusal = await self.call(self._compile, job) if job.job_type == "QUERY" else None
        if refusal is not None:
            # What BigQuery finds before running anything (syntax, names, functions) fails the job at its insert,
            # as the recorded runs show: only the execution runs apart, within its bound.
            job.started = job.ended = self.wh.clock()
            job.error, job.state = refusal, "DONE"
        else:
            await self.runner.start(job, data, list(self.jobs.values()))
        self.jobs[(job.project, job.job_id)] = job
        return job

    def _compile(self, job: Job) -> QueryError | None:
        from decathlon.emulators.gcp.bigquery.sql import translate
        cfg = job.configuration.get("query") or {}
        default = cfg.get("defaultDataset")
        default_ds = (default.get("projectId") or job.project, default["datasetId"]) if default else None
        try:
            translate(cfg.get("query") or "", job.project, default_ds, self.wh)
        except QueryError as exc:
            return exc
        return None

    async def insert_job(self, request: web.Request) -> web.Response:
        body = await _body(request)
        job = await self._start(request.match_info["project"], body)
        await self.runner.wait(job, INSERT_WAIT)
        return json_response(job.resource())

    async def upload_job(self, request: web.Request) -> web.Response:
        project = request.match_info["project"]
        kind = request.query.get("uploadType", "multipart")
        data = await request.read()
        if kind == "resumable":
            try:
                body = json.loads(data or b"{}")
            except ValueError:
                raise google_error(400, "parseError", "Parse error: invalid JSON payload.") from None
            upload_id = self.wh.ids.alnum(40)
            self.sessions[upload_id] = ResumableSession(upload_id, body, {"project": project})
            location = (f"{base_url(request)}/upload/bigquery/v2/projects/{project}/jobs"
                        f"?uploadType=resumable&upload_id={upload_id}")
            return web.Response(status=200, headers={"Location": location, "X-GUploader-UploadID": upload_id})
        metadata, media, _ = multipart_related(request.headers.get("Content-Type", ""), data)
        job = await self._start(project, metadata, media)
        await self.runner.wait(job, INSERT_WAIT)
        return json_response(job.resource())

    async def upload_chunk(self, request: web.Request) -> web.Response:
        session = self.sessions.get(request.query.get("upload_id", ""))
        if session is None:
            raise not_found("Not found: upload session")
        done = apply_chunk(session, request.headers.get("Content-Range"), await request.read())
        if not done:
            return web.Response(status=308, headers={"Range": f"bytes=0-{len(session.data) - 1}"} if session.data else {})
        del self.sessions[session.upload_id]
        project = session.params["project"]
        job = await self._start(project, session.metadata, bytes(session.data))
        await self.runner.wait(job, INSERT_WAIT)
        return json_response(job.resource())

    def _job(self, project: str, job_id: str) -> Job:
        job = self.jobs.get((project, job_id))
        if job is None:
            raise not_found(f"Not found: Job {project}:{job_id}")
        return job

    async def get_job(self, request: web.Request) -> web.Response:
        m = request.match_info
        return json_response(self._job(m["project"], m["job"]).resource())

    async def cancel_job(self, request: web.Request) -> web.Response:
        m = request.match_info
        job = self._job(m["project"], m["job"])
        self.runner.stop(job, "cancel")
        await self.runner.wait(job, 1.0)  # most stop at once: the answer then shows it DONE, as BigQuery's often does
        return json_response({"kind": "bigquery#jobCancelResponse", "job": job.resource()})

    async def delete_job(self, request: web.Request) -> web.Response:
        m = request.match_info
        job = self._job(m["project"], m["job"])
        if not job.done:
            raise invalid(f"Job {job.project}:{job.location}.{job.job_id} cannot be deleted: it is still running. "
                          "Cancel it first.")
        del self.jobs[(m["project"], m["job"])]
        return web.Response(status=204)

    async def list_jobs(self, request: web.Request) -> web.Response:
        project = request.match_info["project"]
        items = sorted((j for (p, _), j in self.jobs.items() if p == project), key=lambda j: j.created, reverse=True)
        start = page_offset(request.query.get("pageToken"), None)
        size = _int(request.query.get("maxResults")) or 1000
        out: dict[str, Any] = {"kind": "bigquery#jobList", "etag": f'"{len(items)}"',
                               "jobs": [{**j.resource(), "state": j.state} for j in items[start:start + size]]}
        if start + size < len(items):
            out["nextPageToken"] = page_token(start + size)
        return json_response(out)

    def _results(self, job: Job, max_results: int | None, offset: int, int64_ts: bool, kind: str) -> dict[str, Any]:
        reference = {"projectId": job.project, "jobId": job.job_id, "location": job.location}
        if not job.done:
            return {"kind": kind, "etag": f'"{job.job_id[:12]}"', "jobReference": reference, "jobComplete": False}
        if job.error is not None:
            raise job.error.api_error()
        out: dict[str, Any] = {"kind": kind, "etag": f'"{job.job_id[:12]}"', "jobReference": reference,
                               "jobComplete": True, "cacheHit": False, "totalBytesProcessed": "0"}
        r = job.result
        if r is not None and r.returns_rows:
            out["schema"] = {"fields": r.fields}
            out["totalRows"] = str(len(r.rows))
            page, nxt = rows_page(r.rows, r.fields, offset, max_results, int64_ts)
            if page:
                out["rows"] = page
            if nxt:
                out["pageToken"] = nxt
        elif r is not None and r.dml_affected is not None:
            out["numDmlAffectedRows"] = str(r.dml_affected)
            out["dmlStats"] = job.stats.get("query", {}).get("dmlStats", {})
        return out

    async def get_query_results(self, request: web.Request) -> web.Response:
        m = request.match_info
        q = request.query
        job = self._job(m["project"], m["job"])
        int64_ts = _truthy(q.get("formatOptions.useInt64Timestamp", ""))
        offset = page_offset(q.get("pageToken"), q.get("startIndex"))
        await self.runner.wait(job, wait_seconds(q.get("timeoutMs")))
        body = await self.call(lambda: self._results(job, _int(q.get("maxResults")), offset, int64_ts,
                                                     "bigquery#getQueryResultsResponse"))
        return json_response(body)

    async def query(self, request: web.Request) -> web.Response:
        project = request.match_info["project"]
        body = await _body(request)
        if not isinstance(body.get("query"), str):
            raise invalid("Required parameter is missing: query")
        config: dict[str, Any] = {"query": {k: body[k] for k in ("query", "useLegacySql", "defaultDataset", "queryParameters",
                                                  "parameterMode", "maximumBytesBilled", "labels") if k in body}}
        if body.get("jobTimeoutMs"):
            config["jobTimeoutMs"] = body["jobTimeoutMs"]
        if body.get("dryRun"):
            config["dryRun"] = True
        int64_ts = bool((body.get("formatOptions") or {}).get("useInt64Timestamp"))
        job_body = {"jobReference": {"projectId": project, "location": body.get("location") or "US"},
                    "configuration": config}

        job = await self._start(project, job_body)
        await self.runner.wait(job, wait_seconds(body.get("timeoutMs")))

        def work() -> dict[str, Any]:
            out = self._results(job, _int(body.get("maxResults")), 0, int64_ts, "bigquery#queryResponse")
            out["queryId"] = job.job_id
            return out

        return json_response(await self.call(work))

    async def list_projects(self, request: web.Request) -> web.Response:
        projects = sorted({p for p, _ in self.wh.datasets} | {b.project for b in self.storage.buckets.values() if b.project})
        return json_response({"kind": "bigquery#projectList", "etag": f'"{len(projects)}"', "totalItems": len(projects),
                              "projects": [{"kind": "bigquery#project", "id": p, "numericId": "0",
                                            "projectReference": {"projectId": p}, "friendlyName": p} for p in projects]})

    def routes(self) -> list[web.RouteDef]:
        ds = P + "/datasets/{dataset}"
        tb = ds + "/tables/{table}"
        return [
            web.get("/bigquery/v2/projects", self.list_projects),
            web.get(P + "/datasets", self.list_datasets),
            web.post(P + "/datasets", self.insert_dataset),
            web.get(ds, self.get_dataset),
            web.patch(ds, self.patch_dataset),
            web.put(ds, self.patch_dataset),
            web.delete(ds, self.delete_dataset),
            web.get(ds + "/tables", self.list_tables),
            web.post(ds + "/tables", self.insert_table),
            web.get(tb, self.get_table),
            web.patch(tb, self.patch_table),
            web.put(tb, self.patch_table),
            web.delete(tb, self.delete_table),
            web.get(tb + "/data", self.list_rows),
            web.post(tb + "/insertAll", self.insert_all),
            web.get(P + "/jobs", self.list_jobs),
            web.post(P + "/jobs", self.insert_job),
            web.get(P + "/jobs/{job}", self.get_job),
            web.post(P + "/jobs/{job}/cancel", self.cancel_job),
            web.delete(P + "/jobs/{job}/delete", self.delete_job),
            web.post(P + "/queries", self.query),
            web.get(P + "/queries/{job}", self.get_query_results),
            web.post("/upload" + P + "/jobs", self.upload_job),
            web.put("/upload" + P + "/jobs", self.upload_chunk),
        ]


def _labels_match(labels: dict[str, str], flt: str) -> bool:
    for term in flt.split():
        m = re.match(r"labels\.([^:]+)(?::(.*))?$", term)
        if not m:
            continue
        key, value = m.group(1), m.group(2)
        if key not in labels or (value not in (None, "") and labels[key] != value):
            return False
    return True
