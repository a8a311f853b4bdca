"""`task-api evaluate`: run the task's own evaluator exactly by Toolathlon's contract.

Exit 0 is a pass and 1 a fail (an evaluator may fail by raising, as five of Toolathlon's do). Any
other exit, death by a signal, a timeout or a missing evaluator is an error. Before the evaluator
runs, every process of the agent is stopped and the workspace frozen (decathlon.sandbox.freeze); the evaluator
runs as the grader where users are separated, never as root. That the evaluator can be imported was
checked at setup (before the agent acted), so what goes wrong here is reported with its kind and the
host scores it as the episode's failure: the agent's output can no longer dress a failure up as an
infra error.

Dense metrics: an evaluator may write a JSON object of numbers to the file named by
DECATHLON_METRICS_FILE (the grader's own folder, which the agent cannot write); they become metrics.
"""
from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from decathlon.tape.calls import call_sequence, first_difference
from decathlon.tape.canonical import tokenize
from decathlon.tape.redact import Redactor, secrets_from_env
from decathlon.tape.store import save, write_atomic
from decathlon.sandbox import modes, services
from decathlon.sandbox.client import DaemonError, request
from decathlon.sandbox.clock import frozen_env
from decathlon.contract.replies import EvaluateReply
from decathlon.errors import InfraError, Kind
from decathlon.sandbox.output import tail
from decathlon.sandbox.home import Home
from decathlon.sandbox.freeze import FreezeReport, freeze
from decathlon.sandbox.procs import alive
from decathlon.sandbox.setup import grader_env
from decathlon.sandbox.subproc import run_module
from decathlon.sandbox.taskdef import load_task
from decathlon.sandbox.trajlog import build
from decathlon.sandbox.users import Users

EVAL_TIMEOUT = float(os.environ.get("DECATHLON_EVAL_TIMEOUT", "600"))
STATUSES = ("success", "max_turns_reached", "failed", "timeout", "interrupted")
METRICS_ENV = "DECATHLON_METRICS_FILE"
SESSION_KEYS = ("task", "source", "workspace", "launch_time", "mode", "started_at", "tools")
AGENT_STOP_GRACE = 3.0  # seconds the daemon has to stop its servers before its group is killed


