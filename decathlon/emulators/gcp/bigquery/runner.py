"""Running jobs as BigQuery does: each on a thread of its own (a connection of its own to the warehouse), RUNNING
until it ends, waited for only as long as the request asks (`timeoutMs`), stopped by `jobs.cancel` or by its time
bound, however long DuckDB's work would take.

One agent's query must not hold the warehouse for the evaluator that comes after it: a job runs beside the others,
within `jobTimeoutMs` (never more than MAX_JOB_SECONDS), and a job past its bound is interrupted inside DuckDB and
ends as BigQuery ends one (`timeout`); a cancelled one ends `stopped`. At most MAX_RUNNING_JOBS run at once; more
are refused with BigQuery's rate-limit error rather than queued behind a stall."""
from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from decathlon.emulators.gcp.bigquery.errors import QueryError
from decathlon.emulators.gcp.bigquery.jobs import Job
from decathlon.emulators.gcp.bigquery.query import Stopped
from decathlon.emulators.gcp.errors import google_error

MAX_JOB_SECONDS = float(os.environ.get("DECATHLON_BIGQUERY_JOB_SECONDS", "120"))
MAX_RUNNING_JOBS = int(os.environ.get("DECATHLON_BIGQUERY_RUNNING_JOBS", "8"))
DEFAULT_WAIT_MS = 10_000  # jobs.query's and getQueryResults' timeoutMs when none is given (the API's default)
INSERT_WAIT = 1.0  # jobs.insert answers once the job is done, or after this with it RUNNING (as BigQuery: at once)
REINTERRUPT = 0.5  # an interrupt that landed before DuckDB began a statement is lost: sent again until it ends


def bound(job: Job) -> float:
    """The job's time bound: its jobTimeoutMs, never more than MAX_JOB_SECONDS."""
    try:
        asked = float(job.configuration.get("jobTimeoutMs") or 0) / 1000
    except (TypeError, ValueError):
        asked = 0
    return min(asked, MAX_JOB_SECONDS) if asked > 0 else MAX_JOB_SECONDS


def stop_error(job: Job) -> QueryError:
    if job.stop == "timeout":
        seconds = bound(job)
        return QueryError(400, "timeout", f"Operation timed out after {seconds:g} seconds. Consider reducing the amount "
                          "of work performed by your operation so that it can complete within this limit.")
    return QueryError(400, "stopped", "Job execution was cancelled: User requested cancellation")


class JobRunner:
    def __init__(self, work: Callable[[Job, bytes | None], None]) -> None:
        """`work(job, data)` runs one job to its end on a worker thread, setting job.result or raising."""
        self._work = work
        self._pool = ThreadPoolExecutor(max_workers=MAX_RUNNING_JOBS, thread_name_prefix="bigquery-job")
        self._finished: dict[int, asyncio.Future[None]] = {}

    def running(self, jobs: list[Job]) -> int:
        return sum(1 for j in jobs if not j.done)

    async def start(self, job: Job, data: bytes | None, others: list[Job]) -> None:
        if self.running(others) >= MAX_RUNNING_JOBS:
            raise google_error(400, "jobRateLimitExceeded", "Exceeded rate limits: too many concurrent queries for this "
                               "project_and_region. For more information, see "
                               "https://cloud.google.com/bigquery/docs/troubleshoot-quotas")
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()
        self._finished[id(job)] = finished
        job.state = "RUNNING"
        timer = loop.call_later(bound(job), self.stop, job, "timeout")

        def done(_: Any) -> None:
            timer.cancel()
            self._finished.pop(id(job), None)
            if not finished.done():
                finished.set_result(None)

        loop.run_in_executor(self._pool, self._run, job, data).add_done_callback(done)

    def _run(self, job: Job, data: bytes | None) -> None:
        try:
            if job.stop is not None:
                raise Stopped()
            self._work(job, data)
        except QueryError as exc:
            # DuckDB's interrupt surfaces as its own error: the stop's reason is what BigQuery says.
            job.error = stop_error(job) if job.stop is not None else exc
        except Stopped:
            job.error = stop_error(job)
        finally:
            if job.error is not None:
                job.result = None
            job.connection = None
            job.state = "DONE"

    def stop(self, job: Job, why: str) -> None:
        """Ask a running job to end (`cancel` or `timeout`): its DuckDB work is interrupted, again until it ends."""
        if job.done:
            return
        if job.stop is None:
            job.stop = why
        con = job.connection
        if con is not None:
            con.interrupt()
        asyncio.get_running_loop().call_later(REINTERRUPT, self.stop, job, why)

    async def wait(self, job: Job, seconds: float) -> bool:
        """Whether the job is done within `seconds` (it goes on running either way, as BigQuery's does)."""
        finished = self._finished.get(id(job))
        if finished is None or job.done:
            return job.done
        try:
            await asyncio.wait_for(asyncio.shield(finished), max(0.0, seconds))
        except asyncio.TimeoutError:
            pass
        return job.done

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def wait_seconds(timeout_ms: Any) -> float:
    """A request's timeoutMs (how long it waits for the job, not how long the job may run), in seconds."""
    try:
        ms = float(timeout_ms) if timeout_ms not in (None, "") else DEFAULT_WAIT_MS
    except (TypeError, ValueError):
        ms = DEFAULT_WAIT_MS
    return max(0.0, min(ms, 60_000.0)) / 1000
