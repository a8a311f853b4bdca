"""What every emulated application needs once: the process around it (`runtime`: command line, ready line,
signals, control socket, exit codes), vendor-shaped errors that never carry a traceback (`failure`, `errors`: one
middleware answers an unknown path, an oversized body and a bug in each vendor's `Shape`), request parameters in the
Rails and PHP dialects with typed reads (`params`), the request log (`reqlog`), the clock (`clock`), ids in a vendor's
own format from a per-episode seed (`ids`), paging (`paging`), the vendor's own API description (`discovery`), and the
grader's control channel: state as folders (`state`, `plain`), its socket (`control`) and the grader's client
(`control_client`).

An emulator is a package `decathlon.emulators.<name>` with a descriptor (`vendor.py`, read by
decathlon.emulators.registry) and a `__main__` that calls `runtime.main(EMULATOR)`; it listens on 127.0.0.1 (plain
HTTP, h2c gRPC, or the protocols a local service speaks; the SaaS front in decathlon.emulators.front terminates TLS
for a vendor reached at its host names), prints `ready <name> {"<port>": N, ...}` once it accepts connections, and
stops on SIGTERM.
"""