def read_metrics(path: Path) -> dict[str, float]:
    """The evaluator's dense metrics, if it wrote any."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise InfraError(Kind.BAD_METRICS, f"the evaluator's metrics file {path} cannot be read: {exc}") from exc
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise InfraError(Kind.BAD_METRICS, f"the evaluator's metrics file is not JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise InfraError(Kind.BAD_METRICS, f"{METRICS_ENV} must name a file holding a JSON object of numbers")
    return {str(k): float(v) for k, v in sorted(raw.items()) if isinstance(v, (int, float)) and not isinstance(v, bool)}


def load_messages(path: Path) -> list[dict]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InfraError(Kind.BAD_MESSAGES, f"cannot read the messages file {path}: {exc}") from exc
    messages = raw.get("messages") if isinstance(raw, dict) else raw
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise InfraError(Kind.BAD_MESSAGES, f"{path} must hold a JSON list of chat messages (or {{\"messages\": [...]}})")
    return messages


def evaluate(home: Home, messages_file: str, status: str) -> EvaluateReply:
    try:
        session = json.loads(home.session.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InfraError(Kind.NO_SESSION, "nothing to evaluate: call `task-api setup` first") from exc
    missing = [k for k in SESSION_KEYS if not isinstance(session, dict) or k not in session]
    if missing:
        raise InfraError(Kind.BAD_SESSION, f"the session record {home.session} lacks {', '.join(missing)}: it was not "
                         "written by this task-api's setup")
    if status not in STATUSES:
        raise InfraError(Kind.BAD_REQUEST, f"unknown status {status!r}; one of {', '.join(STATUSES)}")
    messages = load_messages(Path(messages_file))
    home.traj_log.write_text(json.dumps(build(session, messages, status), ensure_ascii=False, indent=2),
                             encoding="utf-8")
    # No verdict unless the run ended as a success: task-api grades a "success" alone.
    result = EvaluateReply(passed=None)
    mode = session.get("mode", "live")
    users = Users.from_env()
    # Toolathlon disconnects the MCP servers before evaluating; a recording collects them then.
    recording = _take_recording(home, messages) if mode == "record" else None
    stop_agent(home, users)
    if status == "success":
        recorded = _recorded_verdict(session, messages)
        if recorded is not None:
            result = recorded
        else:
            report = freeze(Path(session["workspace"]), users)
            clock = frozen_env(session["launch_time"]) if session.get("frozen_clock") else {}
            record = session.get("services")
            services.join(record)
            services.check(record, "before grading")
            result = _run_evaluator(home, session, {**modes.http_env(home, mode, "evaluator"),
                                                    **services.http_live(record), **services.saas_env(home, record),
                                                    **clock}, users, report)
            # An evaluator that found a service gone failed for infra's reason, not the agent's.
            services.check(record, "while the evaluator ran")
            modes.check_http_misses(home, mode, "evaluation")
    cassette = str(_write_cassette(home, session, recording, status, result)) if recording is not None else None
    home.eval_res.write_text(json.dumps({"pass": result.passed, "metrics": result.metrics,
                                         "details" if result.passed else "failure": result.output_tail},
                                        ensure_ascii=False, indent=2), encoding="utf-8")
    return result.model_copy(update={"status": status, "cassette": cassette})


def _take_recording(home: Home, messages: list[dict]) -> dict:
    try:
        return request(str(home.socket), {"op": "recording", "messages": messages}, timeout=120)
    except DaemonError as exc:
        raise InfraError(exc.kind, f"could not collect the recording: {exc.message}") from None


def _write_cassette(home: Home, session: dict, recording: dict, status: str, result: EvaluateReply) -> Path:
    """Written only now, when the episode has ended cleanly: whole (atomic), redacted, sealed."""
    cassette = {
        "meta": {"task": session["task"], "source": Path(session["source"]).name, "launch_time": session["launch_time"],
                 "status": status, "recorded_pass": result.passed, "recorded_metrics": dict(result.metrics)},
        "servers": recording["recording"]["servers"],
        "local": recording["recording"]["local"],
        "http": modes.collect_http(home),
    }
    redactor = Redactor(secrets_from_env())
    save(home.cassette_out, redactor.apply(tokenize(cassette, session["workspace"])))
    trajectory = {"format": "decathlon-trajectory", "version": 1, "task": session["task"],
                  "messages": redactor.apply(recording["messages"])}
    write_atomic(home.trajectory_out, json.dumps(trajectory, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return home.cassette_out


def _recorded_verdict(session: dict, messages: list[dict]) -> EvaluateReply | None:
    """An imported run carries no task files: its recorded verdict is the verdict (marked as such), but
    only of the recording itself. The verdict belongs to the recorded calls, made in full and in order;
    an episode that made anything else did something nobody graded, and cannot be graded offline. With a
    Toolathlon checkout as the source, its real evaluator runs instead."""
    meta = session.get("cassette_meta") or {}
    if not meta.get("imported"):
        return None
    task = load_task(Path(session["task_root"]), session["task"])
    if task.evaluator.is_file():
        return None
    recorded = meta.get("recorded_calls")
    if not isinstance(recorded, list):
        raise InfraError(Kind.NOT_GRADABLE, f"{task.name} was imported without its recorded call sequence (an import "
                         "older than this decathlon): import the runs again to replay them graded")
    differs = first_difference(recorded, call_sequence(messages, session["workspace"]))
    if differs is not None:
        raise InfraError(Kind.NOT_GRADABLE, f"{task.name} is an imported recorded run: its recorded verdict belongs to "
                         f"its {len(recorded)} recorded calls, and this episode did not make them ({differs}). Nothing "
                         "else can be graded without the task's evaluator: run the task from a Toolathlon checkout "
                         "(--source CHECKOUT, live or --mode rerun) to grade a new policy")
    failure = meta.get("recorded_failure") or ""
    return EvaluateReply(passed=meta.get("recorded_pass"), metrics=meta.get("recorded_metrics") or {}, recorded=True,
                         output_tail=tail(failure))


def stop_agent(home: Home, users: Users) -> None:
    """Nothing of the agent's runs while it is graded: the daemon (with its servers), then, where users
    are separated, every process of the agent's user, wherever it put itself. The daemon's pid is the one
    setup recorded in root's state, never the agent's run/daemon.pid."""
    pid = home.daemon_pid()
    if pid is not None and alive(pid):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + AGENT_STOP_GRACE
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    users.kill_all("agent")


def _run_evaluator(home: Home, session: dict, env: dict[str, str], users: Users, report: FreezeReport) -> EvaluateReply:
    task = load_task(Path(session["task_root"]), session["task"])
    if not task.evaluator.is_file():
        raise InfraError(Kind.EVALUATOR_MISSING, f"task {task.name} has no evaluation/main.py ({task.evaluator})")
    gt = str(task.groundtruth) if task.groundtruth else "None"
    home.metrics_file.unlink(missing_ok=True)
    run = run_module(task.module("evaluation"), ["--res_log_file", str(home.traj_log), "--agent_workspace",
                                                 session["workspace"], "--groundtruth_workspace", gt,
                                                 "--launch_time", session["launch_time"]],
                     cwd=task.source, timeout=EVAL_TIMEOUT,
                     env=grader_env(home, {**env, METRICS_ENV: str(home.metrics_file)}), prefix=users.prefix("grader"),
                     dumpable=False)
    output = "".join(line + "\n" for line in report.lines()) + run.output
    home.eval_output.write_text(output, encoding="utf-8")
    if run.exit_code is None:
        raise InfraError(Kind.EVALUATOR_TIMEOUT, f"the evaluator of {task.name} ran over {EVAL_TIMEOUT:.0f} s; "
                         f"output tail: {tail(output)}")
    if run.exit_code not in (0, 1):
        raise InfraError(Kind.EVALUATOR_CRASH, f"the evaluator of {task.name} crashed (exit {run.exit_code}); "
                         f"output tail: {tail(output)}")
    return EvaluateReply(passed=run.exit_code == 0, metrics=read_metrics(home.metrics_file), exit_code=run.exit_code,
                         output_tail=tail(output), elapsed_ms=round(run.elapsed * 1000, 1))
