"""Google Cloud Logging v2, over gRPC."""
from decathlon.emulators.vendor import Host, System, Vendor

VENDOR = Vendor(
    name="gcplogging",
    title="Google Cloud Logging",
    reach="front",
    protocol="gRPC",
    hosts=(Host("logging.googleapis.com", "h2"),),
    servers=("google-cloud",),
    systems=(System("gcp-logging", "Cloud Logging", modules=("google.cloud.logging", "google.cloud.logging_v2"),
                    hosts=(r"logging\.googleapis\.com",), emulator="gcplogging", front=True),),
    # Signed in with Google Cloud's service account (the gcp vendor writes it).
    credentials=None,
    surface="Logging v2: ConfigServiceV2 (buckets, sinks), LoggingServiceV2 (write, list with the query language, "
            "list and delete logs)",
    describes="google-cloud-logging's protobuf service descriptors",
)
