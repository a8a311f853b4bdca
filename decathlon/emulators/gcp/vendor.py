"""Google Cloud: BigQuery, Cloud Storage, the OAuth token endpoint and the project discovery scripts call."""
from decathlon.emulators.vendor import Credentials, Host, System, Vendor

VENDOR = Vendor(
    name="gcp",
    title="Google Cloud (BigQuery, Cloud Storage, sign-in, Resource Manager)",
    reach="front",
    protocol="REST",
    hosts=(Host("bigquery.googleapis.com"), Host("storage.googleapis.com"), Host("oauth2.googleapis.com"),
           Host("cloudresourcemanager.googleapis.com")),
    servers=("google-cloud",),
    systems=(
        System("gcp-bigquery", "BigQuery", modules=("google.cloud.bigquery",), hosts=(r"bigquery\.googleapis\.com",),
               apis=("bigquery",), emulator="gcp", front=True),
        System("gcp-storage", "Cloud Storage", modules=("google.cloud.storage",),
               hosts=(r"storage\.googleapis\.com",), apis=("storage",), emulator="gcp", front=True),
        System("google-auth", "Google sign-in",
               modules=("google.oauth2", "google.auth", "google.api_core", "google.cloud"),
               hosts=(r"oauth2\.googleapis\.com", r"cloudresourcemanager\.googleapis\.com"),
               # A script finds its project through Resource Manager, and may ask whom it signed in as (oauth2's
               # userinfo, on www.googleapis.com: not answered, which such scripts take as "no e-mail").
               apis=("cloudresourcemanager", "oauth2"), emulator="gcp", front=True, quiet=True),
    ),
    credentials=Credentials(
        writer="decathlon.emulators.gcp.credentials:write", tokens="decathlon.emulators.gcp.credentials:tokens",
        files=("gcp-service_account.keys.json", "google_credentials.json", "google_cloud_credentials.json"),
        token_files=("gcp_service_account_path", "google_oauth2_credentials_path", "google_oauth2_token_path"),
        real_files=("configs/gcp-service_account.keys.json",)),
    surface="BigQuery v2 (datasets, tables, jobs, GoogleSQL on DuckDB), Cloud Storage JSON API and signed URLs, "
            "OAuth2 token endpoint, Cloud Resource Manager v3 projects.search",
    describes="Google's discovery documents (google-api-python-client): bigquery v2, storage v1",
)
