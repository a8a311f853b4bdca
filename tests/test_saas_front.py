"""The SaaS front (decathlon/emulators/front): unmodified clients (curl, requests, git) reach an emulator at a
vendor's real host name over TLS with the episode's CA; a host nothing emulates is refused at once, by name;
an emulator that cannot start or dies is named. The emulators here are echo stand-ins (tests/saas_fakes), so
the front is tested alone; tests/test_saas_episode.py runs the real ones."""
from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest

import lines

from decathlon.emulators.front import ca, routes

FAKE = Path(__file__).parent / "saas_fakes" / "fake_emulator.py"


@pytest.fixture
def front(tmp_path):
    started: list[subprocess.Popen] = []

    def start(**env: str) -> tuple[int, Path, subprocess.Popen]:
        python = tmp_path / "python"
        python.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} "$@"\n')
        python.chmod(0o755)
        (tmp_path / "logs").mkdir(exist_ok=True)
        proc = subprocess.Popen([sys.executable, "-m", "decathlon.emulators.front", "--root", str(tmp_path),
                                 "--home", str(tmp_path), "--logs", str(tmp_path / "logs")],
                                stdout=subprocess.PIPE, stderr=open(tmp_path / "logs" / "front.log", "wb"),
                                env={**os.environ, "DECATHLON_SAAS_PYTHON": str(python), **env})
        started.append(proc)
        assert proc.stdout is not None
        line = lines.readline(proc, what="the front's ready line").decode()
        assert line.startswith("ready front "), line
        return json.loads(line.split(" ", 2)[2])["http"], tmp_path / "saas" / "ca-bundle.pem", proc

    yield start
    for p in started:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            p.wait(10)


def _curl(port: int, bundle: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["curl", "-sS", "--max-time", "10", "-x", f"http://127.0.0.1:{port}", "--cacert", str(bundle),
                           *extra, url], capture_output=True, text=True, timeout=20)


needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


