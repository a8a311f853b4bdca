"""How many processes the kernel's OOM killer took in this (container's) memory cgroup, v1 or v2."""
from __future__ import annotations

COUNTERS = ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events")


def oom_kills() -> int:
    kills = 0
    for path in COUNTERS:
        try:
            with open(path, encoding="ascii") as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        kills = max(kills, int(value))
        except (OSError, ValueError):
            continue
    return kills
