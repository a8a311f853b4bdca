"""`decathlon cassettes import-trajectories`: recorded real runs → replayable tasks.

Input: a folder of runs, one `<task>.json` each: {"pass": true|false|null, "failure"?: str,
"messages": [OpenAI chat messages]} — any model's. Output (a pseudo Toolathlon root, so
`decathlon run --source OUT` runs it): tasks/finalpool/<task>/{task_config.json, docs/...} (no
evaluator: the recorded verdict is the verdict), cassettes/<task>.cassette.json and
<task>.trajectory.json, and import-report.json listing what was kept as recorded but is odd
(arguments that are not JSON, tools no server has, unprefixed names, servers the manifest does not
list for the task, tool schemas inferred from arguments), and the launch time each run is given, with what it
was read from.

Every tool result is kept as the exact string the model was shown.

The launch time matters once a run is re-executed (`--mode rerun`): the task's real preprocess and evaluator
run at it, and the agent's recorded calls (a table named `leaderboard_20251017`, a query for `'2025-10-17'`)
only mean what they meant on the day they were made. So each run's launch time is read from its own outputs
(decathlon/recordings/launch_evidence.py), unless the caller names it (`launch_times`); a run that shows no
date gets IMPORT_LAUNCH_TIME, and the report says so.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from decathlon.checkout import manifest as manifest_mod
from decathlon.recordings.cassettes import cassette_path, trajectory_path
from decathlon.recordings.launch_evidence import LaunchInference, infer
from decathlon.errors import InfraError, Kind
from decathlon.checkout.tasks import IMPORT_REPORT, task_name_problem
from decathlon.tape import nesting
from decathlon.tape.calls import call_sequence
from decathlon.tape.canonical import tokenize
from decathlon.tape.store import dumps, seal, write_atomic
from decathlon.sandbox import launch_time as lt
from decathlon.sandbox.routing import LOCAL, route

DEFAULT_WORKSPACE = "/workspace/dumps/workspace"  # Toolathlon's formal runs
# For a run whose outputs show no date (decathlon/recordings/launch_evidence.py): a fixed clock keeps its replays
# deterministic. The day most of the published Toolathlon runs were made.
IMPORT_LAUNCH_TIME = "2025-10-17 00:00:00 Friday"
SYSTEM_TEMPLATE = ("You are a capable assistant. The user's workspace is !!<<<<||||workspace_dir||||>>>>!!. "
                   "(This task was imported from a recorded run; its original system prompt is not recorded.)\n")
LOCAL_GROUPS = {"claim_done": "claim_done", "python-execute": "python_execute", "sleep": "sleep",
                "web_search": "web_search", "search_overlong_tooloutput": "handle_overlong_tool_outputs",
                "search_overlong_tooloutput_navigate": "handle_overlong_tool_outputs",
                "view_overlong_tooloutput": "handle_overlong_tool_outputs",
                "view_overlong_tooloutput_navigate": "handle_overlong_tool_outputs",
                "search_history": "history", "view_history_turn": "history", "search_in_turn": "history",
                "browse_history": "history", "history_stats": "history", "check_context_status": "manage_context",
                "manage_context": "manage_context", "smart_context_truncate": "manage_context"}
_PARTIAL = re.compile(r"(?P<label>[A-Za-z][A-Za-z _\-]{1,60}?)\s*[:=]?\s*\(?(?P<a>\d+)\s*/\s*(?P<b>\d+)\)?")


def partial_credit(failure: str | None) -> dict[str, float]:
    """`Number of strings found: 1/7` → {"number_of_strings_found": 0.142857…}; first occurrence per label."""
    out: dict[str, float] = {}
    for m in _PARTIAL.finditer(failure or ""):
        b = int(m.group("b"))
        slug = re.sub(r"[^a-z0-9]+", "_", m.group("label").strip().lower()).strip("_")
        if b and slug and slug not in out:
            out[slug] = round(int(m.group("a")) / b, 6)
    return dict(sorted(out.items()))


def detect_workspace(messages: list[dict]) -> str:
    seen: Counter[str] = Counter()
    for m in messages:
        for call in m.get("tool_calls") or []:
            seen.update(re.findall(r"(/[\w.\-/]*?/workspace)(?=/|\"|$)", call["function"].get("arguments") or ""))
    best = [p for p, _ in seen.most_common(3) if p.count("/") >= 2]
    return best[0] if best else DEFAULT_WORKSPACE


def infer_schema(samples: list[Any]) -> dict:
    """A JSON schema from the arguments seen: each property's type(s); required = present every time."""
    objs = [s for s in samples if isinstance(s, dict)]
    props: dict[str, set[str]] = {}
    for s in objs:
        for k, v in s.items():
            props.setdefault(k, set()).add(_json_type(v))
    required = sorted(k for k in props if all(k in s for s in objs)) if objs else []
    return {"type": "object", "properties": {k: {"type": sorted(t)[0] if len(t) == 1 else sorted(t)}
                                             for k, t in sorted(props.items())}, "required": required}


