"""The in-process side of the HTTP cassettes, loaded by sitecustomize only when DECATHLON_HTTP_MODE is set.

Interception is vcrpy's (its stubs patch http.client, urllib3/requests, httpx, httpx2, aiohttp, ...);
the policy is ours, in a Cassette subclass: record appends each redacted interaction to a journal
as it completes, replay answers from the per-process file in order of occurrence and turns anything
else into a logged miss plus a connection error. vcrpy and its dependencies come from the shim dir
(DECATHLON_HTTP_SHIM), appended to sys.path so the process's own packages win.
"""
from __future__ import annotations

import atexit
import difflib
import fcntl
import gzip
import hashlib
import http
import json
import os
import sys
import threading
import zlib
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import decathlon_http_store as store
from decathlon_http_guard import SocketGuard, miss_error
from decathlon_http_redact import Redactor
from decathlon_http_store import ENV_DIR, ENV_LABEL, ENV_LIVE, ENV_MODE, ENV_REDACT, ENV_SHIM

VCR_VERSION = "9.4.2"  # the cassette hooks below override vcrpy internals of this version
NEAREST = 3

Headers = list[tuple[str, str]]


def warn(message: str) -> None:
    try:
        sys.stderr.write(f"decathlon-http[{os.getpid()}]: {message}\n")
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - a closed stderr must not take the process down
        pass


# ---------------------------------------------------------------- normalising vcrpy's objects

