"""HTTP record/replay for processes we do not own (decathlon/sandbox/http): the real mcp-server-fetch, and
plain requests/httpx/aiohttp/urllib scripts, all run as child processes configured only through
the environment that decathlon.sandbox.http.env_for returns. Loopback only.

The cut-network replay runs the MCP client and server under `unshare -n` (a fresh network namespace
whose loopback is down). The tests run as root here, so that is permitted; where it is not, that one
test skips and the stopped-server replay (same assertions) remains the offline proof.

Run as a script (`--driver spec.json`) this file is the small MCP client driver used under unshare.
"""
from __future__ import annotations

import asyncio
import errno
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # the driver is run as a plain script
    sys.path.insert(0, str(REPO))
FETCH_BIN = REPO / ".servers" / "fetch" / "bin" / "mcp-server-fetch"
# readabilipy (under mcp-server-fetch) runs `npm install` from the registry on every page when it
# finds `node` on PATH without its node_modules: network traffic outside Python, with npm writing
# to the server's stdout. A PATH of just the server's venv keeps it on its pure-Python extractor.
FETCH_PATH = {"PATH": str(FETCH_BIN.parent)}
PY = sys.executable
SECRET_VAR = "DECATHLON_TEST_SECRET"


# ------------------------------------------------------------------ the MCP driver (also a script)

async def _fetch_all(command: str, args: list[str], env: dict[str, str], urls: list[str]) -> list[dict[str, Any]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command, args=args, env=env)
    out = []
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.list_tools()  # before any call, so the traffic has one shape
                for url in urls:
                    res = await session.call_tool("fetch", {"url": url})
                    out.append({"is_error": bool(res.is_error),
                                "content": [c.model_dump(mode="json", by_alias=True) for c in res.content]})
    return out


def fetch_all(env: dict[str, str], urls: list[str]) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, Any]]:
        return await asyncio.wait_for(_fetch_all(str(FETCH_BIN), ["--ignore-robots-txt"], env, urls), 120)
    return asyncio.run(run())


