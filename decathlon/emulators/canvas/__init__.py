"""A stateful emulator of Canvas LMS's REST API (`/api/v1/...`) for the checkout's canvas tasks.

Serves HTTP on 10001 (where the tasks' scripts call `http://localhost:10001`) and HTTPS on 20001 with
a self-signed certificate made at startup (where the canvas MCP server goes, `CANVAS_DOMAIN=
localhost:20001` with NODE_TLS_REJECT_UNAUTHORIZED=0), one shared state behind both. It is seeded
with upstream's accounts (see `seed`) and otherwise starts empty: each episode's preprocess creates
its courses, so ids start at 1 as on a fresh Canvas.

Surface: accounts and users (search, create, profile), courses (list, account list, create, update,
publish/conclude/delete, settings, users, sections), enrollments, assignments and groups,
submissions (submit text/URL/files, grade, comment), classic quizzes with questions and the
quiz-taking flow, discussion topics and announcements with entries, conversations, modules and
items, files and folders with the three-step upload and downloads, pages, calendar/upcoming events,
dashboard cards. Pagination (`page`/`per_page`, `Link` header), error bodies and status codes follow
Canvas; see each `api` module for its endpoints and `views` for the object shapes.

Deliberate differences: a quiz start answers 500 after creating the attempt, as upstream's
deployment does (`start(quiz_start_500=False)` or `--quiz-start-ok` for Canvas's 200); state lives
in memory only; no notifications, no background jobs (grading is immediate), no SIS imports, LTI,
rubrics, groups or New Quizzes; answer ids are random 4-digit numbers from a seeded generator, so
runs repeat.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from decathlon.emulators.directory import Directory

if TYPE_CHECKING:   # imported lazily at run time: aiohttp and the app are the bulk of start-up
    from aiohttp import web

    from decathlon.emulators.canvas.store import Store

DEFAULT_PORTS = {"http": 10001, "https": 20001}


@dataclass
class RunningService:
    name: str
    ports: dict[str, int]
    store: Store | None = field(repr=False, default=None)
    _runner: web.AppRunner | None = field(repr=False, default=None)

    async def close(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()


async def start(directory: Directory, host: str = "127.0.0.1", ports: dict[str, int] | None = None,
                clock=None, seed: int = 0, log_requests: bool = False,
                id_floors: dict[str, int] | None = None, quiz_start_500: bool = True) -> RunningService:
    """Listen on `ports` (`{"http": N, "https": M}`, 0 for any free port; None for 10001/20001).

    `quiz_start_500`: answer a student's quiz start as Toolathlon's Canvas does (the attempt is created,
    the answer is a 500), which the canvas MCP server works around by listing the attempts and
    returning the first, bare; every recorded run saw that. False answers 200 with the attempt, as a
    healthy Canvas does.

    `id_floors` ({kind: N}, kinds in `Store.ID_KINDS`) makes the next id of a kind N+1, for replaying a
    recording made on a Canvas that already held objects (a fresh Canvas, like a fresh emulator, starts at 1).
    """
    from aiohttp import web

    from decathlon.emulators.canvas.app import build_app
    from decathlon.emulators.canvas.clock import system_clock
    from decathlon.emulators.canvas.http import BASE_KEY
    from decathlon.emulators.canvas.seed import build_store
    from decathlon.emulators.canvas.tls import server_context

    wanted = dict(DEFAULT_PORTS if ports is None else ports)
    loop = asyncio.get_running_loop()
    # the certificate is made on a thread while the state is seeded and the HTTP port opens
    tls = loop.run_in_executor(None, server_context) if "https" in wanted else None
    store = build_store(directory, clock or system_clock, seed)
    for kind, floor in (id_floors or {}).items():
        if kind not in store.ID_KINDS:
            raise ValueError(f"unknown id kind {kind!r}; known: {', '.join(store.ID_KINDS)}")
        store.bump_id(kind, floor)
    store.quiz_start_500 = quiz_start_500
    app = build_app(store, log_requests)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    bound: dict[str, int] = {}
    try:
        if "http" in wanted:
            bound["http"] = await _listen(runner, web.TCPSite(runner, host, wanted["http"], reuse_address=True))
        if tls is not None:
            ctx = await tls
            bound["https"] = await _listen(runner, web.TCPSite(runner, host, wanted["https"], ssl_context=ctx,
                                                               reuse_address=True))
    except BaseException:
        await runner.cleanup()
        raise
    # Canvas's own links (html_url, file downloads) name its HTTP address, as upstream's domain.yml does
    if "http" in bound:
        app[BASE_KEY][0] = f"http://localhost:{bound['http']}"
    return RunningService("canvas", bound, store, runner)


async def _listen(runner, site) -> int:
    """Start `site`; the port it actually bound (the new address among the runner's)."""
    before = set(map(tuple, runner.addresses))
    await site.start()
    fresh = [a for a in runner.addresses if tuple(a) not in before]
    return fresh[0][1]