def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):  # http.client's putheader() passes value tuples
        return ", ".join(_text(v) for v in value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("latin-1")
    return str(value)


def _body(raw: Any) -> bytes | None:
    """Request bodies arrive as bytes, str, file, chunk lists, or (aiohttp) dicts for json=."""
    if raw is None:
        return None
    if hasattr(raw, "read"):
        raw = raw.read()
    if isinstance(raw, str):
        data = raw.encode("utf-8")
    elif isinstance(raw, (bytes, bytearray, memoryview)):
        data = bytes(raw)
    elif isinstance(raw, (dict, tuple)) or (isinstance(raw, list) and raw and not isinstance(raw[0], (bytes, str))):
        data = json.dumps(raw, sort_keys=True, default=str).encode("utf-8")
    elif isinstance(raw, list):
        data = b"".join(c.encode("utf-8") if isinstance(c, str) else bytes(c) for c in raw)
    else:  # e.g. aiohttp FormData: a stable placeholder rather than a repr with an address in it
        data = f"<unrecordable body: {type(raw).__name__}>".encode()
    return data or None


def _request_body(request: Any) -> bytes | None:
    # vcrpy's Request.body re-wraps files/iterators on every access; _body is the captured value.
    return _body(request.__dict__.get("_body", getattr(request, "body", None)))


def _header_dict(headers: Headers) -> dict[str, str | list[str]]:
    grouped: dict[str, list[str]] = {}
    for name, value in headers:
        grouped.setdefault(name.lower(), []).append(value)
    return {k: v[0] if len(v) == 1 else v for k, v in sorted(grouped.items())}


def _decoders() -> dict[str, Callable[[bytes], bytes]]:
    def deflate(data: bytes) -> bytes:
        try:
            return zlib.decompress(data)
        except zlib.error:
            return zlib.decompress(data, -zlib.MAX_WBITS)

    found: dict[str, Callable[[bytes], bytes]] = {"gzip": gzip.decompress, "x-gzip": gzip.decompress,
                                                  "deflate": deflate}
    # Only the process's own optional decoders: a client advertises br/zstd only when it has them.
    for module in ("brotli", "brotlicffi"):
        try:
            found["br"] = __import__(module).decompress
            break
        except ImportError:
            continue
    try:
        import zstandard

        found["zstd"] = lambda data: zstandard.ZstdDecompressor().decompressobj().decompress(data)
    except ImportError:
        pass
    return found


# ---------------------------------------------------------------- the policy

class Core:
    """What both modes share: where the files are, how requests are redacted and keyed."""

    replaying = False

    def __init__(self, workdir: Path, label: str, redactor: Redactor) -> None:
        self.workdir, self.label, self.redactor = workdir, label, redactor
        self.live = frozenset(h.strip().lower() for h in os.environ.get(ENV_LIVE, "").split(",") if h.strip())
        self.lock = threading.Lock()
        workdir.mkdir(parents=True, exist_ok=True)

    def is_live(self, request: Any) -> bool:
        """A request to one of the episode's own services (host:port in DECATHLON_HTTP_LIVE): never
        recorded nor replayed, as the services run in every mode."""
        if not self.live:
            return False
        try:
            parts = urlsplit(str(request.uri))
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return False
        host = (parts.hostname or "").lower()
        if f"{host}:{port}" in self.live:
            return True
        # `*.suffix:port`: every name under a vendor's domain the SaaS front emulates (<account>.snowflakecomputing.com)
        return any(e.startswith("*.") and e.endswith(f":{port}") and host.endswith(e[1:].rsplit(":", 1)[0])
                   for e in self.live)

    def request(self, request: Any) -> tuple[str, str, Headers, bytes | None]:
        method = str(request.method).upper()
        url = self.redactor.url(str(request.uri))
        headers = [(str(n).lower(), self.redactor.header(str(n), _text(v))) for n, v in request.headers.items()]
        return method, url, headers, self.redactor.body(_request_body(request))

    def log_miss(self, method: str, url: str, body: bytes | None, reason: str,
                 nearest: list[dict[str, str]] | None = None) -> None:
        entry = {"process": self.label, "method": method, "url": url, "reason": reason,
                 "body_sha256": hashlib.sha256(body).hexdigest() if body else None, "nearest": nearest or []}
        try:
            store.append_line(self.workdir / store.MISSES_FILE, entry)
        except Exception as exc:  # noqa: BLE001
            warn(f"could not log a replay miss ({exc}): {entry}")
        warn(f"{reason}: {method} {url}")


class Recorder(Core):
    def __init__(self, workdir: Path, label: str, redactor: Redactor) -> None:
        super().__init__(workdir, label, redactor)
        self.journal = store.journal_path(workdir, label)
        self.decoders = _decoders()
        atexit.register(self.write_snapshot)

    def record(self, request: Any, response: dict[str, Any]) -> None:
        """Called by vcrpy once the real response is fully read; never raises into the client."""
        try:
            entry = self.entry(request, response)
            with self.lock:
                store.append_line(self.journal, entry)
        except Exception as exc:  # noqa: BLE001 - losing one interaction beats breaking the process,
            # but the loss is logged with the misses, so the daemon does not trust this recording.
            try:
                self.log_miss(str(request.method), self.redactor.url(str(request.uri)), None,
                              f"record failed: {type(exc).__name__}: {exc}")
            except Exception:  # noqa: BLE001
                warn(f"could not record a request: {type(exc).__name__}: {exc}")

    def entry(self, request: Any, response: dict[str, Any]) -> dict[str, Any]:
        method, url, req_headers, req_body = self.request(request)
        text, b64 = store.encode_body(req_body)
        status = int(response["status"]["code"])
        headers = [(str(n), _text(v)) for n, vs in response.get("headers", {}).items()
                   for v in (vs if isinstance(vs, (list, tuple)) else [vs])]
        raw = (response.get("body") or {}).get("string") or b""
        raw = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
        headers, body, decoded = self.decode(headers, raw)
        redacted = self.redactor.body(body) or b""
        if decoded or redacted != raw:  # the stored body is not what was framed on the wire any more
            headers = [(n, v) for n, v in headers if n.lower() not in ("content-length", "transfer-encoding")]
            headers.append(("content-length", str(len(redacted))))
        headers = [(n.lower(), self.redactor.header(n, v)) for n, v in headers]
        resp_text, resp_b64 = store.encode_body(redacted)
        return {"request": {"method": method, "url": url, "headers": _header_dict(req_headers),
                            "body": text, "body_b64": b64},
                "response": {"status": status, "headers": _header_dict(headers),
                             **({"body": resp_text} if resp_b64 is None else {"body_b64": resp_b64})}}

    def decode(self, headers: Headers, body: bytes) -> tuple[Headers, bytes, bool]:
        """Undo Content-Encoding, so redaction sees the real bytes and the cassette is readable."""
        codings = [c.strip().lower() for n, v in headers if n.lower() == "content-encoding"
                   for c in v.split(",") if c.strip() and c.strip().lower() != "identity"]
        if not codings or not body:
            return headers, body, False
        data = body
        for coding in reversed(codings):
            decoder = self.decoders.get(coding)
            if decoder is None:
                if self.redactor.texts:
                    warn(f"cannot decode Content-Encoding {coding!r}: secrets inside that body are not redacted")
                return headers, body, False
            try:
                data = decoder(data)
            except Exception:  # noqa: BLE001 - aiohttp hands over bodies it already decoded
                data = body
                break
        return [(n, v) for n, v in headers if n.lower() != "content-encoding"], data, True

    def write_snapshot(self) -> None:
        """<label>.json at clean exit: everything in the journal, written atomically."""
        try:
            fd = os.open(self.journal, os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # no appends while the snapshot is taken
            entries = store.read_lines(self.journal)
            store.write_json_atomic(store.snapshot_path(self.workdir, self.label), store.snapshot(self.label, entries))
        except Exception as exc:  # noqa: BLE001
            warn(f"could not write the snapshot of {self.journal}: {exc}")
        finally:
            os.close(fd)


class Replayer(Core):
    replaying = True

    def __init__(self, workdir: Path, label: str, redactor: Redactor) -> None:
        super().__init__(workdir, label, redactor)
        self.load_error: str | None = None
        try:
            self.entries = store.read_snapshot(store.snapshot_path(workdir, label))
        except Exception as exc:  # noqa: BLE001 - then every request is a miss, which says why
            self.entries, self.load_error = [], f"unreadable cassette: {exc}"
        self.queues: dict[tuple[str, str, bytes], deque[int]] = {}
        for index, entry in enumerate(self.entries):
            req = entry["request"]
            key = (req["method"].upper(), req["url"], store.decode_body(req) or b"")
            self.queues.setdefault(key, deque()).append(index)

    def play(self, request: Any) -> dict[str, Any]:
        """The next unplayed recorded response for this exact request, else a logged miss + error."""
        try:
            method, url, _, body = self.request(request)
        except Exception as exc:  # noqa: BLE001 - a bug here must still never reach the network
            method, url, body = str(getattr(request, "method", "?")), "<unparseable>", None
            self.log_miss(method, url, None, f"shim error: {type(exc).__name__}: {exc}")
            raise miss_error(f"{method} {url}") from None
        with self.lock:
            queue = self.queues.get((method, url, body or b""))
            index = queue.popleft() if queue else None
        if index is None:
            reason = self.load_error or ("exhausted" if queue is not None else "not recorded")
            self.log_miss(method, url, body, reason, self.nearest(method, url))
            raise miss_error(f"{method} {url} ({reason})")
        return vcr_response(self.entries[index]["response"])

    def nearest(self, method: str, url: str) -> list[dict[str, str]]:
        """The recorded requests that look most like a missed one, to make misses debuggable."""
        want = urlsplit(url)
        scored: dict[tuple[str, str], float] = {}
        for entry in self.entries:
            m, u = entry["request"]["method"], entry["request"]["url"]
            have = urlsplit(u)
            score = ((m == method) + 2 * (have.netloc == want.netloc) + 2 * (have.path == want.path)
                     + difflib.SequenceMatcher(None, u, url).ratio())
            scored[(m, u)] = max(score, scored.get((m, u), 0.0))
        best = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))[:NEAREST]
        return [{"method": m, "url": u} for (m, u), _ in best]