def _driver(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    probe = None
    if spec.get("probe"):
        try:
            socket.create_connection(tuple(spec["probe"]), timeout=2).close()
        except OSError as exc:
            probe = exc.errno
    results = asyncio.run(asyncio.wait_for(_fetch_all(spec["command"], spec["args"], spec["env"], spec["urls"]), 120))
    print(json.dumps({"probe_errno": probe, "results": results}))


if __name__ == "__main__" and sys.argv[1:2] == ["--driver"]:
    _driver(sys.argv[2])
    sys.exit(0)


import pytest  # noqa: E402 - not needed by the driver
from lines import readline  # noqa: E402

from decathlon.sandbox.http import SITE_DIR, collect, env_for, misses, prepare_replay, shim_dir  # noqa: E402
from decathlon.sandbox.http.site.decathlon_http_redact import REDACTED, Redactor  # noqa: E402


def _require_shim() -> None:
    if not (shim_dir() / "vcr").is_dir():
        pytest.skip("HTTP shim not installed: run ci/install_servers.py")


# ------------------------------------------------------------------ a loopback web server

class Site:
    """ThreadingHTTPServer on an ephemeral 127.0.0.1 port; counts hits so repeats differ."""

    def __init__(self) -> None:
        hits: dict[str, int] = {}
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status: int, body: bytes, ctype: str = "text/html; charset=utf-8",
                      extra: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Set-Cookie", "session=live-cookie-value; Path=/; HttpOnly")
                self.send_header("X-Request-Id", f"req-{time.monotonic_ns()}")
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                path, _, query = self.path.partition("?")
                with lock:
                    hits[path] = n = hits.get(path, 0) + 1
                if path in ("/page1", "/page2"):
                    title = {"/page1": "Alpine lakes", "/page2": "Desert rivers"}[path]
                    body = (f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
                            f"<p>This is the {title.lower()} page, a long enough paragraph for the readability "
                            f"extractor to keep it as the main content of the document.</p>"
                            f"<p>Second paragraph about {title.lower()}.</p></article></body></html>")
                    self._send(200, body.encode())
                elif path == "/secret":
                    token = dict(p.partition("=")[::2] for p in query.split("&")).get("token", "")
                    body = (f"<html><body><article><h1>Welcome</h1><p>Your token {token} is valid.</p>"
                            "</article></body></html>")
                    self._send(200, body.encode(), extra={"X-Echo-Token": token})
                elif path == "/counter":
                    self._send(200, f"count={n}".encode(), "text/plain")
                elif path == "/gzip":
                    import gzip
                    self._send(200, gzip.compress(b"zipped hello"), "text/plain", {"Content-Encoding": "gzip"})
                elif path == "/binary":
                    self._send(200, bytes(range(256)), "application/octet-stream")
                else:
                    self._send(404, b"not found", "text/plain")

            def do_POST(self) -> None:  # noqa: N802
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._send(201, b"echo:" + data, "text/plain")

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        if self.thread.is_alive():
            self.httpd.shutdown()
            self.thread.join(5)
        self.httpd.server_close()


@pytest.fixture
def site():
    s = Site()
    yield s
    s.stop()


# ------------------------------------------------------------------ the proof: real mcp-server-fetch

@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Record mcp-server-fetch fetching two pages and a page that echoes a planted secret."""
    _require_shim()
    if not FETCH_BIN.exists():
        pytest.skip("mcp-server-fetch not installed: run ci/install_servers.py")
    site = Site()
    secret = f"s3cr3t{os.getpid()}x{time.monotonic_ns()}"
    workdir = tmp_path_factory.mktemp("record")
    urls = [f"{site.base}/page1", f"{site.base}/page2", f"{site.base}/secret?token={secret}"]
    server_env = {SECRET_VAR: secret, **FETCH_PATH, **env_for("record", workdir, "server-fetch", [SECRET_VAR], base={})}
    try:
        results = fetch_all(server_env, urls)
    finally:
        site.stop()  # everything after this is offline
    return {"workdir": workdir, "urls": urls, "results": results, "secret": secret, "port": site.port,
            "interactions": collect(workdir)}


def _replay_env(tmp_path: Path, interactions: list[dict], secret: str) -> tuple[Path, dict[str, str]]:
    workdir = tmp_path / "replay"
    prepare_replay(workdir, interactions)
    # Replay gets a placeholder, not the secret: it is redacted like the recorded one, so it matches.
    return workdir, {SECRET_VAR: "placeholder-not-the-secret", **FETCH_PATH,
                     **env_for("replay", workdir, "server-fetch", [SECRET_VAR], base={})}


def _assert_replayed(replayed: list[dict], recorded: dict) -> None:
    """The two pages come back byte for byte; the secret page comes back as it was stored: redacted."""
    assert json.dumps(replayed[:2]).encode() == json.dumps(recorded["results"][:2]).encode()
    secret_page = replayed[2]["content"][0]["text"]
    assert replayed[2]["is_error"] is False
    # <REDACTED> reads as an HTML tag to the server's extractor, which drops it: the text is honest.
    assert secret_page.split("\n", 1)[1] == "# Welcome\n\nYour token is valid."


def test_fetch_record_collects_every_page(recorded):
    results, urls = recorded["results"], recorded["urls"]
    assert [r["is_error"] for r in results] == [False, False, False]
    assert "Alpine lakes" in results[0]["content"][0]["text"]
    assert "Desert rivers" in results[1]["content"][0]["text"]
    interactions = recorded["interactions"]
    assert [(i["process"], i["request"]["method"]) for i in interactions] == [("server-fetch", "GET")] * 3
    assert [i["request"]["url"] for i in interactions[:2]] == urls[:2]
    assert interactions[2]["request"]["url"].endswith(f"/secret?token={REDACTED}")
    page1 = interactions[0]["response"]
    assert page1["status"] == 200 and "Alpine lakes" in page1["body"] and "body_b64" not in page1
    assert "x-request-id" not in page1["headers"] and "date" not in page1["headers"]  # volatile, dropped
    assert page1["headers"]["set-cookie"] == f"session={REDACTED}; Path=/; HttpOnly"
    assert interactions == collect(recorded["workdir"])  # stable


def test_fetch_recording_never_holds_the_secret(recorded):
    secret = recorded["secret"].encode()
    assert secret.decode() in json.dumps(recorded["results"][2])  # it really went through the server
    files = [p for p in recorded["workdir"].rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"server-fetch.json", "server-fetch.journal.jsonl"}
    for path in files:
        assert secret not in path.read_bytes(), path
    echoed = recorded["interactions"][2]["response"]
    assert echoed["headers"]["x-echo-token"] == REDACTED
    assert f"Your token {REDACTED} is valid" in echoed["body"]


def test_fetch_replay_is_identical_with_the_server_gone(recorded, tmp_path):
    workdir, env = _replay_env(tmp_path, recorded["interactions"], recorded["secret"])
    missing = f"http://127.0.0.1:{recorded['port']}/page3"
    replayed = fetch_all(env, recorded["urls"] + [missing])
    _assert_replayed(replayed[:3], recorded)
    miss = replayed[3]
    assert miss["is_error"] is True
    assert "replay miss" in miss["content"][0]["text"] and "Alpine" not in miss["content"][0]["text"]
    logged = misses(workdir)
    assert [(m["process"], m["method"], m["url"], m["reason"]) for m in logged] == [
        ("server-fetch", "GET", missing, "not recorded")]
    assert {n["url"] for n in logged[0]["nearest"]} >= set(recorded["urls"][:2])


def test_fetch_replay_under_a_cut_network(recorded, tmp_path):
    if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -n is not permitted here; the stopped-server replay is the offline check")
    workdir, env = _replay_env(tmp_path, recorded["interactions"], recorded["secret"])
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"command": str(FETCH_BIN), "args": ["--ignore-robots-txt"], "env": env,
                                "urls": recorded["urls"], "probe": ["127.0.0.1", recorded["port"]]}))
    proc = subprocess.run(["unshare", "-n", PY, __file__, "--driver", str(spec)], capture_output=True, text=True,
                          timeout=180, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["probe_errno"] == errno.ENETUNREACH  # really no network, not even loopback
    _assert_replayed(out["results"], recorded)
    assert misses(workdir) == []


# ------------------------------------------------------------------ the shim with plain clients

CLIENT = textwrap.dedent("""
    import asyncio, json, sys, urllib.request
    import aiohttp, httpx, requests
    base = sys.argv[1]
    out = []
    def note(kind, fn):
        try:
            out.append([kind, fn()])
        except Exception as exc:
            out.append([kind, "error", type(exc).__name__, isinstance(exc, OSError)])
    note("requests", lambda: requests.get(base + "/counter").text)
    note("requests-again", lambda: requests.get(base + "/counter").text)
    note("requests-key", lambda: requests.get(base + "/page1?api_key=k-123&x=1").status_code)
    note("requests-post", lambda: requests.post(base + "/echo", data=b"abc").text)
    note("requests-gzip", lambda: requests.get(base + "/gzip").text)
    note("httpx", lambda: httpx.get(base + "/counter").text)
    note("httpx-binary", lambda: list(httpx.get(base + "/binary").content[:4]))
    note("httpx-post", lambda: httpx.post(base + "/echo", content=b"xyz").text)
    note("httpx-404", lambda: httpx.get(base + "/nothing").status_code)
    async def both():
        async with httpx.AsyncClient() as c:
            a = (await c.get(base + "/page2")).status_code
        async with aiohttp.ClientSession() as s:
            async with s.get(base + "/counter") as r:
                b = await r.text()
            async with s.get(base + "/gzip") as r:
                c = await r.text()
        return [a, b, c]
    note("async", lambda: asyncio.run(both()))
    note("urllib", lambda: urllib.request.urlopen(base + "/counter").read().decode())
    note("auth", lambda: requests.get(base + "/page1", headers={"Authorization": "Bearer sk-live-1"}).status_code)
    print(json.dumps(out))
""")


def run_py(script: str, env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("DECATHLON_HTTP_") and k != "PYTHONPATH"}
    return subprocess.run([PY, "-c", script, *args], env={**full, **env}, capture_output=True, text=True,
                          timeout=timeout)


def test_clients_record_then_replay_offline(site, tmp_path):
    _require_shim()
    rec = run_py(CLIENT, env_for("record", tmp_path / "rec", "client", []), site.base)
    assert rec.returncode == 0, rec.stderr
    live = json.loads(rec.stdout)
    assert all(v[1] != "error" for v in live), live
    assert [v[1] for v in live[:2]] == ["count=1", "count=2"] and live[4][1] == "zipped hello"
    interactions = collect(tmp_path / "rec")
    assert len(interactions) == 14
    assert interactions[13]["request"]["headers"]["authorization"] == f"Bearer {REDACTED}"
    assert not [p for p in (tmp_path / "rec").iterdir() if b"sk-live-1" in p.read_bytes()]
    assert interactions[11]["response"]["body"] == "zipped hello"  # aiohttp hands it over decoded
    assert interactions[2]["request"]["url"] == f"{site.base}/page1?api_key={REDACTED}&x=1"
    assert interactions[3]["request"]["body"] == "abc"
    assert interactions[6]["response"]["body_b64"]  # not UTF-8, so base64
    assert "content-encoding" not in interactions[4]["response"]["headers"]  # stored decoded
    site.stop()
    prepare_replay(tmp_path / "rep", interactions)
    rep = run_py(CLIENT, env_for("replay", tmp_path / "rep", "client", []), site.base)
    assert rep.returncode == 0, rep.stderr
    assert json.loads(rep.stdout) == live  # including count=1 then count=2: order of occurrence
    assert misses(tmp_path / "rep") == []


MISSER = textwrap.dedent("""
    import json, sys, httpx, requests
    base = sys.argv[1]
    out = []
    for name, fn in [("same", lambda: requests.get(base + "/counter").text),
                     ("exhausted", lambda: requests.get(base + "/counter").text),
                     ("other-body", lambda: httpx.post(base + "/echo", content=b"different").text),
                     ("new-url", lambda: httpx.get(base + "/page9").text)]:
        try:
            out.append([name, fn()])
        except requests.ConnectionError:
            out.append([name, "connection error", "requests"])
        except httpx.ConnectError:
            out.append([name, "connection error", "httpx"])
    print(json.dumps(out))
""")


def test_misses_raise_connection_errors_and_are_logged(site, tmp_path):
    _require_shim()
    rec = run_py("import requests, httpx, sys; requests.get(sys.argv[1] + '/counter'); "
                 "httpx.post(sys.argv[1] + '/echo', content=b'abc')", env_for("record", tmp_path / "rec", "p", []),
                 site.base)
    assert rec.returncode == 0, rec.stderr
    prepare_replay(tmp_path / "rep", collect(tmp_path / "rec"))
    rep = run_py(MISSER, env_for("replay", tmp_path / "rep", "p", []), site.base)
    assert rep.returncode == 0, rep.stderr
    assert json.loads(rep.stdout) == [["same", "count=1"], ["exhausted", "connection error", "requests"],
                                      ["other-body", "connection error", "httpx"],
                                      ["new-url", "connection error", "httpx"]]
    logged = misses(tmp_path / "rep")
    assert [(m["method"], m["url"].removeprefix(site.base), m["reason"]) for m in logged] == [
        ("GET", "/counter", "exhausted"), ("POST", "/echo", "not recorded"), ("GET", "/page9", "not recorded")]
    assert logged[1]["nearest"][0] == {"method": "POST", "url": f"{site.base}/echo"}
    assert all(m["process"] == "p" for m in logged)


def test_replay_never_reaches_the_network_even_past_the_stubs(site, tmp_path):
    """A live loopback server stays untouched in replay; raw non-loopback sockets are refused."""
    _require_shim()
    prepare_replay(tmp_path, [])
    script = ("import socket, sys, requests\n"
              "try: requests.get(sys.argv[1] + '/counter'); print('reached')\n"
              "except requests.ConnectionError: print('refused')\n"
              "try: socket.create_connection(('192.0.2.1', 80), timeout=1); print('connected')\n"
              "except ConnectionRefusedError: print('blocked')\n")
    rep = run_py(script, env_for("replay", tmp_path, "guarded", []), site.base)
    assert rep.stdout.split() == ["refused", "blocked"], rep.stderr
    assert [m["reason"] for m in misses(tmp_path)] == ["not recorded", "network blocked in replay"]
    # the live server never saw the request
    assert run_py("import requests,sys; print(requests.get(sys.argv[1] + '/counter').text)", {}, site.base
                  ).stdout.strip() == "count=1"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_process_keeps_its_finished_interactions(site, tmp_path, sig):
    _require_shim()
    script = ("import sys, time, requests\n"
              "requests.get(sys.argv[1] + '/page1'); requests.get(sys.argv[1] + '/page2')\n"
              "print('ready', flush=True); time.sleep(60)\n")
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, **env_for("record", tmp_path, "victim", [])}
    proc = subprocess.Popen([PY, "-c", script, site.base], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert readline(proc).strip() == "ready"
        os.kill(proc.pid, sig)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert [i["request"]["url"].removeprefix(site.base) for i in collect(tmp_path)] == ["/page1", "/page2"]


def test_inactive_sitecustomize_does_nothing(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    # A sitecustomize we shadow still runs (a venv or distro may rely on one).
    (other / "sitecustomize.py").write_text("import os\nos.environ['CHAINED_SITECUSTOMIZE'] = 'yes'\n")
    script = ("import os, socket, sys, json\n"
              "print(json.dumps([os.environ.get('CHAINED_SITECUSTOMIZE'), 'vcr' in sys.modules,\n"
              "      'decathlon_http_shim' in sys.modules, 'connect' in vars(socket.socket)]))")
    out = run_py(script, {"PYTHONPATH": f"{SITE_DIR}{os.pathsep}{other}"})
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert json.loads(out.stdout) == ["yes", False, False, False]


def test_a_broken_shim_degrades_without_breaking_the_process(site, tmp_path):
    _require_shim()
    script = "import requests, sys; print(requests.get(sys.argv[1] + '/counter').text)"
    env = env_for("record", tmp_path / "rec", "broken", [])
    rec = run_py(script, {**env, "DECATHLON_HTTP_SHIM": str(tmp_path / "nowhere")}, site.base)
    assert rec.returncode == 0 and rec.stdout.strip() == "count=1"
    assert "HTTP record is not active" in rec.stderr
    assert [m["reason"].split(":")[0] for m in misses(tmp_path / "rec")] == ["shim unavailable"]
    # In replay a broken shim still keeps the process off the network, loopback included.
    env = env_for("replay", tmp_path / "rep", "broken", [])
    rep = run_py(script.replace("print(", "print('unexpected', "), {**env, "DECATHLON_HTTP_SHIM": str(tmp_path / "x")},
                 site.base)
    assert rep.returncode != 0 and "ConnectionError" in rep.stderr
    assert [m["reason"] for m in misses(tmp_path / "rep")][-1] == "network blocked in replay (shim unavailable)"


# ------------------------------------------------------------------ host API and redaction units

def test_env_for_prepends_the_site_dir_and_keeps_pythonpath(tmp_path):
    _require_shim()
    env = env_for("replay", tmp_path / "w", "server/../fetch me", ["A_TOKEN"], base={"PYTHONPATH": "/x:/y"})
    assert env["PYTHONPATH"] == f"{SITE_DIR}:/x:/y"
    assert env["DECATHLON_HTTP_LABEL"] == "server_.._fetch_me"
    assert env["DECATHLON_HTTP_REDACT_ENV"] == "A_TOKEN" and env["DECATHLON_HTTP_MODE"] == "replay"
    assert Path(env["DECATHLON_HTTP_DIR"]).is_absolute()
    with pytest.raises(ValueError):
        env_for("live", tmp_path, "x", [])
    with pytest.raises(ValueError):
        env_for("record", tmp_path, "x", ["A,B"])


def test_redactor_rules():
    r = Redactor(["hunter2", "p@ss word"])
    assert r.url("https://u:pw@h.io/a?token=t1&page=2&access_token=z&sig=q&x=hunter2") == (
        f"https://u:{REDACTED}@h.io/a?token={REDACTED}&page=2&access_token={REDACTED}&sig={REDACTED}&x={REDACTED}")
    assert r.url("https://h.io/?q=p%40ss%20word") == f"https://h.io/?q={REDACTED}"
    assert r.header("Authorization", "Bearer abc") == f"Bearer {REDACTED}"
    assert r.header("X-Api-Key", "abc") == REDACTED
    assert r.header("Cookie", "a=1; b=2") == f"a={REDACTED}; b={REDACTED}"
    assert r.header("WWW-Authenticate", 'Basic realm="x"') == 'Basic realm="x"'
    assert r.header("X-Note", "say hunter2") == f"say {REDACTED}"
    assert r.body(b'{"pw": "p@ss word", "n": "hunter2hunter2"}') == (
        b'{"pw": "<REDACTED>", "n": "<REDACTED><REDACTED>"}')
    assert Redactor([""]).body(b"abc") == b"abc"


def test_prepare_replay_round_trips_collect(tmp_path):
    items = [{"process": "b", "request": {"method": "get", "url": "http://h/1", "headers": {"Date": "x"},
                                          "body": None, "body_b64": None},
              "response": {"status": 200, "headers": {"Content-Type": "text/plain"}, "body": "one"}},
             {"process": "a", "request": {"method": "POST", "url": "http://h/2", "headers": {}, "body": None,
                                          "body_b64": "AAE="},
              "response": {"status": 500, "headers": {}, "body_b64": "/w=="}}]
    prepare_replay(tmp_path, items)
    got = collect(tmp_path)
    assert [g["process"] for g in got] == ["a", "b"]
    assert got[1]["request"] == {"method": "GET", "url": "http://h/1", "headers": {}, "body": None, "body_b64": None}
    assert got[0]["response"] == {"status": 500, "headers": {}, "body_b64": "/w=="}
    assert misses(tmp_path) == []
