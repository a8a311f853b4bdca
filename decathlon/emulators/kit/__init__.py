"""What every emulated application needs once: the service entry point (`serve`), vendor-shaped errors that
never carry a traceback (`errors`), the request log (`reqlog`), the clock (`clock`), ids in a vendor's own
format from a per-episode seed (`ids`), paging (`paging`), and the grader's control channel: state as folders
(`state`, `plain`), its socket (`control`) and the grader's client (`control_client`).

An emulator is a package `decathlon.emulators.<name>` whose `__main__` calls `serve.run(...)`; it listens on
127.0.0.1 (plain HTTP or h2c gRPC; the SaaS front in decathlon.emulators.front terminates TLS for it), prints
`ready <name> {"http": PORT}` once it accepts connections, and stops on SIGTERM.
"""
