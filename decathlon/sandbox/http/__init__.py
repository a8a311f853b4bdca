"""HTTP record/replay for processes we do not own (MCP servers in their own venvs, task scripts).

We cannot change their code, only their environment: `env_for` puts our `site/` directory first on
PYTHONPATH, so its sitecustomize patches the process's HTTP clients (through vcrpy, installed in
the shim dir) and records to / replays from one file per process in a workdir. This module is the
host side and imports only the standard library (the task API imports it). See docs/http-cassettes.md.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from decathlon.sandbox.http.site import decathlon_http_store as store
from decathlon.sandbox.http.site.decathlon_http_store import ENV_DIR, ENV_LABEL, ENV_MODE, ENV_REDACT, ENV_SHIM

__all__ = ["SITE_DIR", "VOLATILE_HEADERS", "collect", "env_for", "misses", "prepare_replay", "shim_dir"]

SITE_DIR = Path(__file__).resolve().parent / "site"
MODES = ("record", "replay")
# Headers that differ run to run without meaning anything to the client; collect() drops them
# (from requests and responses) so cassettes diff cleanly. Secret ones are redacted at record time.
VOLATILE_HEADERS = frozenset({
    "date", "age", "expires", "server-timing", "x-request-id", "request-id", "x-correlation-id",
    "x-amzn-requestid", "x-amz-request-id", "x-amz-id-2", "x-amzn-trace-id", "x-cloud-trace-context",
    "traceparent", "tracestate", "cf-ray", "x-cache", "x-cache-hits", "x-served-by", "x-timer", "via",
    "x-runtime", "x-response-time", "x-envoy-upstream-service-time", "x-github-request-id", "report-to",
    "nel", "alt-svc",
})
VOLATILE_HEADER_PREFIXES = ("x-ratelimit-", "ratelimit-", "x-rate-limit-")


def shim_dir() -> Path:
    """Where vcrpy & co. are installed for foreign interpreters (ci/install_servers.py puts them there)."""
    env = os.environ.get(ENV_SHIM)
    if env:
        return Path(env)
    from decathlon.sandbox.servers_config import default_servers_dir  # lazy: keeps this module stdlib-only

    return default_servers_dir() / "_http"


def env_for(mode: str, workdir: Path, label: str, redact_env: list[str], *,
            base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Variables to add to a child's environment so it records/replays HTTP to/from workdir/<label>.json.

    `redact_env` names variables whose values the child must scrub before writing anything; only
    the names travel here, the child reads the values from its own environment. `base` is the
    environment the child will otherwise get (default: ours), whose PYTHONPATH is kept after ours.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    bad = [n for n in redact_env if not n or "," in n or "=" in n]
    if bad:
        raise ValueError(f"not environment variable names: {bad!r}")
    shim = shim_dir()
    if not (shim / "vcr" / "__init__.py").is_file():
        # Fail here, loudly: a child without the shim would record nothing or (replay) refuse all.
        raise FileNotFoundError(f"the HTTP shim is not installed in {shim}; run ci/install_servers.py")
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    existing = [p for p in (base if base is not None else os.environ).get("PYTHONPATH", "").split(os.pathsep)
                if p and p != str(SITE_DIR)]
    return {
        ENV_MODE: mode,
        ENV_DIR: str(workdir),
        ENV_LABEL: store.sanitize_label(label),
        ENV_REDACT: ",".join(redact_env),
        ENV_SHIM: str(shim),
        "PYTHONPATH": os.pathsep.join([str(SITE_DIR), *existing]),
    }


def _volatile(name: str) -> bool:
    return name in VOLATILE_HEADERS or name.startswith(VOLATILE_HEADER_PREFIXES)


def _headers(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        return {}
    return {str(k).lower(): v for k, v in sorted(raw.items(), key=lambda kv: str(kv[0]).lower())
            if not _volatile(str(k).lower())}


def _interaction(label: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    req, resp = entry["request"], entry["response"]
    response: dict[str, Any] = {"status": int(resp["status"]), "headers": _headers(resp.get("headers"))}
    if resp.get("body_b64") is not None:
        response["body_b64"] = resp["body_b64"]
    else:
        response["body"] = resp.get("body") or ""
    return {"process": label,
            "request": {"method": str(req["method"]).upper(), "url": str(req["url"]),
                        "headers": _headers(req.get("headers")), "body": req.get("body"),
                        "body_b64": req.get("body_b64")},
            "response": response}


def collect(workdir: Path) -> list[dict]:
    """Every recorded interaction in workdir, by process label, then in the order they completed."""
    workdir = Path(workdir)
    return [_interaction(label, entry) for label in store.labels(workdir)
            for entry in store.read_process(workdir, label)]


def prepare_replay(workdir: Path, interactions: Iterable[Mapping[str, Any]]) -> None:
    """Write workdir/<process>.json for each process in `interactions` (collect()'s format).

    Replaces any earlier cassette or journal of those processes and clears the miss log, so the
    workdir describes one fresh replay.
    """
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    by_label: dict[str, list[dict[str, Any]]] = {}
    for item in interactions:
        label = store.sanitize_label(str(item.get("process") or ""))
        entry = _interaction(label, item)
        entry.pop("process")
        by_label.setdefault(label, []).append(entry)
    for label, entries in sorted(by_label.items()):
        store.write_json_atomic(store.snapshot_path(workdir, label), store.snapshot(label, entries))
        store.journal_path(workdir, label).unlink(missing_ok=True)
    (workdir / store.MISSES_FILE).unlink(missing_ok=True)


def misses(workdir: Path) -> list[dict]:
    """Replay misses (and shim failures) logged so far by any process, in the order they happened.

    Each: {"process", "method", "url", "reason", "body_sha256", "nearest": [{"method", "url"}...]};
    reason is "not recorded", "exhausted" (asked more often than recorded), "network blocked in
    replay" (a non-HTTP connect), or starts with "shim unavailable"/"shim error"/"unreadable cassette".
    """
    return store.read_lines(Path(workdir) / store.MISSES_FILE)
