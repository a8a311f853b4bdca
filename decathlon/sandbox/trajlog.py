"""traj_log.json in Toolathlon's shape: what the evaluator reads as --res_log_file."""
from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone


def key_stats(messages: list[dict]) -> dict:
    assistant = [m for m in messages if m.get("role") == "assistant"]
    calls = sum(len(m.get("tool_calls") or []) for m in assistant)
    return {"interaction_turns": len(assistant), "tool_calls": calls, "agent_llm_requests": len(assistant),
            "total_tokens": 0, "input_tokens": 0, "output_tokens": 0, "truncations": 0}


def build(session: dict, messages: list[dict], status: str) -> dict:
    task = session["task"]
    # Stable across replays of the same episode: derived from what defines it.
    request_id = hashlib.sha256(json.dumps([task, session["launch_time"], session["started_at"]]).encode()).hexdigest()[:32]
    config = {
        "task_dir": f"finalpool/{task}",
        "id": f"finalpool-{task}",
        "needed_mcp_servers": session["config"].get("needed_mcp_servers", []),
        "needed_local_tools": session["config"].get("needed_local_tools", []),
        "meta": session["config"].get("meta", {}),
        "launch_time": session["launch_time"],
        "agent_workspace": session["workspace"],
        "single_turn_mode": True,
    }
    return {
        "config": config,
        "request_id": request_id,
        "initial_run_time": session["started_at"],
        "completion_time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "tool_calls": {"tools": session["tools"]},
        "status": status,
        "messages": messages,
        "key_stats": key_stats(messages),
        "agent_cost": {"total_cost": 0.0},
        "user_cost": {"total_cost": 0.0},
        "session_id": request_id,
        "history_file": None,
    }
