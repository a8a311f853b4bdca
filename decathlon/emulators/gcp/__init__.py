"""Google Cloud offline: one aiohttp process serving BigQuery v2 REST (on DuckDB, GoogleSQL transpiled with
sqlglot), the Cloud Storage JSON API (+ the XML-style media path signed URLs use) and the OAuth2 token endpoint,
sharing one episode's state so that a BigQuery extract to gs:// lands in the Storage store.

Requests are routed by path, never by Host: the SaaS front forwards `bigquery.googleapis.com`,
`storage.googleapis.com` and `oauth2.googleapis.com` here unchanged, and clients pointed at the emulator
directly (`api_endpoint`, `BIGQUERY_EMULATOR_HOST`, `STORAGE_EMULATOR_HOST`) send the same paths.
"""
