"""A fake Prime Intellect sandbox control plane on loopback, for the prime backend's offline proof.

It implements the part of the API the pinned prime-sandboxes SDK (0.5.1) uses: REST under /api/v1
(create, get, list, batch status, delete, bulk delete, per-sandbox gateway auth, error context) and a
gateway (Connect-RPC exec, multipart upload, download). See `faults` for fault injection and `control`
for starting it from tests and benches."""