def _tunnel(port: int, host: str) -> tuple[socket.socket, bytes]:
    """A CONNECT to `host`:443 through the front: the socket (every wait on it bounded) and the front's answer head.
    Read a byte at a time so nothing of the TLS stream that follows is consumed with the head."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
    head = b""
    while not head.endswith(b"\r\n\r\n") and len(head) < 16 * 1024:
        byte = sock.recv(1)
        if not byte:
            break
        head += byte
    return sock, head


def _tls(port: int, bundle: Path, host: str, sni: str | None = None, alpn: list[str] | None = None,
         ctx: ssl.SSLContext | None = None) -> ssl.SSLSocket:
    """TLS through the front to `host`, verified as Python verifies by default (the episode's bundle, the host
    name checked), naming `sni` (default: `host`) in the ClientHello."""
    sock, head = _tunnel(port, host)
    assert head.startswith(b"HTTP/1.1 200"), head
    if ctx is None:
        ctx = ssl.create_default_context(cafile=str(bundle))
    if alpn:
        ctx.set_alpn_protocols(alpn)
    try:
        return ctx.wrap_socket(sock, server_hostname=host if sni is None else sni)
    except BaseException:
        sock.close()
        raise


def _get(tls: ssl.SSLSocket, host: str, path: str) -> dict:
    tls.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
    response = http.client.HTTPResponse(tls)  # reads through tls.makefile, every read under its timeout
    response.begin()
    assert response.status == 200
    return json.loads(response.read())


def _names(cert: dict) -> tuple[list[str], list[str]]:
    """The subject's common names and the DNS names of the certificate's subjectAltName."""
    common = [v for rdn in cert["subject"] for k, v in rdn if k == "commonName"]
    return common, [v for k, v in cert.get("subjectAltName", ()) if k == "DNS"]


@needs_curl
def test_curl_reaches_the_emulator_of_each_vendor_host_with_the_real_host_name(front):
    port, bundle, _ = front()
    for url, service in (("https://bigquery.googleapis.com/bigquery/v2/projects/p/datasets", "gcp"),
                         ("https://storage.googleapis.com/storage/v1/b?project=p", "gcp"),
                         ("https://oauth2.googleapis.com/token", "gcp"),
                         ("https://xy12345.snowflakecomputing.com/session/v1/login-request", "snowflake")):
        out = _curl(port, bundle, url)
        assert out.returncode == 0, out.stderr
        seen = json.loads(out.stdout)
        host = url.split("/")[2]
        assert seen == {"service": service, "host": host, "path": "/" + url.split("/", 3)[3]}


@needs_curl
def test_the_certificate_is_the_episodes_own_and_untrusted_without_its_bundle(front, tmp_path):
    port, bundle, _ = front()
    out = subprocess.run(["curl", "-sS", "--max-time", "10", "-x", f"http://127.0.0.1:{port}", "--cacert", "/dev/null",
                          "https://bigquery.googleapis.com/"], capture_output=True, text=True, timeout=20)
    assert out.returncode == 60 or "certificate" in out.stderr.lower(), out  # curl: peer certificate cannot be verified
    assert b"decathlon episode CA" in ssl.PEM_cert_to_DER_cert((tmp_path / "saas" / "ca.pem").read_text())
    # The bundle holds the system's roots too, so a sandbox with a network still reaches real hosts.
    if Path(ca.SYSTEM_BUNDLES[0]).is_file():
        assert bundle.read_bytes().startswith(Path(ca.SYSTEM_BUNDLES[0]).read_bytes().rstrip(b"\n"))


def test_python_requests_with_the_trust_variables(front):
    requests = pytest.importorskip("requests")
    port, bundle, _ = front()
    env = {"HTTPS_PROXY": f"http://127.0.0.1:{port}", "REQUESTS_CA_BUNDLE": str(bundle)}
    code = "import requests; print(requests.get('https://storage.googleapis.com/b/o', timeout=10).text)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env},
                         timeout=30)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["host"] == "storage.googleapis.com"
    assert requests is not None


@needs_curl
def test_a_host_nothing_emulates_is_refused_at_once_by_name(front):
    port, bundle, _ = front()
    began = time.monotonic()
    out = _curl(port, bundle, "https://api.notion.com/v1/search", "-v")
    assert out.returncode != 0
    assert "502" in out.stderr
    assert time.monotonic() - began < 5
    # Plain http through the proxy is refused too, with the reason in the body.
    out = subprocess.run(["curl", "-sS", "--max-time", "10", "-x", f"http://127.0.0.1:{port}", "http://example.com/"],
                         capture_output=True, text=True, timeout=20)
    assert "relays only HTTPS" in out.stdout


@needs_curl
def test_an_emulator_that_cannot_start_is_named_to_the_client(front, tmp_path):
    port, bundle, proc = front(FAKE_FAIL="gcp")
    out = _curl(port, bundle, "https://bigquery.googleapis.com/", "-v")
    assert "503" in out.stderr
    assert proc.poll() is None  # the front stays: the other vendors still answer
    assert json.loads(_curl(port, bundle, "https://a.snowflakecomputing.com/").stdout)["service"] == "snowflake"
    assert "the gcp emulator did not start" in (tmp_path / "logs" / "front.log").read_text()
    assert "told to fail" in (tmp_path / "logs" / "front.log").read_text()


@needs_curl
def test_an_emulator_that_dies_takes_the_front_down_naming_it(front, tmp_path):
    port, bundle, proc = front(DECATHLON_FRONT_EAGER="snowflake")
    assert json.loads(_curl(port, bundle, "https://a.snowflakecomputing.com/").stdout)["service"] == "snowflake"
    log = (tmp_path / "logs" / "front.log").read_text()
    pid = int(log.split("snowflake emulator is ready on port")[1].split("(pid ")[1].split(")")[0])
    os.kill(pid, signal.SIGKILL)
    assert proc.wait(10) == 3
    assert "the snowflake emulator" in (tmp_path / "logs" / "front.log").read_text()
    assert "killed by SIGKILL" in (tmp_path / "logs" / "front.log").read_text()


@needs_curl
def test_garbage_and_slow_clients_do_not_take_the_front_down(front):
    import socket
    port, bundle, proc = front()
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"\x16\x03\x01garbage without a request line\r\n\r\n")
        assert b"400" in s.recv(1000)
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"CONNECT bigquery.googleapis.com:443 HTTP/1.1\r\n\r\nnot a TLS hello at all")
        s.settimeout(10)
        assert s.recv(100).startswith(b"HTTP/1.1 200")
    assert proc.poll() is None
    assert json.loads(_curl(port, bundle, "https://bigquery.googleapis.com/x").stdout)["path"] == "/x"


def test_routes_cover_the_hosts_the_certificate_names():
    names = routes.certificate_names()
    for host in ("bigquery.googleapis.com", "logging.googleapis.com", "acct-1.snowflakecomputing.com"):
        assert routes.route_for(host) is not None
    assert routes.route_for("snowflakecomputing.com") is None
    assert routes.route_for("evil-googleapis.com") is None
    assert "*.snowflakecomputing.com" in names
    assert routes.route_for("logging.googleapis.com").alpn == "h2"


def test_the_snowflake_connectors_own_urllib3_reaches_the_front_under_the_http_replay_shim(front, tmp_path):
    """In a rerun the task's scripts run under the HTTP replay shim, whose vcrpy replaces http.client's classes
    before the Snowflake connector imports its vendored urllib3: that copy then subclassed vcrpy's stubs, its proxy
    tunnel broke (`no attribute '_dns_host'`), and landing-task-reminder's preprocess failed after 11 retries. It
    must reach the (always live) emulated host through the front as it does outside the shim."""
    from tests.saas_venv import saas_python
    port, bundle, _ = front()
    site = Path(__file__).resolve().parents[1] / "decathlon" / "sandbox" / "http" / "site"
    servers = Path(os.environ.get("DECATHLON_SERVERS_DIR") or site.parents[3] / ".servers")
    (tmp_path / "http").mkdir()
    env = {**os.environ, "HTTPS_PROXY": f"http://127.0.0.1:{port}", "NO_PROXY": "localhost,127.0.0.1",
           "REQUESTS_CA_BUNDLE": str(bundle), "PYTHONPATH": str(site), "DECATHLON_HTTP_MODE": "replay",
           "DECATHLON_HTTP_DIR": str(tmp_path / "http"), "DECATHLON_HTTP_LABEL": "preprocess",
           "DECATHLON_HTTP_SHIM": str(servers / "_http"),
           "DECATHLON_HTTP_LIVE": f"127.0.0.1:{port},*.snowflakecomputing.com:443"}
    code = ("from snowflake.connector.vendored import requests\n"
            "print(requests.get('https://xy12345.snowflakecomputing.com/session/v1/login-request', timeout=10).text)")
    out = subprocess.run([str(saas_python()), "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1])["host"] == "xy12345.snowflakecomputing.com"


def test_httplib2_keeps_the_fronts_proxy_under_the_http_replay_shim(front, tmp_path):
    """googleapiclient talks through httplib2, whose vcrpy stubs made the real connection without its proxy: in a
    rerun the Klavis-AI head's ab-testing, finding its project through Resource Manager, looked the host up itself
    ("Temporary failure in name resolution") and its preprocess failed. It must reach the front as outside the
    shim."""
    from decathlon.sandbox import saas
    from tests.saas_venv import saas_python
    port, bundle, _ = front()
    site = Path(__file__).resolve().parents[1] / "decathlon" / "sandbox" / "http" / "site"
    servers = Path(os.environ.get("DECATHLON_SERVERS_DIR") or site.parents[3] / ".servers")
    (tmp_path / "http").mkdir()
    env = {**os.environ, "HTTPS_PROXY": f"http://127.0.0.1:{port}", "NO_PROXY": "localhost,127.0.0.1",
           "PYTHONPATH": str(site), "DECATHLON_HTTP_MODE": "replay",
           "DECATHLON_HTTP_DIR": str(tmp_path / "http"), "DECATHLON_HTTP_LABEL": "preprocess",
           "DECATHLON_HTTP_SHIM": str(servers / "_http"),
           "DECATHLON_HTTP_LIVE": ",".join([f"127.0.0.1:{port}", *saas.live_hosts()])}
    code = ("import httplib2\n"
            f"http = httplib2.Http(ca_certs={str(bundle)!r}, timeout=10)\n"
            "response, body = http.request('https://cloudresourcemanager.googleapis.com/v3/projects:search')\n"
            "print(body.decode())")
    out = subprocess.run([str(saas_python()), "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {
        "service": "gcp", "host": "cloudresourcemanager.googleapis.com", "path": "/v3/projects:search"}


# Region-qualified accounts (the form real Snowflake account URLs often take) and the deeper forms
# (cloud-qualified, privatelink): one label more than the `*.snowflakecomputing.com` wildcard covers.
DEEP_SNOWFLAKE_HOSTS = ("xy12345.us-east-1.snowflakecomputing.com", "xy12345.us-central1.gcp.snowflakecomputing.com",
                        "myorg-acct.privatelink.snowflakecomputing.com")


def test_a_region_qualified_snowflake_account_verifies_with_pythons_default_verification(front):
    port, bundle, _ = front()
    for host in DEEP_SNOWFLAKE_HOSTS:
        with _tls(port, bundle, host) as tls:
            assert _names(tls.getpeercert()) == ([host], [host])  # a leaf for exactly the name asked for
            assert _get(tls, host, "/session/v1/login-request") == {
                "service": "snowflake", "host": host, "path": "/session/v1/login-request"}


@needs_curl
def test_curl_verifies_a_region_qualified_snowflake_account(front):
    port, bundle, _ = front()
    url = "https://xy12345.us-east-1.snowflakecomputing.com/session/v1/login-request"
    out = _curl(port, bundle, url)
    assert out.returncode == 0, out.stderr  # was 60: the one-label wildcard does not cover it
    assert json.loads(out.stdout)["host"] == "xy12345.us-east-1.snowflakecomputing.com"


def test_each_routed_host_gets_a_leaf_naming_only_itself(front):
    port, bundle, _ = front()
    for host in ("bigquery.googleapis.com", "storage.googleapis.com", "oauth2.googleapis.com",
                 "xy12345.snowflakecomputing.com", "XY12345.SnowflakeComputing.com"):
        with _tls(port, bundle, host) as tls:
            assert _names(tls.getpeercert()) == ([host.lower()], [host.lower()])
            assert _get(tls, host, "/x")["path"] == "/x"


def test_the_grpc_host_still_negotiates_h2_with_a_leaf_of_its_own(front):
    port, bundle, _ = front()
    with _tls(port, bundle, "logging.googleapis.com", alpn=["h2", "http/1.1"]) as tls:
        assert tls.selected_alpn_protocol() == "h2"
        assert _names(tls.getpeercert()) == (["logging.googleapis.com"], ["logging.googleapis.com"])
    with _tls(port, bundle, "bigquery.googleapis.com", alpn=["h2", "http/1.1"]) as tls:
        assert tls.selected_alpn_protocol() == "http/1.1"


def test_a_client_that_names_no_host_gets_the_default_leaf(front):
    port, bundle, _ = front()
    ctx = ssl.create_default_context(cafile=str(bundle))
    ctx.check_hostname = False  # no name sent, none to check; the chain is still verified
    sock, head = _tunnel(port, "bigquery.googleapis.com")
    assert head.startswith(b"HTTP/1.1 200"), head
    with ctx.wrap_socket(sock, server_hostname=None) as tls:
        common, dns = _names(tls.getpeercert())
        assert sorted(dns) == routes.certificate_names()
        assert _get(tls, "bigquery.googleapis.com", "/y")["path"] == "/y"


def test_names_the_front_does_not_route_get_no_leaf(front):
    port, bundle, _ = front()
    # Deeper Google names are not routed (only the exact API hosts are): refused at the CONNECT, by name.
    for host in ("a.bigquery.googleapis.com", "snowflakecomputing.com", "xy12345.snowflakecomputing.com.evil.example"):
        sock, head = _tunnel(port, host)
        sock.close()
        assert head.startswith(b"HTTP/1.1 502"), head
    # A routed tunnel whose ClientHello names a host nothing routes: no certificate at all, not a wrong one. (The
    # front's `unrecognized_name` alert is dropped by asyncio, which closes a failed handshake unflushed: the client
    # sees the connection end.)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # so that only the front's refusal can fail the handshake
    for sni in ("api.notion.com", "a.bigquery.googleapis.com"):
        with pytest.raises((ssl.SSLError, ConnectionError)):
            _tls(port, bundle, "xy12345.snowflakecomputing.com", sni=sni, ctx=ctx).close()
    with _tls(port, bundle, "xy12345.us-east-1.snowflakecomputing.com") as tls:  # and the front still serves
        assert _get(tls, "xy12345.us-east-1.snowflakecomputing.com", "/z")["path"] == "/z"


def test_the_leaf_cache_is_bounded_and_refuses_what_routing_refuses():
    from decathlon.emulators.front.sni import Leaves
    leaves = Leaves(ca.make(routes.certificate_names()), limit=8)
    first = leaves.context("a0.snowflakecomputing.com", "http/1.1")
    assert first is not None
    assert leaves.context("A0.snowflakecomputing.com.", "http/1.1") is first  # one leaf per name, cached
    began = time.monotonic()
    for i in range(1, 200):
        assert leaves.context(f"a{i}.eu-west-1.snowflakecomputing.com", "http/1.1") is not None
        assert leaves.context("a0.snowflakecomputing.com", "http/1.1") is first  # recently used: kept
    assert time.monotonic() - began < 20  # minting is signing only, no key generation per name
    assert len(leaves) == 8
    assert leaves.context("a1.eu-west-1.snowflakecomputing.com", "http/1.1") is not None
    assert len(leaves) == 8  # the least recently used went
    for refused in ("api.notion.com", "a.bigquery.googleapis.com", "snowflakecomputing.com",
                    "*.snowflakecomputing.com", "a b.snowflakecomputing.com", "a..snowflakecomputing.com",
                    "x" * 64 + ".snowflakecomputing.com", ""):
        assert leaves.context(refused, "http/1.1") is None, refused
    assert len(leaves) == 8
