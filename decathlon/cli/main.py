"""The `decathlon` command."""
from __future__ import annotations

import asyncio
import faulthandler
import json
import signal
import sys
from types import FrameType
from typing import Any, Coroutine

from decathlon.errors import InfraError
from decathlon.cli.parser import build_parser


class _Terminated:
    """SIGTERM (a supervisor, `kill`, a CI timeout) taken as Ctrl-C: asyncio.run's SIGINT handler
    cancels the run, every episode releases its sandbox on the way out, then KeyboardInterrupt. Without
    it, the default action kills the process where it stands, leaving daemons, servers, episode folders
    and containers for `decathlon gc`."""

    received = False

    @classmethod
    def install(cls) -> None:
        signal.signal(signal.SIGTERM, cls._on_term)

    @classmethod
    def _on_term(cls, signum: int, frame: FrameType | None) -> None:
        cls.received = True
        handler = signal.getsignal(signal.SIGINT)  # asyncio.run's while a run is on, else the default
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt


def _dump_where_it_is() -> None:
    """SIGUSR1 during a run: every thread's stack, then every asyncio task's (a wait that never ends is a task's, and
    the threads show only the event loop)."""
    faulthandler.dump_traceback(all_threads=True)
    for task in sorted(asyncio.all_tasks(), key=lambda t: t.get_name()):
        print(f"--- asyncio task {task.get_name()}", file=sys.stderr)
        task.print_stack(file=sys.stderr)
    sys.stderr.flush()


async def _dumpable(work: Coroutine[Any, Any, int]) -> int:
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, _dump_where_it_is)
    return await work


def _gc(backend: str, run: str | None, force: bool) -> int:
    """`decathlon gc`: the JSON on stdout; on stderr, each run removed or left alone and why, so that a run
    taken for dead can be told from the evidence gc had."""
    from decathlon.backends import make_backend
    from decathlon.backends.leases import forget_dead
    gc = asyncio.run(make_backend(backend).collect({"decathlon.run": run} if run else {}, force))
    forget_dead()
    for entry in gc.runs():
        print(f"decathlon gc: {entry['action']} {entry['sandboxes']} sandbox(es) of run {entry['run'] or '(none)'}: "
              f"{entry['why']}", file=sys.stderr)
    if gc.skipped_live or gc.skipped_foreign:
        print(f"decathlon gc: left {gc.skipped_live} sandbox(es) of runs still in progress and "
              f"{gc.skipped_foreign} of other users or hosts; --force removes them too", file=sys.stderr)
    print(json.dumps(gc.to_json()))
    return 0


def main(argv: list[str] | None = None) -> None:
    ns = build_parser().parse_args(argv)
    # `kill -USR1 PID` prints where every thread of a command that seems stuck is (README: a run that seems stuck).
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    if ns.command in ("run", "record", "demo"):  # the demo's runs too: `docker compose down` sends SIGTERM
        _Terminated.install()
    try:
        if ns.command == "tasks":
            from decathlon.cli.tasks import tasks_command
            code = tasks_command(ns)
        elif ns.command == "run":
            from decathlon.cli.run import run_command
            code = asyncio.run(_dumpable(run_command(ns)))
        elif ns.command == "report":
            from decathlon.cli.report import report_command
            code = report_command(ns)
        elif ns.command == "record":
            from decathlon.cli.record import record_command
            code = asyncio.run(_dumpable(record_command(ns)))
        elif ns.command == "servers":
            from decathlon.cli.servers import servers_command
            code = servers_command(ns)
        elif ns.command == "seeds":
            from decathlon.cli.seeds import seeds_command
            code = seeds_command(ns)
        elif ns.command == "emulators":
            from decathlon.cli.emulators import emulators_command
            code = emulators_command(ns)
        elif ns.command == "task-env":
            from decathlon.cli.task_env import task_env_command
            code = task_env_command(ns)
        elif ns.command == "cassettes":
            from decathlon.cli.cassettes import cassettes_command
            code = cassettes_command(ns)
        elif ns.command == "image":
            from decathlon.cli.image import build_command
            code = build_command(ns)
        elif ns.command == "demo":
            from decathlon.cli.demo import demo_command
            code = demo_command(ns)
        elif ns.command == "serve-policy":
            from decathlon.training.serve_policy import serve_command
            code = serve_command(ns)
        else:
            code = _gc(ns.backend, ns.run, ns.force)
    except InfraError as exc:
        print(f"decathlon: error: {exc.message}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        if _Terminated.received:
            print("decathlon: terminated (SIGTERM)", file=sys.stderr)
            code = 128 + signal.SIGTERM
        else:
            print("decathlon: interrupted", file=sys.stderr)
            code = 130
    except BrokenPipeError:  # output piped into `head` and the like
        code = 0
    raise SystemExit(code)
