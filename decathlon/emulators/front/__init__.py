"""The SaaS front: how an episode's unmodified clients reach its emulators at the vendors' real host names.

An HTTPS proxy on the episode's loopback (the variables of `decathlon.sandbox.saas` point every process of the
episode at it: HTTPS_PROXY and the trust variables). A CONNECT to a host an emulator serves is answered
200, TLS is terminated with a leaf certificate for that host signed by the episode's own CA (made in memory
at start; only its certificate is written), and the decrypted bytes go to the emulator's plain port
(HTTP/1.1, or h2c for gRPC). The emulators start on first use, or at once for the services the task names.
A host nothing emulates is refused at once with a 502 naming it: offline failures stay honest, never a hang.

Why a proxy rather than host names mapped to the loopback: it needs no root, no port 443, no private
/etc/hosts and no mount namespace, so it works the same on the local backend, in compose and in prime
sandboxes; every client the tasks use honours the proxy variables (requests, httplib2, httpx, gRPC, the
Snowflake connector, curl, git) and the MCP servers get them from our launcher.
"""