def vcr_response(resp: dict[str, Any]) -> dict[str, Any]:
    """Our stored response in the dict shape vcrpy's stubs build client responses from."""
    status = int(resp["status"])
    headers = {name: [str(x) for x in v] if isinstance(v, list) else [str(v)]
               for name, v in (resp.get("headers") or {}).items()}
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    return {"status": {"code": status, "message": phrase}, "headers": headers,
            "body": {"string": store.decode_body(resp) or b""}}


# ---------------------------------------------------------------- vcrpy wiring

def install_vcr(core: Core) -> list[str]:
    """Enter vcrpy's patchers for every library it knows; returns the groups that failed."""
    import vcr
    from vcr.cassette import Cassette
    from vcr.patch import PATCHER_NAMES, CassettePatcherBuilder
    from vcr.record_mode import RecordMode

    if getattr(vcr, "__version__", VCR_VERSION) != VCR_VERSION:
        warn(f"vcrpy {vcr.__version__} found before ours ({VCR_VERSION}); its internals may differ")

    class ShimCassette(Cassette):
        """vcrpy's stubs only ask a cassette these questions; our Core answers them."""

        def can_play_response_for(self, request: Any) -> bool:
            # replay answers everything itself, misses included: never connect; but the episode's own
            # services (DECATHLON_HTTP_LIVE) are always talked to for real
            return core.replaying and not core.is_live(request)

        @property
        def write_protected(self) -> bool:
            return core.replaying

        def filter_request(self, request: Any) -> Any:
            return None if core.is_live(request) else request  # None: vcrpy sends it, unrecorded

        def play_response(self, request: Any) -> dict[str, Any]:
            return core.play(request)  # type: ignore[attr-defined]

        def append(self, request: Any, response: dict[str, Any]) -> None:
            if not core.replaying and not core.is_live(request):
                core.record(request, response)  # type: ignore[attr-defined]

        def find_requests_with_most_matches(self, request: Any) -> list[Any]:
            return []  # aiohttp's redirect replay then looks the next hop up by its own URL

        def _save(self, force: bool = False) -> None:
            pass  # the journal is written as interactions happen

    _httplib2_keeps_its_proxy()
    cassette = ShimCassette(path=f"decathlon-http-{core.label}",
                            record_mode=RecordMode.NONE if core.replaying else RecordMode.ALL)
    builder = CassettePatcherBuilder(cassette)
    failed = []
    # Two phases, like vcrpy's own build(): every group's builder runs (and imports its stub
    # module) before anything is patched, because the urllib3 stubs subclass urllib3's classes
    # and must not see the requests group's replacements.
    groups = []
    for name in PATCHER_NAMES:
        try:
            groups.append((name, getattr(builder, f"_{name}")()))
        except Exception as exc:  # noqa: BLE001 - one odd library must not cost the others
            warn(f"could not patch {name}: {type(exc).__name__}: {exc}")
            failed.append(name)
    for name, patchers in groups:
        try:
            for patcher in patchers:
                patcher.__enter__()  # for the life of the process: there is no cassette exit
        except Exception as exc:  # noqa: BLE001
            warn(f"could not patch {name}: {type(exc).__name__}: {exc}")
            failed.append(name)
    return failed