def _json_type(v: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(v), "null")


def _parse(raw: str) -> tuple[bool, Any]:
    if raw is None or raw.strip() == "":
        return True, {}
    try:
        value = nesting.loads(raw)
    except ValueError:  # not JSON, or nested too deeply to be arguments: kept as the raw text
        return False, raw
    return isinstance(value, dict), value


def launch_of(run: dict, override: str | None = None) -> LaunchInference:
    """The launch time a run is imported at: the caller's, else what its outputs show, else the default."""
    if override is not None:
        return LaunchInference(override, "override", note="given to the import (--launch-time)")
    return infer(run.get("messages") or [], run.get("failure"), IMPORT_LAUNCH_TIME)


def import_run(task: str, run: dict, known_servers: list[str], listed: list[str] | None,
               listed_local: list[str] | None, launch: LaunchInference | None = None) -> tuple[dict, dict, dict, dict]:
    """One run → (cassette body, trajectory, task_config, findings)."""
    messages = run.get("messages") or []
    launch = launch or launch_of(run)
    workspace = detect_workspace(messages)
    results = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    servers: dict[str, dict] = {}
    samples: dict[tuple[str, str], list[Any]] = {}
    local: list[dict] = []
    framework: list[dict] = []
    findings: dict[str, list[str]] = {"invalid_json_arguments": [], "unknown_tools": [], "unprefixed_tools": [],
                                      "servers_not_in_manifest": [], "calls_without_result": []}
    local_keys = set(listed_local or [])
    for m in messages:
        for call in m.get("tool_calls") or []:
            name, raw = call["function"]["name"], call["function"].get("arguments") or ""
            shown = results.get(call.get("id"))
            if shown is None:
                findings["calls_without_result"].append(name)
                continue
            ok, args = _parse(raw)
            r = route(name, known_servers)
            if r is None:
                findings["unprefixed_tools" if "-" not in name else "unknown_tools"].append(name)
                framework.append({"tool": name, "arguments_raw": raw, "content": shown})
                continue
            if not ok:
                findings["invalid_json_arguments"].append(f"{name}: {raw[:80]}")
                framework.append({"tool": name, "arguments_raw": raw, "content": shown})
                continue
            if r.server == LOCAL:
                local_keys.add(LOCAL_GROUPS.get(r.tool, r.tool))
                local.append({"seq": len(local) + 1, "tool": r.tool, "arguments": args, "content": shown})
                continue
            if listed is not None and r.server not in listed and r.server not in findings["servers_not_in_manifest"]:
                findings["servers_not_in_manifest"].append(r.server)
            rec = servers.setdefault(r.server, {"tools": [], "interactions": [], "tools_inferred": True})
            samples.setdefault((r.server, r.tool), []).append(args)
            rec["interactions"].append({"seq": len(rec["interactions"]) + 1, "tool": r.tool, "arguments": args,
                                        "result": {"shown": shown, "is_error": None}})
    for (server, tool), seen in sorted(samples.items()):
        servers[server]["tools"].append({"name": tool, "description": f"(schema inferred from {len(seen)} recorded call(s))",
                                         "inputSchema": infer_schema(seen)})
    metrics = partial_credit(run.get("failure"))
    # A rerun starts at the cassette's launch time (decathlon/sandbox/modes.py); why it is that one travels with it.
    evidence = {k: v for k, v in launch.to_json().items() if k != "launch_time"}
    body = {"meta": {"task": task, "imported": True, "launch_time": launch.launch_time, "launch_evidence": evidence,
                     "status": "success",
                     "recorded_pass": run.get("pass"), "recorded_failure": run.get("failure"),
                     "recorded_metrics": metrics, "recorded_workspace": workspace,
                     # What the recorded verdict belongs to: an episode is graded by it only if it made
                     # exactly these calls (decathlon/sandbox/evaluate.py).
                     "recorded_calls": call_sequence(messages, workspace)},
            "servers": servers, "local": {"mode": "replayed", "interactions": local}, "framework": framework,
            "http": []}
    trajectory = {"format": "decathlon-trajectory", "version": 1, "task": task, "messages": messages}
    config = {"needed_mcp_servers": sorted(servers), "needed_local_tools": sorted(local_keys),
              "meta": {"imported": True, "recorded_pass": run.get("pass")}}
    return tokenize(body, workspace), tokenize(trajectory, workspace), config, \
        {k: v for k, v in findings.items() if v}


