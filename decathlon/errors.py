"""Host-side infra errors: classified, and kept out of the reward — unless the agent could have caused them."""
from __future__ import annotations

# Who is to blame once the agent has acted. Everything inside a sandbox is the agent's to break: it
# can kill its own daemon (daemon_died), exhaust the pids or memory (bad_reply, sandbox_died), forge a
# reply or an evaluator's output (bad_reply, evaluator_crash)... An infra error that would mask such an
# episode from training lets a policy turn a failing run into a run that does not count, so after the
# first policy turn every kind is the episode's failure (reward 0) except these: faults the agent has
# no hand in — the model endpoint, the replay layer (our recordings), the engine and image, our own
# bugs, an operator's cancellation, a release that fails after the verdict.
ENVIRONMENT_OWNED = frozenset({
    "model_unreachable", "model_error",  # the policy's endpoint
    "replay_miss", "replay_divergence", "bad_cassette", "http_shim_missing",  # the replay layer's recordings
    "engine_unreachable", "image_missing",  # the container engine
    "evaluator_missing", "grader_preflight",  # the task's grader, checked by us
    "cancelled", "interrupted", "usage",  # the operator
    "internal_error",  # a bug of ours
    "release_failed",  # after the verdict: cannot change it
})
ENVIRONMENT_OWNED_PREFIXES = ("acquire_", "cassette_")

# Of those, the kinds a sandbox may itself report (task-api's errors, read from its reply). Any other
# environment-owned kind named by a sandbox is forged — a sandbox cannot know the model endpoint failed —
# and counts as the sandbox's own fault.
SANDBOX_REPORTABLE = frozenset({"evaluator_missing", "grader_preflight"})
# ...and the replay layer's, believed only from an episode that replays: in a live one no cassette is
# read, so a sandbox naming a replay miss is lying.
SANDBOX_REPORTABLE_IN_REPLAY = frozenset({"replay_miss", "replay_divergence", "bad_cassette", "http_shim_missing"})
SANDBOX_REPORTABLE_PREFIXES = ("cassette_",)


class InfraError(Exception):
    """`origin` is "sandbox" when the kind was read from a sandbox's reply (attacker-controlled once the
    agent runs), "host" when the host itself observed the fault."""

    def __init__(self, kind: str, message: str, phase: str | None = None, origin: str = "host") -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.phase = phase
        self.origin = origin

    def to_json(self) -> dict:
        out = {"kind": self.kind, "message": self.message}
        if self.phase:
            out["phase"] = self.phase
        return out


def environment_owned(err: InfraError, replaying: bool = False) -> bool:
    """True if `err` is a fault of the environment even after the agent acted (see ENVIRONMENT_OWNED)."""
    kind = err.kind
    if err.origin == "sandbox":
        if replaying and (kind in SANDBOX_REPORTABLE_IN_REPLAY or kind.startswith(SANDBOX_REPORTABLE_PREFIXES)):
            return True
        return kind in SANDBOX_REPORTABLE
    return kind in ENVIRONMENT_OWNED or kind.startswith(ENVIRONMENT_OWNED_PREFIXES)
