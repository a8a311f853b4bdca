"""Answering a call from recorded interactions: by tool and canonical arguments, in order of occurrence."""
from __future__ import annotations

import difflib
import json
from collections import defaultdict

from decathlon.tape.canonical import canonical


class Matcher:
    def __init__(self, server: str, interactions: list[dict], volatile: list[str] | None = None) -> None:
        self.server = server  # "" when the recorded tool names are already complete
        self.volatile = volatile or []
        self.by_key: dict[tuple[str, str], list[dict]] = defaultdict(list)
        for item in interactions:
            self.by_key[(item["tool"], canonical(item.get("arguments"), self.volatile))].append(item)
        self.used: dict[tuple[str, str], int] = defaultdict(int)
        self.all = interactions

    def take(self, tool: str, arguments: object) -> dict | None:
        """The next recorded answer to this exact call, or None (a replay miss)."""
        key = (tool, canonical(arguments, self.volatile))
        n = self.used[key]
        recorded = self.by_key.get(key, [])
        if n >= len(recorded):
            return None
        self.used[key] = n + 1
        return recorded[n]

    def explain_miss(self, tool: str, arguments: object, limit: int = 3) -> str:
        key = (tool, canonical(arguments, self.volatile))
        if self.by_key.get(key):
            return (f"replay miss: {self._name(tool)} with these arguments was recorded "
                    f"{len(self.by_key[key])} time(s) and is now called once more: {key[1]}")
        want = _pretty(tool, arguments, self.volatile)
        scored = sorted(((difflib.SequenceMatcher(None, want, _pretty(i["tool"], i.get("arguments"), self.volatile)).ratio(),
                          n, i)
                         for n, i in enumerate(self.all)), key=lambda t: (-t[0], t[1]))[:limit]
        parts = [f"replay miss: no recording of {self._name(tool)} {key[1]}"]
        if not scored:
            parts.append(f"({self._name('*')} has no recorded calls)")
        for ratio, n, item in scored:
            have = _pretty(item["tool"], item.get("arguments"), self.volatile)
            diff = "\n".join(difflib.unified_diff(have.splitlines(), want.splitlines(),
                                                  f"recorded call #{n + 1}", "this call", lineterm=""))
            parts.append(f"nearest recorded call #{n + 1} ({ratio:.0%} alike):\n{diff}")
        return "\n".join(parts)


    def _name(self, tool: str) -> str:
        return f"{self.server}-{tool}" if self.server else tool


def _pretty(tool: str, arguments: object, volatile: list[str]) -> str:
    return json.dumps({"tool": tool, "arguments": json.loads(canonical(arguments, volatile))}, indent=1,
                      sort_keys=True, ensure_ascii=False)
