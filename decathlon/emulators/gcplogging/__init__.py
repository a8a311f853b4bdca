"""An emulated Google Cloud Logging v2 (gRPC), for the tasks whose scripts and MCP server use
google-cloud-logging: `python -m decathlon.emulators.gcplogging --root ROOT [--host H] [--port N]`.

It serves google.logging.v2.ConfigServiceV2 (log buckets and sinks) and LoggingServiceV2 (write, list with the
Logging query language, list and delete logs) on plaintext HTTP/2 behind the SaaS front, which terminates TLS
for logging.googleapis.com. State lives in the process only: each episode starts empty (but for the _Default
and _Required buckets every project has).

Modules: `server` (gRPC, routing, request log, ready line), `config_service` and `logging_service` (the RPCs),
`store` (the state), `filter` (the query language, free of grpc), `names` (resource names), `messages` (the
protobuf classes from google-cloud-logging's own types), `errors`.
"""