def read_run(path: Path) -> dict:
    """One recorded run, checked for the shape the importer relies on; anything else is `bad_run`, named."""
    problem = task_name_problem(path.stem)
    if problem is not None:  # the file's name is the task's, and so a folder and file names of the import
        raise InfraError(Kind.BAD_RUN, f"{path}: its name makes the task name, and {problem}")
    try:
        run = nesting.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise InfraError(Kind.BAD_RUN, f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except (OSError, ValueError) as exc:  # unreadable, not JSON, or nested too deeply to be a run
        raise InfraError(Kind.BAD_RUN, f"{path}: {exc}") from None
    if not isinstance(run, dict):
        raise InfraError(Kind.BAD_RUN, f"{path}: a run is a JSON object with `messages`, not {_json_type(run)}")
    messages = run.get("messages")
    if not isinstance(messages, list):
        raise InfraError(Kind.BAD_RUN, f"{path}: `messages` must be a list")
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise InfraError(Kind.BAD_RUN, f"{path}: messages[{i}] is {_json_type(m)}, not an object")
        calls = m.get("tool_calls")
        if calls is None:
            continue
        if not isinstance(calls, list):
            raise InfraError(Kind.BAD_RUN, f"{path}: messages[{i}].tool_calls must be a list")
        for j, call in enumerate(calls):
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) \
                    or not isinstance(fn.get("arguments"), (str, type(None))):
                raise InfraError(Kind.BAD_RUN, f"{path}: messages[{i}].tool_calls[{j}] needs a `function` object "
                                 "with a string `name` and string `arguments`")
    if run.get("failure") is not None and not isinstance(run["failure"], str):
        raise InfraError(Kind.BAD_RUN, f"{path}: `failure` must be a string")
    if not isinstance(run.get("pass"), (bool, type(None))):
        raise InfraError(Kind.BAD_RUN, f"{path}: `pass` must be true, false or null")
    return run


