"""Fault injection for the fake Prime control plane, chosen by configuration.

A spec is `name=value` pairs joined by commas (`--faults "rate429_every=7,pending_s=0.5"`), or one of the
presets below. Selection is deterministic (every Nth request, every Nth sandbox by creation order) so
a test can say which sandbox gets which fault and a bench run is reproducible.
"""
from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass
class Faults:
    latency_ms: float = 0.0  # added to every control-plane and gateway request
    rate429_every: int = 0  # control-plane requests: of every N, the first `rate429_burst` get 429
    rate429_burst: int = 1
    err5xx_every: int = 0  # every Nth control-plane request gets 503 (before doing anything)
    create_lost_every: int = 0  # every Nth create is carried out, but its response is lost (502)
    pending_s: float = 0.0  # how long a sandbox stays PENDING
    slow_every: int = 0  # every Nth sandbox stays PENDING for `slow_s` instead
    slow_s: float = 3.0
    stuck_every: int = 0  # every Nth sandbox never leaves PENDING
    unreachable_every: int = 0  # every Nth sandbox reports RUNNING but its gateway never answers
    die_every: int = 0  # every Nth sandbox is terminated after `die_after_execs` commands
    die_after_execs: int = 4
    delete_fail_every: int = 0  # every Nth sandbox: its first `delete_fail_times` deletes fail (500)
    delete_fail_times: int = 2
    delete_stuck_every: int = 0  # every Nth sandbox: single deletes always fail; bulk delete works
    auth: int = 0  # 401 or 402 on every control-plane request
    quota_after: int = 0  # creates beyond this many get 402

    def picks(self, every: int, index: int) -> bool:
        """Whether the sandbox created `index`-th (1-based) is one of every `every`."""
        return every > 0 and index % every == 0


PRESETS = {
    "none": "",
    # What a large run meets: throttling, flaky 5xx, lost responses, slow and stuck starts, dead gateways,
    # sandboxes dying, deletes failing; co-prime periods so faults overlap in varied ways.
    "mixed": ("latency_ms=2,rate429_every=53,rate429_burst=3,err5xx_every=41,create_lost_every=17,pending_s=0.2,"
              "slow_every=11,slow_s=1.5,stuck_every=29,unreachable_every=23,die_every=31,die_after_execs=3,"
              "delete_fail_every=7,delete_fail_times=2,delete_stuck_every=37"),
}


def parse(spec: str) -> Faults:
    spec = PRESETS.get(spec, spec)
    faults = Faults()
    types = {f.name: f.type for f in fields(Faults)}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, _, value = part.partition("=")
        if name not in types:
            raise ValueError(f"unknown fault {name!r}: one of {', '.join(types)}")
        setattr(faults, name, float(value) if types[name] in (float, "float") else int(value))
    return faults