def _httplib2_keeps_its_proxy() -> None:
    """vcrpy's httplib2 stubs make the real connection without its `proxy_info`, so a request sent for real
    (the SaaS front's hosts, always live) ignores the proxy every process of an episode is given and looks the
    vendor's host up itself, which an episode cannot (googleapiclient's Resource Manager and Drive calls). The real
    connection is made again with every argument httplib2 gave, as httplib2 itself would make it."""
    try:
        from vcr.patch import force_reset
        from vcr.stubs import httplib2_stubs
    except ImportError:
        return  # no httplib2 in this process: nothing to keep
    for cls in (httplib2_stubs.VCRHTTPConnectionWithTimeout, httplib2_stubs.VCRHTTPSConnectionWithTimeout):
        stub_init = cls.__init__

        def init(self: Any, *args: Any, _stub_init: Any = stub_init, **kwargs: Any) -> None:
            _stub_init(self, *args, **kwargs)
            if kwargs.get("proxy_info") is not None:
                with force_reset():  # as vcrpy makes it: the real class inherits from the names it patches
                    self.real_connection = self._baseclass(*args, **kwargs)
                self.sock = self.real_connection.sock

        cls.__init__ = init


# ---------------------------------------------------------------- vendored urllib3

class RealHttpClientFor:
    """A meta-path finder: the modules named here are executed with http.client's own connection classes.

    A library that vendors urllib3 (the Snowflake connector) subclasses http.client's classes when it is imported,
    after vcrpy replaced them with its stubs, which are not urllib3's own: its proxy tunnel then breaks
    (`_prepare_proxy`: no `_dns_host`) and every connection fails. vcrpy knows no vendored copy, so their
    traffic was never interceptable; with the real classes it goes out as it would (to the SaaS front's emulated
    Snowflake, always live)."""
    MODULES = frozenset({"snowflake.connector.vendored.urllib3.connection"})

    def __init__(self, real: tuple[Any, Any]) -> None:
        self.real = real

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in self.MODULES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _RealClassesLoader(spec.loader, self.real)  # type: ignore[assignment]
                return spec
        return None


