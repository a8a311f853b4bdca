"""The `decathlon` command line: every verb and its options (the verbs themselves are decathlon.cli.*)."""
from __future__ import annotations

import argparse
from pathlib import Path

from decathlon.backends import NAMES
from decathlon.checkout.status_kinds import KINDS
from decathlon.training.splits import add_split_arguments


def _add_source(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source", help="a Toolathlon root (default: $TOOLATHLON_ROOT), e.g. fixtures/toolathlon-mini")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="decathlon", description="Toolathlon tasks as an RL environment.")
    sub = p.add_subparsers(dest="command", required=True)

    t = sub.add_parser("tasks", help="list the tasks of a source")
    t.add_argument("--source", help="a Toolathlon root (default: $TOOLATHLON_ROOT), or `toolathlon-manifest` "
                   "for the 108 tasks' facts")
    t.add_argument("--json", action="store_true", help="a JSON array instead of a table")
    t.add_argument("--check-manifest", action="store_true",
                   help="report how this Toolathlon checkout differs from the 108-task manifest (exit 1 on drift)")
    t.add_argument("--runs", choices=["live"], help="live: only the tasks a live policy runs and their real scripts "
                   "grade here (status `graded`: every MCP server runs on this machine, its preprocess and evaluator "
                   "reach only the episode's own services and emulators, and nothing they start from is missing)")
    t.add_argument("--status", choices=[k.code for k in KINDS],
                   help="only the tasks of this status (the table says each task's, with every reason)")
    add_split_arguments(t)  # the listing: only that split, in curriculum order if one is given

    r = sub.add_parser("run", help="run episodes and print their rewards")
    r.add_argument("tasks", nargs="*", metavar="TASK")
    r.add_argument("--all", action="store_true", help="every task of the source")
    _add_source(r)
    r.add_argument("--backend", choices=list(NAMES), default=None,
                   help="where episodes run (default: local; compose with --mode rerun, which re-executes a "
                   "recorded run's code)")
    r.add_argument("--trust-recorded-code", action="store_true",
                   help="--mode rerun on a local backend that cannot isolate it (not root): run the recorded "
                   "python and terminal calls as you on this host anyway")
    r.add_argument("--policy", default="oracle", help="oracle | null | replay | openai:<model>")
    r.add_argument("--oracles", type=Path, help="folder of oracle trajectories (default: <source>/oracles)")
    r.add_argument("--mode", choices=["live", "replay", "rerun"],
                   help="replay: every MCP server answered from the task's cassette (record with `decathlon record`); "
                   "rerun: a recorded run's calls (--policy replay) re-executed on the servers that run offline, "
                   "the rest answered from its cassette, graded by the task's real evaluator (--source CHECKOUT, "
                   "--cassettes from `cassettes import-trajectories`); default: replay with --policy replay, else live")
    r.add_argument("--cassettes", type=Path, help="cassette folder (default: <source>/../cassettes)")
    r.add_argument("--trajectory", type=Path, help="recorded trajectory for --policy replay (default: beside the cassette)")
    r.add_argument("--launch-time", help='pin the clock, "YYYY-MM-DD HH:MM:SS" (default: now)')
    r.add_argument("--max-turns", type=int, default=100)
    r.add_argument("--frozen-clock", action=argparse.BooleanOptionalAction, default=None,
                   help="start the task's preprocess, servers, evaluator and the agent's own processes (python-execute) "
                   "at the launch time as \"now\" (libfaketime), so a recorded run's code and time-dependent graders "
                   "see the day the run was recorded; on by default with --mode rerun (--no-frozen-clock: the machine's)")
    r.add_argument("--saas", choices=["emulated", "real"], default="emulated",
                   help="emulated (the default): Google Cloud and Snowflake answered per episode by its own emulators "
                   "at the vendors' real host names (docs/services.md); real: no emulators, your own accounts "
                   "(DECATHLON_TOKEN_KEY_SESSION and the key files in the checkout's configs/), conflict groups held")
    r.add_argument("--seeds", type=Path, metavar="DIR",
                   help="a library of seed packs, DIR/<task>/<emulator>/… (each in the emulator's snapshot format): a "
                   "task with a folder there starts with its emulators holding that state, loaded through their "
                   "control sockets before its preprocess; the agent never reads it (docs/services.md, seed packs)")
    r.add_argument("--omit-unavailable-servers", action="store_true",
                   help="start episodes without the servers that cannot run here (replay-only, not installed) "
                   "instead of failing them; always on with --policy null, which calls no tool")
    r.add_argument("--concurrency", type=int, default=2, help="episodes at once (default 2)")
    add_split_arguments(r)
    r.add_argument("--repeats", type=int, default=1, metavar="K",
                   help="K episodes per task, each in its own sandbox (for Pass@k; `decathlon report` reads them)")
    r.add_argument("--json", action="store_true", help="one JSON object per episode per line")
    r.add_argument("--out", type=Path, help="write per-episode artifacts under this folder")
    again = r.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true",
                       help="complete the run in --out: run only its planned episodes that have no result or an infra "
                       "error (tasks, repeats and launch time from its run.json)")
    again.add_argument("--overwrite", action="store_true", help="replace the results already in --out")

    rp = sub.add_parser("report", help="Pass@1 (mean ± std over repeats), Pass@k, Pass^k, turns and timings of "
                        "run folders (--out) and recorded runs; infra errors counted apart")
    rp.add_argument("dirs", nargs="+", type=Path, metavar="DIR",
                    help="`decathlon run --out` folders, recorded runs (<task>.json) or an import's output; "
                    "folders of one run pool as repeats, different runs are shown side by side")
    rp.add_argument("--json", action="store_true", help="the report as one JSON object")
    rp.add_argument("--html", type=Path, metavar="FILE", help="also write one self-contained HTML page of the "
                    "numbers and every episode's trajectory")
    rp.add_argument("--summary", action="store_true", help="only the overall line of each run, no per-task table")
    rp.add_argument("--skip-broken", action="store_true", help="report without result files that cannot be read "
                    "(listed as skipped) instead of failing")

    rec = sub.add_parser("record", help="record cassettes: run episodes live and write down all they exchanged")
    rec.add_argument("tasks", nargs="*", metavar="TASK")
    rec.add_argument("--all", action="store_true")
    _add_source(rec)
    rec.add_argument("--policy", default="oracle", help="oracle | replay | openai:<model>")
    rec.add_argument("--oracles", type=Path)
    rec.add_argument("--out", type=Path, help="cassette folder (default: <source>/../cassettes)")
    rec.add_argument("--force", action="store_true", help="overwrite existing cassettes")
    rec.add_argument("--launch-time", help='pin the clock, "YYYY-MM-DD HH:MM:SS" (default: now)')
    rec.add_argument("--max-turns", type=int, default=100)

    cas = sub.add_parser("cassettes", help="check and compare cassettes")
    cas_sub = cas.add_subparsers(dest="cassettes_command", required=True)
    ver = cas_sub.add_parser("verify", help="format, version, hashes and a secrets scan; non-zero on any problem")
    ver.add_argument("paths", nargs="+", type=Path)
    imp = cas_sub.add_parser("import-trajectories", help="recorded real runs (<task>.json each) → replayable tasks")
    imp.add_argument("dir", type=Path)
    imp.add_argument("--out", type=Path, required=True, help="a new task source: tasks/, cassettes/, import-report.json")
    imp.add_argument("--launch-time", action="append", default=[], metavar="TASK=TIME", dest="launch_time",
                     help="the launch time of TASK's run, \"YYYY-MM-DD HH:MM:SS\", over what its outputs show "
                     "(a rerun runs at it); repeatable")
    imp.add_argument("--launch-times", type=Path, metavar="FILE",
                     help="a JSON object of launch times by task, as --launch-time gives them one by one")
    dif = cas_sub.add_parser("diff", help="what differs between two cassettes (timings left out: they differ "
                             "between any two recordings)")
    dif.add_argument("a", type=Path)
    dif.add_argument("b", type=Path)
    dif.add_argument("--timings", action="store_true", help="compare the recorded call timings (elapsed_ms) too")

    sv = sub.add_parser("servers", help="every MCP server definition of a source and how it runs here "
                        "(live: a PyPI package or our stand-in; replay: recorded cassettes only)")
    _add_source(sv)
    sv.add_argument("--json", action="store_true")

    em = sub.add_parser("emulators", help="every emulated vendor: its hosts or ports, the servers that bring it, what "
                        "of its API it answers")
    em.add_argument("--json", action="store_true")

    from decathlon.cli.seeds import add_parser as add_seeds
    add_seeds(sub)

    te = sub.add_parser("task-env", help="build the interpreter a checkout's preprocess and evaluators run with, "
                        "from the checkout's own uv.lock")
    _add_source(te)
    te.add_argument("--python", default=None,
                    help="the interpreter to build on: a path, or a version such as 3.13 (Python 3.13 from Debian 13 "
                    "packages, made portable, where this machine has none); default: this one if it is as new as the "
                    "checkout's requires-python asks (Toolathlon's: 3.12), else a newer one, said")
    te.add_argument("--dir", type=Path, help="where (default: ~/.cache/decathlon/task-envs/py<version>-<lock hash>, "
                    "or under DECATHLON_TASK_ENV_DIR)")
    te.add_argument("--json", action="store_true")

    s = sub.add_parser("serve-policy", help="serve oracle trajectories as an OpenAI-compatible endpoint")
    _add_source(s)
    s.add_argument("--oracles", type=Path)
    s.add_argument("--recorded", action="store_true", help="serve the recorded trajectories beside the cassettes "
                   "instead of the oracles")
    s.add_argument("--cassettes", type=Path, help="with --recorded: the cassette folder (default: <source>/../cassettes)")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8765)

    img = sub.add_parser("image", help="the sandbox image for the compose backend")
    img_sub = img.add_subparsers(dest="image_command", required=True)
    ib = img_sub.add_parser("build", help="build the sandbox image (and, with no base image available, its base)")
    ib.add_argument("--base-image", help="a base image to build on instead of bootstrapping one from Debian packages")
    ib.add_argument("--tag", help="the image tag (default: the project's content-addressed tag)")
    ib.add_argument("--source", help="also build an image carrying this Toolathlon checkout, its task environment "
                    "(Python 3.13) and every server the catalogue runs live (docs/checkout.md)")

    demo = sub.add_parser("demo", help="the offline demo `docker compose up` runs: mini pack and recorded tasks, "
                          "on the compose backend, then the summary served over HTTP")
    demo.add_argument("--backend", choices=list(NAMES), default="compose")
    demo.add_argument("--out", type=Path, default=Path("/artifacts"))
    demo.add_argument("--port", type=int, default=8080)
    demo.add_argument("--no-serve", action="store_true", help="exit after the runs instead of serving the summary")

    g = sub.add_parser("gc", help="remove sandboxes a killed run left behind")
    g.add_argument("--backend", choices=list(NAMES), default="local")
    g.add_argument("--run", help="only this run's sandboxes")
    g.add_argument("--force", action="store_true",
                   help="also sandboxes of runs still in progress and of other users (by default those stay)")
    return p
