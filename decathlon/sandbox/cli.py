"""The `task-api` command: one JSON object out per call; exit 0 when the verb did its job.

execute, status and teardown are on every tool call's path, so this module imports only what
they need; setup and evaluate import their heavier modules when called.
"""
from __future__ import annotations

import sys
from decathlon.errors import Kind


def _parser():
    import argparse

    p = argparse.ArgumentParser(prog="task-api", description="The sandbox side of decathlon: one episode's verbs.")
    p.add_argument("--home", help="episode state folder (default: $TASK_API_HOME or ~/.task-api)")
    sub = p.add_subparsers(dest="verb", required=True)
    s = sub.add_parser("setup", help="prepare the workspace, run preprocess, start the MCP servers")
    s.add_argument("task")
    s.add_argument("--source", help="Toolathlon root (default: $TOOLATHLON_ROOT)")
    s.add_argument("--launch-time", help='pin the clock: "YYYY-MM-DD HH:MM:SS" (default: now)')
    s.add_argument("--mode", choices=["live", "record", "replay", "rerun"], default="live",
                   help="rerun: a recorded run's calls re-executed on the servers that run offline, the rest "
                   "answered from its cassette, then graded by the task's real evaluator")
    s.add_argument("--cassette", help="the cassette to replay (--mode replay or rerun)")
    s.add_argument("--omit-unavailable-servers", action="store_true",
                   help="start without the servers that cannot run here (replay-only, not installed) instead of "
                   "failing; for a policy that calls no tool")
    s.add_argument("--frozen-clock", action="store_true",
                   help="start preprocess, servers and evaluator at the launch time as \"now\" (libfaketime)")
    s.add_argument("--saas", choices=["emulated", "real"], default="emulated",
                   help="emulated (the default): the episode's own emulators of Google Cloud and Snowflake behind the "
                   "SaaS front, with credentials made for them; real: no front, the user's own credentials and configs "
                   "(DECATHLON_TOKEN_KEY_SESSION…) reach the real vendors, the keys through a one-shot broker "
                   "(docs/services.md)")
    s.add_argument("--seeds", help="a folder of seed packs, one per emulator (DIR/gcp, DIR/snowflake, …, each in the "
                   "emulators' snapshot format), loaded through their control sockets before the preprocess "
                   "(decathlon/sandbox/seeds.py)")
    e = sub.add_parser("execute", help="call one tool (`-`: the call as JSON on stdin, {\"tool\", \"args\"})")
    e.add_argument("tool")
    e.add_argument("args_json", nargs="?")
    v = sub.add_parser("evaluate", help="write traj_log.json and run the task's evaluator")
    v.add_argument("--messages", required=True, help="JSON file with the conversation")
    v.add_argument("--status", default="success", help="the agent run's status (Toolathlon's gate)")
    sub.add_parser("teardown", help="stop the daemon and its servers")
    sub.add_parser("status", help="what is set up here")
    return p


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["execute"]:
        from decathlon.sandbox.client import execute_main
        raise SystemExit(execute_main(argv[1:]))
    from decathlon.errors import InfraError
    from decathlon.sandbox.output import emit, fail
    from decathlon.sandbox.home import Home
    ns = _parser().parse_args(argv)
    home = Home.from_env(ns.home)
    try:
        if ns.verb == "execute":  # reached only with --home before the verb
            from decathlon.sandbox.client import execute_main
            argv = [ns.tool] if ns.args_json is None else [ns.tool, ns.args_json]
            raise SystemExit(execute_main(argv, str(home.root)))
        elif ns.verb == "setup":
            from decathlon.sandbox.setup import setup
            emit(setup(home, ns.task, ns.source, ns.launch_time, ns.mode, ns.cassette,
                       ns.omit_unavailable_servers, ns.frozen_clock, ns.saas, ns.seeds))
        elif ns.verb == "evaluate":
            from decathlon.sandbox.evaluate import evaluate
            from decathlon.contract.replies import dump
            emit(dump(evaluate(home, ns.messages, ns.status)))
        elif ns.verb == "teardown":
            from decathlon.sandbox.lifecycle import teardown
            emit(teardown(home))
        else:
            from decathlon.sandbox.lifecycle import status
            emit(status(home))
    except InfraError as exc:
        fail(exc)
    except KeyboardInterrupt:
        fail(InfraError(Kind.INTERRUPTED, "interrupted"), 130)
    except Exception as exc:  # noqa: BLE001 - still one JSON object: the host must be told, not handed a traceback
        import traceback
        traceback.print_exc()
        fail(InfraError(Kind.INTERNAL_ERROR, f"task-api {ns.verb} failed: {type(exc).__name__}: {exc} "
                        "(a bug in task-api; the traceback is on stderr)"))


if __name__ == "__main__":
    main()