class _RealClassesLoader:
    def __init__(self, loader: Any, real: tuple[Any, Any]) -> None:
        self.loader, self.real = loader, real

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        import http.client as client
        patched = (client.HTTPConnection, client.HTTPSConnection)
        setattr(client, "HTTPConnection", self.real[0])
        setattr(client, "HTTPSConnection", self.real[1])
        try:
            self.loader.exec_module(module)
        finally:
            setattr(client, "HTTPConnection", patched[0])
            setattr(client, "HTTPSConnection", patched[1])


# ---------------------------------------------------------------- entry point

class _StderrOnly:
    """Where misses go when the workdir itself is unusable: the guard must still refuse."""

    def log_miss(self, method: str, url: str, body: bytes | None, reason: str) -> None:
        warn(f"{reason} (and the workdir is unusable): {method} {url}")


def activate() -> None:
    mode = os.environ.get(ENV_MODE, "").strip().lower()
    if mode not in ("record", "replay"):
        warn(f"{ENV_MODE}={mode!r} is neither 'record' nor 'replay'; HTTP is not intercepted")
        return
    replay = mode == "replay"
    try:
        workdir = Path(os.environ.get(ENV_DIR) or ".decathlon-http")
        label = store.sanitize_label(os.environ.get(ENV_LABEL) or "process")
        names = [n.strip() for n in os.environ.get(ENV_REDACT, "").split(",") if n.strip()]
        redactor = Redactor.from_env(names, os.environ)
        core: Core = Replayer(workdir, label, redactor) if replay else Recorder(workdir, label, redactor)
    except Exception as exc:  # noqa: BLE001 - e.g. an unwritable workdir
        warn(f"HTTP {mode} is not active: {type(exc).__name__}: {exc}")
        if replay:  # no recording to answer from, so nothing may go out at all
            blind = SocketGuard(_StderrOnly())
            blind.strict = True
            blind.install()
        return
    shim = os.environ.get(ENV_SHIM)
    if shim and shim not in sys.path:
        sys.path.append(shim)  # after site-packages: the process's own packages win conflicts
    guard = SocketGuard(core) if replay else None
    import http.client as client
    sys.meta_path.insert(0, RealHttpClientFor((client.HTTPConnection, client.HTTPSConnection)))
    try:
        install_vcr(core)  # a library it could not patch is only warned about: replay's guard covers it
    except Exception as exc:  # noqa: BLE001 - degrade, and make sure the daemon hears about it
        warn(f"HTTP {mode} is not active: {type(exc).__name__}: {exc}")
        core.log_miss("-", "-", None, f"shim unavailable: {type(exc).__name__}: {exc}")
        if guard is not None:
            guard.strict = True
    if guard is not None:
        guard.install()
