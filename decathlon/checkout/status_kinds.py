"""The statuses a task can have here (decathlon.checkout.task_status decides which): their codes, what each means and
what still runs. Apart from the deciding code so that the command line's parser names them without loading it."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    code: str
    label: str  # what the status means
    still_runs: str  # what can still be done with such a task


GRADED = Kind("graded", "graded here with its real scripts",
              "a live policy (run, train), --mode rerun and replay")
UNSEEDED = Kind("graded-without-seed", "runs here with its real scripts, but the checkout lacks a seed",
                "a live policy, --mode rerun and replay, graded without the missing file")
NEEDS_SEED = Kind("needs-seed", "graded here once given its seed pack: it starts from what lived in the task authors' "
                  "account (a template spreadsheet), which no checkout holds",
                  "a live policy, --mode rerun and replay with `run --seeds LIB` (`decathlon seeds capture` writes LIB; "
                  "without it, setup ends with seed_missing)")
RERUN = Kind("rerun-only", "graded only by re-running a recorded run: an agent's server does not run here",
             "--mode rerun with cassettes (the real evaluator; that server answered from the recording), replay of an import")
REPLAY = Kind("replay-only", "never graded offline: its scripts (or its source) need what nothing here provides",
              "replay of an import (the recorded verdict), or cassettes recorded where the network is")
BROKEN = Kind("broken", "cannot run: its task_config.json is broken", "nothing, until it is fixed")
KINDS = (GRADED, UNSEEDED, NEEDS_SEED, RERUN, REPLAY, BROKEN)
BY_CODE = {k.code: k for k in KINDS}