def import_dir(src: Path, out: Path, launch_times: dict[str, str] | None = None) -> dict:
    """Every run is read and checked before anything is written, and the result is built beside `out`
    and moved into place at the end: a bad input leaves `out` as it was, never half an import.

    `launch_times`: task → launch time ("YYYY-MM-DD HH:MM:SS[ Weekday]"), over what the runs' outputs show."""
    runs = sorted(src.glob("*.json"))
    if not runs:
        raise InfraError(Kind.NO_RUNS, f"{src} holds no <task>.json runs")
    overrides = {task: lt.resolve(when) for task, when in (launch_times or {}).items()}
    unknown = sorted(set(overrides) - {p.stem for p in runs})
    if unknown:
        raise InfraError(Kind.USAGE, f"a launch time is given for {', '.join(unknown)}, which {src} holds no run of")
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / IMPORT_REPORT).is_file())):
        raise InfraError(Kind.BAD_OUT, f"{out} exists and is not an earlier import (no import-report.json); "
                         "give a new or empty folder")
    parsed = {path.stem: read_run(path) for path in runs}
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.importing-", dir=out.parent))
    try:
        report = _build(src, parsed, staging, overrides)
        _swap_in(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return report


def _swap_in(staging: Path, out: Path) -> None:
    if out.exists() and any(out.iterdir()):
        old = out.with_name(f".{out.name}.replaced-{os.getpid()}")
        out.rename(old)
        staging.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        staging.rename(out)  # over an empty folder, as rename(2) allows
    out.chmod(0o755)  # mkdtemp made it private


def _build(src: Path, runs: dict[str, dict], out: Path, overrides: dict[str, str]) -> dict:
    try:
        man = {t["id"]: t for t in manifest_mod.load()["tasks"]}
    except InfraError:
        man = {}  # without the facts table, servers are recognised from the runs' own tool names
    known = sorted({s for t in man.values() for s in t["servers"]} | _prefixes(list(runs.values())))
    report: dict[str, Any] = {"source": str(src), "tasks": {}, "unknown_to_manifest": []}
    (out / "configs" / "mcp_servers").mkdir(parents=True, exist_ok=True)
    tapes = out / "cassettes"
    for task, run in sorted(runs.items()):
        entry = man.get(task)
        if entry is None:
            report["unknown_to_manifest"].append(task)
        launch = launch_of(run, overrides.get(task))
        body, trajectory, config, findings = import_run(task, run, known, entry and entry["servers"],
                                                         entry and entry["local_tools"], launch)
        folder = out / "tasks" / "finalpool" / task
        (folder / "docs").mkdir(parents=True, exist_ok=True)
        first_user = next((m.get("content") for m in run.get("messages", []) if m.get("role") == "user"), "")
        (folder / "docs" / "task.md").write_text(first_user if isinstance(first_user, str) else json.dumps(first_user),
                                                 encoding="utf-8")
        (folder / "docs" / "agent_system_prompt.md").write_text(SYSTEM_TEMPLATE, encoding="utf-8")
        (folder / "task_config.json").write_text(json.dumps(config, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        write_atomic(trajectory_path(tapes, task), json.dumps(trajectory, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
        write_atomic(cassette_path(tapes, task), dumps(seal(body)))
        report["tasks"][task] = {"pass": run.get("pass"), "servers": config["needed_mcp_servers"],
                                 "calls": sum(len(s["interactions"]) for s in body["servers"].values())
                                 + len(body["local"]["interactions"]) + len(body["framework"]),
                                 "findings": findings, "launch": launch.to_json()}
    write_atomic(out / IMPORT_REPORT, json.dumps(report, indent=1, sort_keys=True) + "\n")
    return report


def _prefixes(runs: list[dict]) -> set[str]:
    """Server names as the runs' tool names show them, for data the manifest does not cover.

    Only names that recur with several tools count: a lone hyphenated name is ambiguous."""
    tools: dict[str, set[str]] = {}
    for run in runs:
        for m in run["messages"]:
            for call in m.get("tool_calls") or []:
                head, _, tail = call["function"]["name"].partition("-")
                if tail:
                    tools.setdefault(head, set()).add(tail)
    return {h for h, t in tools.items() if len(t) >= 2 and h != LOCAL}
