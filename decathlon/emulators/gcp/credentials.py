"""The Google credentials an emulated episode's scripts and servers read, every form a checkout's code uses:

- `gcp-service_account.keys.json`: a service account with the episode's real RSA key (the clients sign their token
  requests with it, as they would), whose `project_id` is the episode's project;
- `google_credentials.json`: an authorized-user token (google-auth's own form) with an `expiry` far ahead;
- `google_cloud_credentials.json`: the OAuth token file a later revision of the checkout reads for Google Cloud
  (`access_token`, `refresh_token`, `client_id`, `client_secret`, `scope`), which then finds its project through
  Cloud Resource Manager (emulated: decathlon.emulators.gcp.resourcemanager).

- `gcp-oauth.keys.json`: the OAuth client as Google's console downloads it (`{"installed": {...}}`), which the
  Calendar server reads from its sign-in folder (decathlon.emulators.workspace.vendor), beside a copy of the
  authorized user; the Forms server gets the same client and refresh token as the token_key_session's
  `google_client_id`, `google_client_secret`, `google_refresh_token`.

All point at oauth2.googleapis.com, which the emulator answers: a token without an expiry is refreshed there."""
from __future__ import annotations

import json
from pathlib import Path

PROJECT_ID = "decathlon-emulated"
SERVICE_ACCOUNT = f"decathlon-agent@{PROJECT_ID}.iam.gserviceaccount.com"
USER_EMAIL = "decathlon-agent@decathlon.example"
TOKEN_URI = "https://oauth2.googleapis.com/token"
CLIENT_ID = "100000000001-decathlon.apps.googleusercontent.com"
CLIENT_SECRET = "GOCSPX-decathlon-emulated"
ACCESS_TOKEN = "ya29.decathlon-emulated-token"
REFRESH_TOKEN = "1//decathlon-emulated-refresh"
FAR_AHEAD = "2099-12-31T23:59:59Z"
SCOPES = ("https://www.googleapis.com/auth/drive", "https://www.googleapis.com/auth/spreadsheets",
          "https://www.googleapis.com/auth/forms.body", "https://www.googleapis.com/auth/calendar",
          "https://www.googleapis.com/auth/cloud-platform")
SERVICE_ACCOUNT_FILE = "gcp-service_account.keys.json"
USER_FILE = "google_credentials.json"
CLOUD_TOKEN_FILE = "google_cloud_credentials.json"


def service_account(key: str) -> str:
    return json.dumps({
        "type": "service_account", "project_id": PROJECT_ID, "private_key_id": "0" * 40, "private_key": key,
        "client_email": SERVICE_ACCOUNT, "client_id": "100000000000000000001",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": TOKEN_URI,
        "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "client_x509_cert_url": f"https://www.googleapis.com/robot/v1/metadata/x509/{SERVICE_ACCOUNT}",
        "universe_domain": "googleapis.com"}, indent=2)


def authorized_user() -> str:
    return json.dumps({
        "token": ACCESS_TOKEN, "refresh_token": REFRESH_TOKEN, "token_uri": TOKEN_URI,
        "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "scopes": list(SCOPES),
        "universe_domain": "googleapis.com", "account": "", "expiry": FAR_AHEAD}, indent=2)


def oauth_client() -> str:
    return json.dumps({"installed": {
        "client_id": CLIENT_ID, "project_id": PROJECT_ID, "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": TOKEN_URI, "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "client_secret": CLIENT_SECRET, "redirect_uris": ["http://localhost"]}}, indent=2)


def oauth_token_file() -> str:
    """The shape of an OAuth 2.0 token response saved as it came (what `google_cloud_credentials.json` holds)."""
    return json.dumps({
        "access_token": ACCESS_TOKEN, "refresh_token": REFRESH_TOKEN, "token_type": "Bearer", "expires_in": 3599,
        "scope": " ".join(SCOPES), "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "token_uri": TOKEN_URI},
        indent=2)


def write(configs: Path, key: str) -> dict[str, str]:
    return {SERVICE_ACCOUNT_FILE: service_account(key), USER_FILE: authorized_user(),
            CLOUD_TOKEN_FILE: oauth_token_file()}


def tokens(configs: Path) -> dict[str, str]:
    # Absolute: the agent's servers get a read-only copy of what a token value names in the grader's root
    # (decathlon/sandbox/servers_config.py), and they do not start in it.
    return {
        "gcp_project_id": PROJECT_ID,
        "gcp_service_account_path": str((configs / SERVICE_ACCOUNT_FILE).resolve()),
        "google_oauth2_credentials_path": str((configs / USER_FILE).resolve()),
        "google_oauth2_token_path": str((configs / USER_FILE).resolve()),
        "google_client_id": CLIENT_ID,
        "google_client_secret": CLIENT_SECRET,
        "google_refresh_token": REFRESH_TOKEN,
    }
