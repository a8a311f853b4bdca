"""`result.json`: one episode's outcome under --out, as `decathlon run` and a verifiers rollout both write it.

One model and one writer for both harnesses; `decathlon report` reads what this writes. A field that only
one harness knows is left out of the file when unset, so a result says what its run had.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from decathlon.tape.store import write_atomic

RESULT_FILE = "result.json"
RUN_FILE = "run.json"  # a run's plan beside its results (decathlon run --out)

# Left out of the file while None: what only a rerun, a conflict group or a verifiers rollout has.
_OPTIONAL = ("replayed_servers", "conflict_group", "trace_id", "ok", "rewards", "errors")


class EpisodeRecord(BaseModel):
    """The outcome of one episode. Mutable: the episode fills it in phase by phase."""
    model_config = ConfigDict(populate_by_name=True, validate_assignment=False)

    task: str
    reward: float | None = 0.0
    passed: bool | None = Field(None, validation_alias="pass", serialization_alias="pass")
    metrics: dict[str, float] = Field(default_factory=dict)
    infra_error: dict[str, Any] | None = None
    # The episode's own fault after the agent acted (its sandbox broke, lied or died): scored 0, unlike an
    # infra error; {kind, message, phase}. See decathlon.core.blame.
    failure: dict[str, Any] | None = None
    timings: dict[str, float] = Field(default_factory=dict)
    turns: int = 0
    tool_calls: int = 0
    status: str | None = None
    omitted_servers: list[dict[str, Any]] = Field(default_factory=list)  # left out: they cannot run here
    # rerun only: the recorded verdict, and the servers answered from the recording (and why)
    recorded_pass: bool | None = None
    replayed_servers: list[dict[str, Any]] | None = None
    repeat: int = 1
    run: dict[str, Any] = Field(default_factory=dict)  # what ran (source, policy, backend, mode): report groups by it
    started: float | None = None  # wall clock (epoch seconds) at acquire and after release
    finished: float | None = None
    conflict_group: str | None = None  # live mode: the task's conflict group, and how long it waited for it
    conflict_wait: float = 0.0
    # verifiers rollouts only
    trace_id: str | None = None
    ok: bool | None = None
    rewards: dict[str, float | None] | None = None
    errors: list[str] | None = None

    def to_json(self) -> dict[str, Any]:
        d = self.model_dump(mode="json", by_alias=True)
        if not d["omitted_servers"]:
            d.pop("omitted_servers")
        if d["replayed_servers"] is None:  # not a rerun: no recorded verdict either
            d.pop("recorded_pass")
        if d["conflict_group"] is None:
            d.pop("conflict_wait")
        for key in _OPTIONAL:
            if d.get(key, 0) is None:
                d.pop(key)
        return d


def write_result(folder: Path, record: EpisodeRecord) -> Path:
    """`<folder>/result.json`, whole or absent: a run killed here must not leave a truncated result for
    `report` to trip on."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / RESULT_FILE
    write_atomic(path, json.dumps(record.to_json(), indent=2))
    return path


def note_release(record: EpisodeRecord, error: dict[str, Any] | None) -> None:
    """A failed release is the episode's infra error only where nothing else went wrong first."""
    if error is not None and record.infra_error is None and record.failure is None:
        record.infra_error = error
