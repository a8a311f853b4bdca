"""What the Google stand-ins (google_calendar, google_forms) share: Google's discovery client (google-api-python-client,
its static discovery documents) signed in as an OAuth user, each call run off the event loop, and the message Node's
googleapis gives a failure, which the references put into their result text.

The client goes where Google's client goes: https://www.googleapis.com, https://forms.googleapis.com and the token
endpoint https://oauth2.googleapis.com/token, through the proxy and CA bundle the environment names (httplib2 reads
HTTPS_PROXY/NO_PROXY and HTTPLIB2_CA_CERTS), which in an episode is the SaaS front and its emulators.
"""
from __future__ import annotations

import importlib
import json
import sys
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, TypeVar

import anyio.to_thread

from .jsvalues import MessageError

# Each socket operation of a call (the token refresh included) is bounded; the references set no bound at all.
TIMEOUT_SECONDS = 60.0
# Node's google-auth-library, asked to sign a request with nothing to sign it with.
NO_CREDENTIALS = "No access, refresh token, API key or refresh handler callback is set."

T = TypeVar("T")


@dataclass(frozen=True)
class UserCredentials:
    """An OAuth user's sign-in as Node's OAuth2Client holds it: the client, and a refresh and/or access token."""

    client_id: str | None
    client_secret: str | None
    refresh_token: str | None = None
    access_token: str | None = None
    expiry: datetime | None = None  # naive UTC, as google-auth compares it; None: never refreshed before use


def _google(module: str) -> Any:
    # Imported by name: they live in the stand-ins' virtualenv (ci/servers/google-workspace.txt), not the project's.
    return importlib.import_module(module)


def missing_client() -> str | None:
    """Why this interpreter cannot run the Google stand-ins, if it cannot: said at start-up, not at the first call."""
    try:
        for module in ("googleapiclient.discovery", "google_auth_httplib2", "google.oauth2.credentials"):
            _google(module)
    except ImportError as exc:
        return (f"Error: Google's client is not importable here ({exc}); the Google stand-ins run on the "
                f"google-workspace virtualenv (python ci/install_servers.py google-workspace), not {sys.executable}")
    return None


def build(api: str, version: str, user: UserCredentials) -> Any:
    """A googleapiclient Resource for `api` `version`, from the discovery document the library ships."""
    oauth = _google("google.oauth2.credentials")
    # Google's token endpoint as google-auth itself names it (Node's client refreshes at the same).
    credentials = oauth.Credentials(
        token=user.access_token, refresh_token=user.refresh_token, client_id=user.client_id,
        client_secret=user.client_secret, token_uri=oauth._GOOGLE_OAUTH2_TOKEN_ENDPOINT, expiry=user.expiry)
    http = _google("google_auth_httplib2").AuthorizedHttp(
        credentials, http=_google("httplib2").Http(timeout=TIMEOUT_SECONDS))
    return _google("googleapiclient.discovery").build(api, version, http=http, static_discovery=True,
                                                        cache_discovery=False)


def answer_message(content: bytes, status: int) -> str:
    """gaxios' message for an answer with an error status: Google's own `error.message`, else its generic one."""
    try:
        body = json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):  # the token endpoint's OAuth error ("invalid_grant")
        return error
    return f"Request failed with status code {status}"


def failure_message(exc: BaseException) -> str | None:
    """The `error.message` the reference would have caught for this failure of the call (Google's answer, the network,
    the sign-in); None for anything else, which is a bug of ours and not the model's to read."""
    if isinstance(exc, MessageError):
        return exc.message
    if isinstance(exc, _google("googleapiclient.errors").HttpError):
        return answer_message(exc.content or b"", int(exc.resp.status))
    if isinstance(exc, _google("google.auth.exceptions").RefreshError):
        response = exc.args[1] if len(exc.args) > 1 else None
        if isinstance(response, dict) and isinstance(response.get("error"), str):
            return str(response["error"])
        return str(exc.args[0]) if exc.args else "invalid_grant"
    if isinstance(exc, (OSError, _google("httplib2").HttpLib2Error, _google("google.auth.exceptions").GoogleAuthError)):
        # Node's fetch names the URL and the system's error code here; the words are ours, the sense the same.
        return f"request to Google failed, reason: {exc}"
    return None


class Caller:
    """Runs the blocking client's requests in a worker thread, one at a time (httplib2 is not thread-safe)."""

    def __init__(self, user: UserCredentials) -> None:
        self.user = user
        self._lock = threading.Lock()
        self._services: dict[tuple[str, str], Any] = {}

    def service(self, api: str, version: str) -> Any:
        key = (api, version)
        if key not in self._services:
            self._services[key] = build(api, version, self.user)
        return self._services[key]

    def _locked(self, work: Callable[[], T]) -> T:
        with self._lock:
            if not (self.user.access_token or self.user.refresh_token):
                raise MessageError(NO_CREDENTIALS)
            return work()

    async def run(self, work: Callable[[], T]) -> T:
        return await anyio.to_thread.run_sync(self._locked, work)
