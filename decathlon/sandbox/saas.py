"""The SaaS side of an episode: whether it gets the front (decathlon/emulators/front), which emulators start
at once, and the variables that point every process of the episode at the front.

Which episodes: a task that names a server of an emulated vendor (google-cloud, snowflake), or whose own
scripts talk to one without naming its server (fillout-online-forms' preprocess uses Google Forms while its
config names only playwright): its preprocess and evaluator, and the checkout modules they import, are read for the
vendors' client libraries and host names (decathlon.sandbox.reach). The emulators a named server needs start with the
front; any other starts on its first connection.

`--saas real` installs no front: the user's own credentials and configs go to the
scripts and servers, which reach the real vendors; the user's keys to the scripts as the grader's private copies and
to our servers through the episode's key broker, never to the agent (decathlon/sandbox/real_keys.py).
"""
from __future__ import annotations

import os
from pathlib import Path

from decathlon.emulators import registry
from decathlon.emulators.vendor import sign_in_text
from decathlon.sandbox import reach
from decathlon.sandbox.taskdef import TaskDef

MODES = ("emulated", "real")
# The MCP servers (configs/mcp_servers/<name>.yaml) whose vendor is emulated behind the front, and the emulators
# they reach: from the vendors' descriptors.
SERVER_EMULATORS: dict[str, tuple[str, ...]] = {
    server: registry.emulators_of_server(server) for server in sorted({s for v in registry.front_vendors()
                                                                        for s in v.servers})}
NO_PROXY = "localhost,127.0.0.1,::1"
SIGN_IN = "sign-in"  # beside the CA bundle: the vendors' sign-in files (Vendor.sign_in)
TRUST_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "HTTPLIB2_CA_CERTS",
                   "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH", "GIT_SSL_CAINFO", "NODE_EXTRA_CA_CERTS")


def _code_uses_saas(task: TaskDef) -> bool:
    """Its preprocess or evaluator (or a checkout module they import) reaches a host behind the front, or starts one
    of those vendors' servers itself: decathlon.sandbox.reach reads them, for the task statuses too."""
    found = reach.read(task.dir, task.source)
    return found.reaches_front() or any(use.server in SERVER_EMULATORS for use in found.servers)


def emulators_for(task: TaskDef, mode: str = "emulated") -> list[str] | None:
    """None: the episode needs no front (or, with `real`, must not have one). Else the emulators to start
    with it (possibly none: the rest start on first use)."""
    if mode not in MODES:
        raise ValueError(f"SaaS mode {mode!r}: expected one of {', '.join(MODES)}")
    if mode != "emulated":
        return None
    eager = sorted({e for s in task.servers for e in SERVER_EMULATORS.get(s, ())})
    if eager or _code_uses_saas(task):
        return eager
    return None


def env(record: dict | None, bundle: Path | None) -> dict[str, str]:
    """For every process of the episode (preprocess, evaluator, MCP servers, the agent's shell): the front as
    their proxy, the episode's CA among their roots, the episode's own services reached directly."""
    front = (record or {}).get("services", {}).get("front")
    if not front or bundle is None:
        return {}
    proxy = f"http://127.0.0.1:{front['ports']['http']}"
    out = {name: proxy for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")}
    out.update({"NO_PROXY": NO_PROXY, "no_proxy": NO_PROXY})
    out.update({name: str(bundle) for name in TRUST_VARIABLES})
    sign_in = str(bundle.parent / SIGN_IN)
    for vendor in registry.front_vendors():
        out.update({name: value.replace("{sign_in}", sign_in) for name, value in vendor.episode_env})
    return out


def write_sign_in(public: Path) -> list[str]:
    """The front vendors' sign-in files, in `public`/sign-in (made before the front starts, by setup, which runs as
    root): every process of the episode reads them, and the agent's cannot change them."""
    folder = public / SIGN_IN
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    names = []
    for vendor in registry.front_vendors():
        for name, target in vendor.sign_in:
            path = folder / name
            path.write_text(sign_in_text(target), encoding="utf-8")
            os.chmod(path, 0o644)
            names.append(name)
    return sorted(names)


def passthrough_env(environ: dict[str, str]) -> dict[str, str]:
    """`--saas real`: the network settings the user's environment has (a proxy, a corporate CA) for the MCP
    servers too, which the MCP SDK starts with a bare environment; the scripts inherit them anyway."""
    names = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", *TRUST_VARIABLES)
    return {name: environ[name] for name in names if environ.get(name)}


def live_hosts() -> list[str]:
    """For the HTTP record/replay shim: the emulated hosts are always talked to for real, like the episode's
    own services (never recorded, never replayed)."""
    return sorted(f"{pattern}:443" for pattern in registry.host_patterns())
